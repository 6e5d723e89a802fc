import { describe, expect, it } from "vitest";
import { checkConfigOnDefaultBranch, checkConfigPullRequest } from "../../src/app/check-config.js";
import { BROKEN_CONFIG_TITLE } from "../../src/core/pr/check-run.js";
import { CONFIG, configRepo, FakeGitHub, FakeRegistry, fakeDeps } from "../support/app-fakes.js";

const BROKEN = "images: {}\nenvironments:\n  prod:\n    paths: [overlays/prod]\n    soak: 30 minutes\n";

/** The fake repo's config plus an image `api` that only the prod overlay runs. */
const WITH_API = CONFIG.replace(
  "environments:",
  '  api:\n    repository: ghcr.io/acme/api\n    policy: { range: "^2.0.0" }\nenvironments:',
);
const PROD_WITH_API = `${configRepo()["overlays/prod/kustomization.yaml"]}  - name: ghcr.io/acme/api\n    newTag: "2.1.0"\n`;

/** 1-based line and column of the `[` that opens `environment`'s paths list in `text`. */
function pathsPosition(text: string, paths: string): { line: number; column: number } {
  const lines = text.split("\n");
  const index = lines.findIndex((line) => line.trim() === `paths: [${paths}]`);
  return { line: index + 1, column: lines[index]!.indexOf("[") + 1 };
}

async function checkPull(github: FakeGitHub, files: Record<string, string>) {
  const head = github.push("main", files);
  github.calls.length = 0;
  const conclusion = await checkConfigPullRequest(fakeDeps(github, new FakeRegistry()), {
    headSha: head,
    changedFiles: Object.keys(files),
  });
  return { conclusion, run: github.checkRuns.at(-1)! };
}

