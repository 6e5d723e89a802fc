/** `ferry sandbox` output and exit codes, with a canned story (the real one runs once, in story.test.ts). */
import { describe, expect, it } from "vitest";
import { main } from "../../../src/cli.js";
import type { CliIo } from "../../../src/cli/io.js";
import { run } from "../../../packages/sandbox/src/command.js";
import type {
  SandboxJson,
  SandboxStory,
  SandboxStoryOptions,
  StepResult,
} from "../../../packages/sandbox/src/story/index.js";
import { captureIo } from "../../support/cli-io.js";

function capture(): { io: CliIo; out: () => string; err: () => string } {
  const io = captureIo(process.cwd());
  return { io, out: () => io.out, err: () => io.err };
}

const ENDPOINTS = {
  github: "http://127.0.0.1:1001",
  repositories: { "acme/shop-config": "http://127.0.0.1:1001/repos/acme/shop-config" },
  registry: "127.0.0.1:1002",
  cluster: "http://127.0.0.1:1003",
  status: "http://127.0.0.1:1004/status",
  tokens: { mona: "token-of-mona", hubot: "token-of-hubot", eve: "token-of-eve" },
};

/** A story that "runs" the given steps, reporting each as it goes, and records what it was asked. */
function cannedStory(steps: StepResult[]) {
  const calls = { options: undefined as SandboxStoryOptions | undefined, closed: 0 };
  const runStory = async (options: SandboxStoryOptions): Promise<SandboxStory> => {
    calls.options = options;
    steps.forEach((step, index) => options.onStep?.(step, index));
    return {
      steps,
      environments: [
        {
          environment: "staging",
          version: "1.8.0",
          digest: `sha256:${"1".repeat(64)}`,
          sync: "Synced",
          health: "Healthy",
          held: false,
        },
      ],
      endpoints: ENDPOINTS,
      ok: steps.every((step) => step.ok),
      close: async () => void calls.closed++,
    };
  };
  return { runStory, calls };
}

const passing: StepResult[] = [
  { name: "push", ok: true, ms: 12, detail: "pushed shop:1.8.0" },
  { name: "staging-pr", ok: true, ms: 34, detail: "#1 merged" },
];

describe("ferry sandbox", () => {
  it("prints a line per step as it finishes, then the summary, and exits 0", async () => {
    const { io, out } = capture();
    const { runStory, calls } = cannedStory(passing);
    expect(await run([], io, { runStory })).toBe(0);
    expect(out()).toMatch(
      /✓ +0\. push +12 ms {2}pushed shop:1\.8\.0\n✓ +1\. staging-pr +34 ms {2}#1 merged\n/,
    );
    expect(out()).toMatch(/environment +version +digest +sync +health +held\n/);
    expect(out()).not.toContain("token-of-mona");
    expect(calls.options?.keep).toBe(false);
    expect(calls.closed).toBe(1);
  });

  it("exits 1 and names the step that failed", async () => {
    const { io, err } = capture();
    const { runStory, calls } = cannedStory([
      passing[0]!,
      { name: "staging-pr", ok: false, ms: 15_000, detail: "timed out waiting for the PR" },
    ]);
    expect(await run([], io, { runStory })).toBe(1);
    expect(err()).toContain('step "staging-pr" failed: timed out waiting for the PR');
    expect(calls.closed).toBe(1);
  });

  it("with --json prints only the timeline document, endpoints included with --keep", async () => {
    const plain = capture();
    await run(["--json"], plain.io, cannedStory(passing));
    const document = JSON.parse(plain.out()) as SandboxJson;
    expect(document.steps).toEqual(passing);
    expect(document.endpoints).toBeUndefined();

    const kept = capture();
    await run(["--json", "--keep"], kept.io, {
      ...cannedStory(passing),
      untilStopped: async () => undefined,
    });
    expect((JSON.parse(kept.out()) as SandboxJson).endpoints).toEqual(ENDPOINTS);
  });

  it("with --keep prints the endpoints and user tokens, stays up until stopped, then shuts everything down", async () => {
    const { io, out } = capture();
    const { runStory, calls } = cannedStory(passing);
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const exit = run(["--keep"], io, { runStory, untilStopped: () => stopped });
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.options?.keep).toBe(true);
    for (const value of [
      "http://127.0.0.1:1001",
      "127.0.0.1:1002",
      "http://127.0.0.1:1003",
      "http://127.0.0.1:1004/status",
      "token-of-mona",
      "token-of-hubot",
      "token-of-eve",
    ]) {
      expect(out()).toContain(value);
    }
    expect(calls.closed).toBe(0);
    stop();
    expect(await exit).toBe(0);
    expect(calls.closed).toBe(1);
  });

  it("refuses an unknown flag as a usage error", async () => {
    const { io, err } = capture();
    expect(await main(["sandbox", "--nope"], io)).toBe(2);
    expect(err()).toContain("--nope");
  });
});
