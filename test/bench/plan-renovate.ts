/**
 * Issue #33 goal 4's peer figure: a one-image `ferry plan` beside Renovate finding the same update
 * in the same repo, each a whole process, in turns (Ferry, Renovate, Ferry, …) after one unmeasured
 * run of each. The repo holds one Deployment whose image is on a registry on loopback (the embedded
 * registry behind the timing relay) with 1.9.0 newer than the 1.7.0 it runs; Ferry reads its
 * `.github/ferry.yml`, Renovate its `renovate.json` (the kubernetes manager over the manifests) with
 * `--platform=local --dry-run=lookup`, the lookup Renovate does before it would open a branch.
 * Both must find 1.9.0 (Ferry's plan says so, Renovate's JSON report lists it), or the run fails.
 * Renovate is installed from the npm registry into ~/.cache/ferry on first use and runs on Node 24
 * (the image's, where this Node is older), with its proxy set to a closed loopback port, so that it
 * cannot reach anything but the registry here.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startEmbeddedRegistry } from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { sized } from "./size.js";
import { BenchSkipped } from "./skipped.js";
import { startTimingRelay } from "./timing-relay.js";
import { median, runWhole } from "./whole-process.js";

const RENOVATE_VERSION = "44.121.2";
const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli.js");

export const targets: Record<string, string> = { "plan_renovate.ferry_over_renovate_ratio": "<= 0.1" };

const cacheDir = (): string => join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "ferry");

/**
 * The Node that runs Renovate, which needs 24.11 or later: this one, or on an older line (the suite
 * on Node 22) the image's, which test/support/node-lts.sh provisions and names, as for the suite.
 */
function renovateNode(): string {
  if (Number(process.versions.node.split(".")[0]) >= 24) return process.execPath;
  const version = /^ARG NODE_VERSION=(\S+)$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"))?.[1];
  if (!version) throw new Error("Dockerfile: no ARG NODE_VERSION");
  return execFileSync(
    "bash",
    ["-c", 'eval "$(bash "$0")" && command -v node', join(ROOT, "test", "support", "node-lts.sh")],
    {
      env: { ...process.env, FERRY_NODE_VERSION: version },
      encoding: "utf8",
    },
  ).trim();
}

/** Renovate's entry script, installed once into the cache (npm) when it is missing. */
function renovateEntry(): string {
  const prefix = join(cacheDir(), `renovate-${RENOVATE_VERSION}`);
  const entry = join(prefix, "node_modules", "renovate", "dist", "renovate.js");
  if (existsSync(entry)) return entry;
  // No install scripts: Renovate falls back from its native RE2 to RegExp, and builds nothing.
  execFileSync(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--prefix",
      prefix,
      `renovate@${RENOVATE_VERSION}`,
    ],
    { stdio: "ignore" },
  );
  if (!existsSync(entry)) throw new Error(`npm installed renovate@${RENOVATE_VERSION} without ${entry}`);
  return entry;
}

/** The newest version Renovate's report proposes for the image, if any. */
function renovateProposal(reportFile: string, image: string): string | undefined {
  const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
    repositories?: Record<
      string,
      {
        packageFiles?: Record<
          string,
          { deps?: { depName?: string; updates?: { newVersion?: string }[] }[] }[]
        >;
      }
    >;
  };
  for (const repository of Object.values(report.repositories ?? {}))
    for (const files of Object.values(repository.packageFiles ?? {}))
      for (const file of files)
        for (const dep of file.deps ?? []) if (dep.depName === image) return dep.updates?.[0]?.newVersion;
  return undefined;
}