describe("ferry/config check", () => {
  it("annotates the offending line of a PR that breaks ferry.yml", async () => {
    const github = new FakeGitHub(configRepo());
    const head = github.push("main", { ".github/ferry.yml": BROKEN });
    const conclusion = await checkConfigPullRequest(fakeDeps(github, new FakeRegistry()), {
      headSha: head,
      changedFiles: [".github/ferry.yml"],
    });
    expect(conclusion).toBe("failure");
    expect(github.checkRuns[0]!.name).toBe("ferry/config");
    expect(github.checkRuns[0]!.annotations.map((a) => [a.path, a.start_line])).toContainEqual([
      ".github/ferry.yml",
      5,
    ]);
  });

  it("fails the check of a PR whose ferry.yml is too large to read, saying why, instead of posting nothing", async () => {
    const github = new FakeGitHub(configRepo());
    const huge = `${CONFIG}# ${"x".repeat(5 * 1024 * 1024)}\n`;
    const { conclusion, run } = await checkPull(github, { ".github/ferry.yml": huge });
    expect(conclusion).toBe("failure");
    expect(run).toMatchObject({ name: "ferry/config", conclusion: "failure" });
    expect(run.annotations).toEqual([
      expect.objectContaining({
        path: ".github/ferry.yml",
        start_line: 1,
        annotation_level: "failure",
        message: "config is larger than 262144 bytes, too large to read",
      }),
    ]);
    // Just over the config's own limit, the schema check says the same.
    const over = `${CONFIG}# ${"x".repeat(256 * 1024)}\n`;
    const second = await checkPull(github, { ".github/ferry.yml": over });
    expect(second.conclusion).toBe("failure");
    expect(second.run.annotations[0]?.message).toMatch(/^config is larger than 262144 bytes/);
  });

  it("warns on the staging paths line when the config names an image the staging overlay does not reference", async () => {
    const github = new FakeGitHub(configRepo());
    const { conclusion, run } = await checkPull(github, {
      ".github/ferry.yml": WITH_API,
      "overlays/prod/kustomization.yaml": PROD_WITH_API,
    });
    expect(conclusion).not.toBe("failure");
    expect(run.conclusion).toBe(conclusion);
    const { line, column } = pathsPosition(WITH_API, "overlays/staging");
    expect(run.annotations).toEqual([
      expect.objectContaining({
        path: ".github/ferry.yml",
        start_line: line,
        end_line: line,
        start_column: column,
        end_column: column,
        annotation_level: "warning",
        message: expect.stringMatching(/image api .*not referenced in environment staging/),
      }),
    ]);
  });

  it("reads the environment files from the PR head, not the default branch", async () => {
    const github = new FakeGitHub(configRepo());
    // The config is fine once the same PR adds api to the staging overlay too.
    const { conclusion, run } = await checkPull(github, {
      ".github/ferry.yml": WITH_API,
      "overlays/prod/kustomization.yaml": PROD_WITH_API,
      "overlays/staging/kustomization.yaml": PROD_WITH_API,
    });
    expect(conclusion).toBe("success");
    expect(run.annotations).toEqual([]);
  });

  it("still fails a schema error, without reading any environment file", async () => {
    const github = new FakeGitHub(configRepo());
    const { conclusion, run } = await checkPull(github, { ".github/ferry.yml": BROKEN });
    expect(conclusion).toBe("failure");
    expect(run.annotations.length).toBeGreaterThan(0);
    expect(run.annotations.every((annotation) => annotation.annotation_level === "failure")).toBe(true);
    expect(github.calls.filter((call) => call === "readBlob")).toHaveLength(1);
  });

  it("passes a clean config with no annotations, in one tree listing and one blob per file", async () => {
    const github = new FakeGitHub(configRepo());
    const { conclusion, run } = await checkPull(github, { ".github/ferry.yml": `${CONFIG}# reviewed\n` });
    expect(conclusion).toBe("success");
    expect(run.annotations).toEqual([]);
    // Tree, config blob, the two overlays, the check run: no contents-API reads. Then the default
    // branch's config, to say who gains or loses promote rights: its branch, tree and blob.
    expect([...github.calls].sort()).toEqual([
      "createCheckRun",
      "defaultBranch",
      "getBranch",
      "listTree",
      "listTree",
      "readBlob",
      "readBlob",
      "readBlob",
      "readBlob",
    ]);
    expect(run.summary).toContain("Who may promote: no change.");
  });

  it("refuses to follow a symlinked environment path and warns on that environment's paths line", async () => {
    const github = new FakeGitHub(configRepo());
    const config = CONFIG.replace("paths: [overlays/staging]", "paths: [overlays/staging.link]");
    const { conclusion, run } = await checkPull(github, {
      ".github/ferry.yml": config,
      "overlays/staging.link": "../../../etc",
    });
    expect(conclusion).not.toBe("failure");
    expect(run.annotations).toEqual([
      expect.objectContaining({
        start_line: pathsPosition(config, "overlays/staging.link").line,
        annotation_level: "warning",
        message: expect.stringContaining("never follows links"),
      }),
    ]);
    // The head's config, prod's overlay, and the default
    // branch's config (for who may promote).
    expect(github.calls.filter((call) => call === "readBlob")).toHaveLength(3);
  });

  it("warns once about an environment path that holds no YAML files", async () => {
    const github = new FakeGitHub(configRepo());
    const config = CONFIG.replace("paths: [overlays/prod]", "paths: [overlays/production]");
    const { run } = await checkPull(github, { ".github/ferry.yml": config });
    expect(run.annotations).toEqual([
      expect.objectContaining({
        start_line: pathsPosition(config, "overlays/production").line,
        annotation_level: "warning",
        message: expect.stringContaining("no YAML files under overlays/production"),
      }),
    ]);
  });

  it("fails a config that is itself a symlink instead of following it", async () => {
    class ConfigLinkGitHub extends FakeGitHub {
      override async listTree(treeSha: string) {
        return (await super.listTree(treeSha)).map((entry) =>
          entry.path === ".github/ferry.yml" ? { ...entry, type: "symlink" as const } : entry,
        );
      }
    }
    const github = new ConfigLinkGitHub(configRepo());
    const { conclusion, run } = await checkPull(github, { ".github/ferry.yml": "../../secrets.yml" });
    expect(conclusion).toBe("failure");
    expect(run.annotations).toEqual([
      expect.objectContaining({
        annotation_level: "failure",
        message: expect.stringContaining("never follows links"),
      }),
    ]);
    expect(github.calls).not.toContain("readBlob");
  });

  it("skips PRs that do not touch ferry.yml", async () => {
    const github = new FakeGitHub(configRepo());
    expect(
      await checkConfigPullRequest(fakeDeps(github, new FakeRegistry()), {
        headSha: github.branches.get("main")!,
        changedFiles: ["README.md"],
      }),
    ).toBe("skipped");
    expect(github.checkRuns).toHaveLength(0);
  });

  it("opens one issue for a broken default branch and closes it once fixed", async () => {
    const github = new FakeGitHub(configRepo());
    const deps = fakeDeps(github, new FakeRegistry());
    const broken = github.push("main", { ".github/ferry.yml": BROKEN });
    expect(await checkConfigOnDefaultBranch(deps, { branch: "main", headSha: broken })).toBe(false);
    expect(await checkConfigOnDefaultBranch(deps, { branch: "main", headSha: broken })).toBe(false);
    expect(github.issues.filter((issue) => issue.title === BROKEN_CONFIG_TITLE)).toHaveLength(1);
    const fixed = github.push("main", configRepo());
    expect(await checkConfigOnDefaultBranch(deps, { branch: "main", headSha: fixed })).toBe(true);
    expect(github.issues.find((issue) => issue.title === BROKEN_CONFIG_TITLE)!.state).toBe("closed");
  });

  it("gives the default branch's check the same reference warnings, and keeps the config usable", async () => {
    const github = new FakeGitHub(configRepo());
    const head = github.push("main", {
      ".github/ferry.yml": WITH_API,
      "overlays/prod/kustomization.yaml": PROD_WITH_API,
    });
    const deps = fakeDeps(github, new FakeRegistry());
    expect(await checkConfigOnDefaultBranch(deps, { branch: "main", headSha: head })).toBe(true);
    const run = github.checkRuns.at(-1)!;
    expect(run.conclusion).toBe("success");
    expect(run.annotations.map((annotation) => [annotation.annotation_level, annotation.start_line])).toEqual(
      [["warning", pathsPosition(WITH_API, "overlays/staging").line]],
    );
    expect(github.issues.filter((issue) => issue.title === BROKEN_CONFIG_TITLE)).toHaveLength(0);
  });

  it("warns on the auth line that auth: github reads only public GHCR packages, and stays green", async () => {
    const github = new FakeGitHub(configRepo());
    const text = `${CONFIG}registries:\n  ghcr.io:\n    auth: github\n`;
    const { conclusion, run } = await checkPull(github, { ".github/ferry.yml": text });
    expect(conclusion).toBe("success");
    expect(run.annotations).toContainEqual(
      expect.objectContaining({
        annotation_level: "warning",
        start_line: text.split("\n").indexOf("    auth: github") + 1,
        message: expect.stringContaining("works only for public packages"),
      }),
    );
  });
});
