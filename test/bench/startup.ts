/**
 * Start-up: each command as a whole process from the built CLI (`dist/cli.js`, `npm run build`, as
 * the bin and the image run it), doing its work, beside a bare `node -e 0` in the same run (goal:
 * within 3×, issue #33). Runs alternate (command, `node -e 0`, command, …) so that load on the
 * machine falls on both alike; the figures are the medians and their ratio. `plan` reads a
 * one-image repo from a registry on loopback (the embedded registry, behind a relay that times it):
 * the time the registry spent answering is taken off the plan's wall time.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startEmbeddedRegistry } from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { sized } from "./size.js";
import { BenchSkipped } from "./skipped.js";
import { startTimingRelay } from "./timing-relay.js";
import { median, runWhole } from "./whole-process.js";

const ROOT = join(import.meta.dirname, "..", "..");
/** FERRY_BENCH_CLI: another build's cli.js, to measure a before beside an after. */
const CLI = process.env.FERRY_BENCH_CLI ?? join(ROOT, "dist", "cli.js");
const TAGS = Array.from({ length: 10 }, (_, index) => `1.${index}.0`);

export const targets: Record<string, string> = Object.fromEntries(
  ["select", "set_image", "check_offline", "plan"].map((name) => [`startup.${name}.ratio`, "<= 3"]),
);

/** One whole process of node with `args`: its wall time in ms; throws unless it exits 0. */
async function run(args: string[], cwd: string): Promise<number> {
  return (await runWhole(process.execPath, args, { cwd })).ms;
}

export async function bench(): Promise<Record<string, number>> {
  if (!existsSync(CLI)) throw new BenchSkipped(`${CLI} is not built: npm run build`);
  const registry = await startEmbeddedRegistry();
  const relay = await startTimingRelay(new URL(registry.url));
  const dir = await mkdtemp(join(tmpdir(), "ferry-bench-startup-"));
  try {
    const put = async (path: string, text: string): Promise<void> => {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    };
    for (const tag of TAGS.slice(-3)) await pushImage(registry.url, "bench/app", tag, { content: tag });
    const deployment = (tag: string) =>
      [
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:\n  name: app",
        "spec:\n  template:\n    spec:\n      containers:",
        `        - name: app\n          image: ${relay.host}/bench/app:${tag}`,
        "",
      ].join("\n");
    await put(
      "repo/.github/ferry.yml",
      `images:\n  app:\n    repository: ${relay.host}/bench/app\nenvironments:\n  dev:\n    paths: [envs/dev]\n`,
    );
    await put("repo/envs/dev/deployment.yaml", deployment("1.7.0"));
    await put("tags.txt", `${TAGS.join("\n")}\n`);
    await put("policy.yml", 'range: "^1.0.0"\n');

    // Each command does its work: a choice among 10 tags, an edit of a small file, an offline
    // check of a one-image repo, a plan of it that reads the registry (exit 0: a change to 1.9.0).
    const commands: Record<string, { args: string[]; before?: () => Promise<void>; registry?: true }> = {
      select: { args: ["select", "--policy", "policy.yml", "--tags", "tags.txt"] },
      "set-image": {
        args: ["set-image", "small.yaml", `${relay.host}/bench/app:1.9.0`],
        before: () => put("small.yaml", deployment("1.0.0")),
      },
      "check --offline": { args: ["check", "--offline", "--dir", "repo"] },
      plan: { args: ["plan", "--dir", "repo"], registry: true },
    };
    const pairs = sized(11, 3);
    const figures: Record<string, number> = {};
    const bare: number[] = [];
    const registryMs: number[] = [];
    for (const [name, command] of Object.entries(commands)) {
      const ferry: number[] = [];
      const node: number[] = [];
      // One run unmeasured first: the file system cache and Node's compile cache are warm, as
      // they are for a command run twice.
      await command.before?.();
      await run([CLI, ...command.args], dir);
      for (let pair = 0; pair < pairs; pair++) {
        await command.before?.();
        relay.reset();
        const wall = await run([CLI, ...command.args], dir);
        if (command.registry) registryMs.push(relay.busyMs());
        ferry.push(wall - (command.registry ? relay.busyMs() : 0));
        node.push(await run(["-e", "0"], dir));
      }
      const label = `startup.${name.replace(/ --/g, "_").replace(/-/g, "_")}`;
      const ferryMs = median(ferry);
      const nodeMs = median(node);
      bare.push(...node);
      figures[`${label}.ferry_ms${command.registry ? "_without_registry_time" : ""}`] = Math.round(ferryMs);
      figures[`${label}.node_e_0_ms`] = Math.round(nodeMs);
      figures[`${label}.ratio`] = Math.round((ferryMs / nodeMs) * 100) / 100;
    }
    figures["startup.plan.registry_ms"] = Math.round(median(registryMs));
    figures["startup.node_e_0_ms"] = Math.round(median(bare));
    return figures;
  } finally {
    await rm(dir, { recursive: true, force: true });
    await relay.close();
    await registry.close();
  }
}
