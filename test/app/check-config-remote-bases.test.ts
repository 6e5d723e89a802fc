import { describe, expect, it } from "vitest";
import { checkConfigPullRequest } from "../../src/app/check-config.js";
import {
  CONFIG,
  configRepo,
  FakeGitHub,
  FakeRegistry,
  fakeDeps,
  kustomization,
} from "../support/app-fakes.js";

describe("ferry/config check and remote bases", () => {
  it("warns on the staging paths line of a PR whose staging overlay loads a remote base", async () => {
    const github = new FakeGitHub(configRepo());
    const overlay = kustomization("1.7.0").replace(
      "resources:\n",
      "resources:\n  - https://github.com/acme/bases//shop?ref=v1\n",
    );
    const head = github.push("main", {
      ".github/ferry.yml": `# reviewed\n${CONFIG}`,
      "overlays/staging/kustomization.yaml": overlay,
    });
    const conclusion = await checkConfigPullRequest(fakeDeps(github, new FakeRegistry()), {
      headSha: head,
      changedFiles: [".github/ferry.yml", "overlays/staging/kustomization.yaml"],
    });
    expect(conclusion).not.toBe("failure");
    const run = github.checkRuns.at(-1)!;
    const stagingLine =
      `# reviewed\n${CONFIG}`.split("\n").findIndex((line) => line.includes("overlays/staging")) + 1;
    expect(run.annotations).toEqual([
      expect.objectContaining({
        path: ".github/ferry.yml",
        start_line: stagingLine,
        annotation_level: "warning",
        message: expect.stringMatching(
          /environment staging: overlays\/staging\/kustomization\.yaml loads the remote resources entry "https:\/\/github\.com\/acme\/bases\/\/shop\?ref=v1"; ferry reconcile refuses remote resources/,
        ),
      }),
    ]);
  });
});