export async function bench(): Promise<Record<string, number>> {
  if (!existsSync(CLI)) throw new BenchSkipped(`${CLI} is not built: npm run build`);
  const renovate = renovateEntry();
  const renovateNodeBinary = renovateNode();
  const registry = await startEmbeddedRegistry();
  const relay = await startTimingRelay(new URL(registry.url));
  const dir = await mkdtemp(join(tmpdir(), "ferry-bench-plan-renovate-"));
  try {
    const repo = join(dir, "repo");
    const put = async (path: string, text: string): Promise<void> => {
      await mkdir(dirname(join(repo, path)), { recursive: true });
      await writeFile(join(repo, path), text);
    };
    for (const tag of ["1.7.0", "1.8.0", "1.9.0"])
      await pushImage(registry.url, "bench/app", tag, { content: tag });
    const image = `${relay.host}/bench/app`;
    await put(
      "envs/dev/deployment.yaml",
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n" +
        `      containers:\n        - name: app\n          image: ${image}:1.7.0\n`,
    );
    await put(
      ".github/ferry.yml",
      `images:\n  app:\n    repository: ${image}\nenvironments:\n  dev:\n    paths: [envs/dev]\n`,
    );
    await put(
      "renovate.json",
      JSON.stringify({
        kubernetes: { managerFilePatterns: ["/\\.yaml$/"] },
        hostRules: [{ matchHost: relay.host, insecureRegistry: true }],
      }),
    );
    const gitEnv = {
      PATH: process.env.PATH,
      HOME: dir,
      GIT_AUTHOR_NAME: "bench",
      GIT_AUTHOR_EMAIL: "bench@example.com",
      GIT_COMMITTER_NAME: "bench",
      GIT_COMMITTER_EMAIL: "bench@example.com",
    };
    for (const args of [
      ["init", "-q", "-b", "main"],
      ["add", "."],
      ["commit", "-q", "-m", "bench"],
    ])
      execFileSync("git", args, { cwd: repo, env: gitEnv });

    const ferryRun = async () => {
      const { ms, output } = await runWhole(process.execPath, [CLI, "plan", "--dir", "."], {
        cwd: repo,
        env: gitEnv,
      });
      if (!output.includes("1.9.0")) throw new Error(`ferry plan did not propose 1.9.0: ${output.trim()}`);
      return ms;
    };
    let renovateRuns = 0;
    const renovateRun = async () => {
      // A base directory of its own each run: no lookup cached from the last, as Ferry has none.
      const base = join(dir, `renovate-${renovateRuns++}`);
      const report = `${base}.json`;
      const { ms } = await runWhole(
        renovateNodeBinary,
        [
          renovate,
          "--platform=local",
          "--dry-run=lookup",
          "--onboarding=false",
          "--require-config=optional",
          "--report-type=file",
          `--report-path=${report}`,
        ],
        {
          cwd: repo,
          env: {
            ...gitEnv,
            LOG_LEVEL: "warn",
            RENOVATE_BASE_DIR: base,
            HTTP_PROXY: "http://127.0.0.1:9",
            HTTPS_PROXY: "http://127.0.0.1:9",
            NO_PROXY: "127.0.0.1,localhost",
          },
        },
      );
      const proposed = renovateProposal(report, image);
      if (proposed !== "1.9.0")
        throw new Error(`Renovate proposed ${proposed ?? "nothing"} for ${image}, not 1.9.0`);
      return ms;
    };

    await ferryRun();
    await renovateRun();
    const pairs = sized(7, 2);
    const ferry: number[] = [];
    const peer: number[] = [];
    const ferryRegistry: number[] = [];
    const peerRegistry: number[] = [];
    const ferryRequests: number[] = [];
    const peerRequests: number[] = [];
    for (let pair = 0; pair < pairs; pair++) {
      relay.reset();
      ferry.push(await ferryRun());
      ferryRegistry.push(relay.busyMs());
      ferryRequests.push(relay.requests());
      relay.reset();
      peer.push(await renovateRun());
      peerRegistry.push(relay.busyMs());
      peerRequests.push(relay.requests());
    }
    const ferryMs = median(ferry);
    const renovateMs = median(peer);
    return {
      "plan_renovate.ferry_plan_ms": Math.round(ferryMs),
      "plan_renovate.renovate_lookup_ms": Math.round(renovateMs),
      "plan_renovate.ferry_over_renovate_ratio": Math.round((ferryMs / renovateMs) * 1000) / 1000,
      "plan_renovate.ferry_registry_ms": Math.round(median(ferryRegistry)),
      "plan_renovate.renovate_registry_ms": Math.round(median(peerRegistry)),
      "plan_renovate.ferry_registry_requests": median(ferryRequests),
      "plan_renovate.renovate_registry_requests": median(peerRequests),
      "plan_renovate.pairs": pairs,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await relay.close();
    await registry.close();
  }
}
