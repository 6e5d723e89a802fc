/**
 * `ferry sandbox [--json] [--keep]` (docs/architecture.md "The sandbox"): runs the release of shop
 * end to end on embedded parts and prints a line per step, then the summary table; `--json` prints
 * the timeline as one JSON document instead. `--keep` leaves everything running, prints the
 * endpoints and tokens, and stays up until SIGINT/SIGTERM. Exits 0, or 1 naming the failed step.
 */
import { parseArgs } from "node:util";
// The story itself (emulators, Probot, the cluster simulator) loads only once the tools are known present.
import type { SandboxStory, SandboxStoryOptions } from "./story/index.js";
import { failedStep, formatEndpoints, formatStepLine, formatSummary, toJson } from "./story/timeline.js";
import {
  EXIT,
  findExecutable,
  findRenderer,
  MISSING_RENDERER_HELP,
  type CliIo,
} from "../../../src/embedding.js";

/** What the real story needs on this machine, said at once instead of after a step's timeout. */
export function missingTools(searchPath: string | undefined): string[] {
  const missing: string[] = [];
  if (!findExecutable("git", searchPath))
    missing.push("git is not on PATH: install git (https://git-scm.com/downloads)");
  if (!findRenderer(searchPath)) missing.push(MISSING_RENDERER_HELP);
  return missing;
}

export interface SandboxCliHooks {
  /** The story to run (tests pass a canned one); default: the real one. */
  runStory?: (options: SandboxStoryOptions) => Promise<SandboxStory>;
  /** Resolves when a `--keep` sandbox should shut down; default: the first SIGINT or SIGTERM. */
  untilStopped?: () => Promise<void>;
}

export async function run(args: string[], io: CliIo, hooks: SandboxCliHooks = {}): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      json: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
    },
  });
  const json = values.json === true;
  const keep = values.keep === true;
  if (!hooks.runStory) {
    // The story's git and reconcilers run with this process's PATH, not the CLI's io.env.
    const missing = missingTools(process.env.PATH);
    for (const line of missing) io.stderr(`ferry sandbox: ${line}\n`);
    if (missing.length > 0) return EXIT.invalid;
  }
  const runStory = hooks.runStory ?? (await import("./story/index.js")).runSandboxStory;
  if (!json) io.stdout(`ferry sandbox: the release of shop 1.8.0 on embedded parts\n`);
  // Ctrl-C during the story ends it early and still shuts everything down (no temp files left).
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  if (!hooks.runStory) {
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
  }
  const story = await runStory({
    keep,
    signal: interrupt.signal,
    onStep: (step, index) => {
      if (!json) io.stdout(formatStepLine(step, index));
    },
    log: (text) => io.stderr(text),
  });
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  try {
    const failed = failedStep(story.steps);
    if (json) {
      io.stdout(
        `${JSON.stringify(toJson(story.steps, story.environments, keep ? story.endpoints : undefined), null, 2)}\n`,
      );
    } else {
      io.stdout(`\n${formatSummary(story.environments)}`);
      if (keep) io.stdout(`\n${formatEndpoints(story.endpoints)}\nthe sandbox stays up; Ctrl-C to stop\n`);
    }
    if (failed) io.stderr(`ferry sandbox: step "${failed.name}" failed: ${failed.detail}\n`);
    if (keep && !interrupt.signal.aborted) await (hooks.untilStopped ?? untilSignal)();
    return failed || !story.ok ? EXIT.invalid : EXIT.ok;
  } finally {
    await story.close();
  }
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
