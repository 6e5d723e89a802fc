/**
 * `npm run bench [-- --json] [--only=a,b] [--quick] [--no-skip]`: every performance figure in one run,
 * one object of named figures. `--quick` runs every group at small sizes (`size.ts`); `--no-skip`
 * counts a group that cannot run here (no control plane, no distribution) as failed, as CI does.
 * Each area exports `bench(): Promise<Record<string, number>>`; the set is an explicit map
 * (docs/testing.md "Bench"). Tests never assert on timing; this is where timing lives.
 */
import { performance } from "node:perf_hooks";
import { inspect } from "node:util";
import { BenchSkipped } from "./skipped.js";

type Bench = () => Promise<Record<string, number>>;

/** A group may export `targets`: figure name → the target printed beside it (`< 5000`). */
const AREAS: Record<string, () => Promise<{ bench: Bench; targets?: Record<string, string> }>> = {
  policy: () => import("./policy.js"),
  edit: () => import("./edit.js"),
  "set-image": () => import("./set-image.js"),
  registry: () => import("./registry.js"),
  plan: () => import("./plan.js"),
  "registry-credentials": () => import("./registry-credentials.js"),
  app: () => import("./app.js"),
  reconcile: () => import("./reconcile.js"),
  "reconcile-real": () => import("./reconcile-real.js"),
  reliability: () => import("./reliability.js"),
  intake: () => import("./intake.js"),
  signatures: () => import("./signatures.js"),
  scale: () => import("./scale.js"),
  "many-apps": () => import("./many-apps.js"),
  diff: () => import("./diff.js"),
  startup: () => import("./startup.js"),
  "plan-renovate": () => import("./plan-renovate.js"),
  soak: () => import("./soak.js"),
};

/** An error's first line with its causes' (`fetch failed: other side closed`), as one line. */
function oneLine(error: unknown): string {
  const parts: string[] = [];
  for (let cause: unknown = error; cause instanceof Error && parts.length < 5; cause = cause.cause)
    parts.push(cause.message.split("\n")[0]!);
  return parts.length > 0 ? parts.join(": ") : String(error);
}

async function main(): Promise<void> {
  const json = process.argv.includes("--json");
  const noSkip = process.argv.includes("--no-skip");
  const only = process.argv
    .find((arg) => arg.startsWith("--only="))
    ?.slice("--only=".length)
    .split(",");
  const figures: Record<string, number> = {};
  const targets: Record<string, string> = {};
  const failures: Record<string, string> = {};
  const skipped: Record<string, string> = {};
  for (const [area, load] of Object.entries(AREAS)) {
    if (only && !only.includes(area)) continue;
    const started = performance.now();
    try {
      const loaded = await load();
      const result = await loaded.bench();
      Object.assign(figures, result);
      const areaTargets = Object.fromEntries(
        Object.entries(loaded.targets ?? {}).filter(([name]) => name in result),
      );
      Object.assign(targets, areaTargets);
      if (!json) {
        process.stdout.write(`\n== ${area} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
        for (const [name, value] of Object.entries(result)) {
          const target = areaTargets[name] ? `  (target ${areaTargets[name]})` : "";
          process.stdout.write(`  ${name.padEnd(56)} ${format(value)}${target}\n`);
        }
      }
    } catch (error) {
      if (error instanceof BenchSkipped && !noSkip) {
        skipped[area] = error.message;
        if (!json) process.stdout.write(`\n== ${area}: SKIPPED: ${skipped[area]}\n`);
        continue;
      }
      failures[area] = oneLine(error);
      if (!json) process.stdout.write(`\n== ${area}: FAILED: ${failures[area]}\n`);
      // Where it failed, for whoever reads the log: the figures' output keeps the one line.
      process.stderr.write(`${area}: ${inspect(error)}\n`);
    }
  }
  if (json) process.stdout.write(`${JSON.stringify({ figures, targets, failures, skipped }, null, 2)}\n`);
  // Exit now rather than when the event loop drains: a group that failed half-way may leave a
  // server or a socket open, and the bench (in CI too) must end with its figures, not hang.
  process.exit(Object.keys(failures).length > 0 ? 1 : 0);
}

function format(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

await main();
