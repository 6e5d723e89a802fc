import { describe, expect, it } from "vitest";
import { checkConfigOnDefaultBranch, checkConfigPullRequest } from "../../src/app/check-config.js";
import { BROKEN_CONFIG_TITLE } from "../../src/core/pr/check-run.js";
import { configRepo, FakeGitHub, FakeRegistry, fakeDeps } from "./fakes.js";

const BROKEN = "images: {}\nenvironments:\n  prod:\n    paths: [overlays/prod]\n    soak: 30 minutes\n";

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
});
