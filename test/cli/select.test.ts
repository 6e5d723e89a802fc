import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFerry } from "../support/cli-io.js";

const NOW = new Date("2024-06-01T12:00:00Z");

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ferry-select-"));
  await writeFile(join(dir, "policy.yml"), 'range: "^1.0.0"\n');
  await writeFile(join(dir, "tags.txt"), "1.0.0\n1.8.0\n2.0.0\nlatest\n\n1.7.3\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function ferry(args: string[], stdin = "") {
  return runFerry(["select", ...args], dir, { stdin, now: () => NOW });
}

describe("ferry select", () => {
  it("prints the tag a policy file chooses from a tags file", async () => {
    expect(await ferry(["--policy", "policy.yml", "--tags", "tags.txt"])).toEqual({
      code: 0,
      stdout: "1.8.0\n",
      stderr: "",
    });
  });

  it("says on stderr when --current is outside the policy, and moves back only with allowDowngrade", async () => {
    const kept = await ferry(["--policy", '{range: "1.x"}', "--current", "2.0.0"], "1.8.0\n1.9.0\n2.0.0\n");
    expect(kept.code).toBe(3);
    expect(kept.stderr).toMatch(/^ferry select: running 2\.0\.0 is outside the policy \(semver 1\.x\)/);
    const back = await ferry(
      ["--policy", '{range: "1.x", allowDowngrade: true}', "--current", "2.0.0"],
      "1.8.0\n1.9.0\n2.0.0\n",
    );
    expect(back).toEqual({
      code: 0,
      stdout: "1.9.0\n",
      stderr:
        "ferry select: running 2.0.0 is outside the policy (semver 1.x): allowDowngrade moves it back to 1.9.0\n",
    });
  });

  it("reads inline YAML policy and tags from stdin", async () => {
    const result = await ferry(["--policy", "{strategy: numerical}"], "9\n10\n100\nlatest\n");
    expect(result).toEqual({ code: 0, stdout: "100\n", stderr: "" });
  });

  it("exits 3 with the reason on stderr when current is already the newest", async () => {
    const result = await ferry(["--policy", "policy.yml", "--tags", "tags.txt", "--current", "1.8.0"]);
    expect(result).toEqual({
      code: 3,
      stdout: "",
      stderr: "ferry select: current 1.8.0 is the newest tag semver ^1.0.0 admits\n",
    });
  });

  it("prints a newer tag than --current", async () => {
    expect((await ferry(["--policy", "policy.yml", "--tags", "tags.txt", "--current", "1.7.3"])).stdout).toBe(
      "1.8.0\n",
    );
  });

  it("is not blocked by a current tag the policy cannot read", async () => {
    expect(
      await ferry(["--policy", "policy.yml", "--tags", "tags.txt", "--current", "latest"]),
    ).toMatchObject({ code: 0, stdout: "1.8.0\n" });
  });

  it("exits 3 when no tag is admitted", async () => {
    const result = await ferry(["--policy", 'range: "^5.0.0"'], "1.0.0\n2.0.0\n");
    expect(result).toEqual({
      code: 3,
      stdout: "",
      stderr: "ferry select: semver ^5.0.0 admits none of 2 tags\n",
    });
  });

  it("ignores lines that are not valid OCI tag names", async () => {
    const result = await ferry(["--policy", "{}"], "1.0.0\n9.9.9+evil\n.9.9.9\n");
    expect(result.stdout).toBe("1.0.0\n");
  });

  it("uses the created times of the list for newest-build and minAge", async () => {
    const list =
      "aaaaaaa 2024-06-01T11:30:00Z\nbbbbbbb 2024-05-31T12:00:00Z\ncccccccc 2024-05-01T00:00:00+02:00\n";
    expect((await ferry(["--policy", "strategy: newest-build"], list)).stdout).toBe("aaaaaaa\n");
    expect((await ferry(["--policy", "{strategy: newest-build, minAge: 1h}"], list)).stdout).toBe(
      "bbbbbbb\n",
    );
  });

  it("chooses under a policy that pins digests, since pin says what is written, not which tag wins", async () => {
    for (const pin of ["digest", "digest-only"]) {
      expect(await ferry(["--policy", `{ range: "^1.0.0", pin: ${pin} }`], "1.7.3\n1.8.0\n2.0.0\n")).toEqual({
        code: 0,
        stdout: "1.8.0\n",
        stderr: "",
      });
    }
  });

  it("exits 1 naming the line of a malformed created time", async () => {
    const result = await ferry(["--policy", "{}"], "1.0.0\n1.1.0 yesterday\n");
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'ferry select: stdin:2: invalid created time "yesterday", expected RFC 3339 such as 2024-05-01T12:00:00Z\n',
    );
  });

  it("exits 1 with one line naming the field of a bad policy", async () => {
    const result = await ferry(["--policy", 'range: "not a range"'], "1.0.0\n");
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: 'ferry select: policy.range: invalid semver range: improper constraint: "not a range"\n',
    });
  });

  it("exits 1 when a policy or tags file does not exist", async () => {
    expect(await ferry(["--policy", "missing.yml"])).toMatchObject({
      code: 1,
      stderr: 'ferry select: --policy: no such file "missing.yml"\n',
    });
    expect(await ferry(["--policy", "policy.yml", "--tags", "nope.txt"])).toMatchObject({
      code: 1,
      stderr: 'ferry select: --tags: "nope.txt" no such file\n',
    });
  });

  it("exits 1 for a --current that is not a valid tag", async () => {
    expect((await ferry(["--policy", "{}", "--current", "a b"], "1.0.0\n")).code).toBe(1);
  });

  it("exits 2 for usage mistakes: missing --policy, unknown flag, stray argument", async () => {
    expect((await ferry([])).code).toBe(2);
    expect((await ferry(["--policy", "{}", "--frobnicate"])).code).toBe(2);
    expect((await ferry(["--policy", "{}", "extra"])).code).toBe(2);
  });
});

describe("ferry select as a process", () => {
  it("reads stdin, prints the tag and exits with the documented codes", async () => {
    const run = (args: string[], input: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          "npx",
          ["tsx", "src/cli.ts", "select", ...args],
          { cwd: process.cwd(), timeout: 60_000 },
          (error, stdout, stderr) => {
            resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr });
          },
        );
        child.stdin!.end(input);
      });
    expect(await run(["--policy", 'range: "^1.0.0"'], "1.0.0\n1.8.0\n2.0.0\n")).toMatchObject({
      code: 0,
      stdout: "1.8.0\n",
    });
    const none = await run(["--policy", 'range: "^1.0.0"', "--current", "1.8.0"], "1.0.0\n1.8.0\n");
    expect(none.code).toBe(3);
    expect(none.stderr).toContain("current 1.8.0 is the newest tag");
    // ^(a+)+$ backtracks exponentially in a backtracking engine; RE2 matches in linear time.
    const nearMisses = Array.from({ length: 50 }, (_, i) => `${"a".repeat(60 + i)}b`).join("\n");
    const catastrophic = await run(
      ["--policy", '{strategy: alphabetical, allow: "^(a+)+$"}'],
      `${nearMisses}\naaa\n`,
    );
    expect(catastrophic).toMatchObject({ code: 0, stdout: "aaa\n" });
  });
});
