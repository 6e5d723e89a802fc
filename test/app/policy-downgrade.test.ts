import { describe, expect, it } from "vitest";
import { loadRepoConfig } from "../../src/app/load-repo-config.js";
import { writeDashboard } from "../../src/app/dashboard-issue.js";
import { updateState } from "../../src/app/update-state.js";
import { syncRepository } from "../../src/app/sync-repository.js";
import { parseBody } from "../../src/core/pr/body.js";
import { parseNotices } from "../../src/core/pr/dashboard.js";
import { CONFIG, configRepo, FakeGitHub, FakeRegistry, fakeDeps } from "../support/app-fakes.js";

/** The config repo with staging running 2.0.0 and the image's range narrowed to `policy`. */
function setup(policy: string) {
  const files = configRepo("2.0.0", "2.0.0");
  files[".github/ferry.yml"] = CONFIG.replace('policy: { range: "^1.0.0" }', `policy: ${policy}`);
  const github = new FakeGitHub(files);
  const registry = new FakeRegistry();
  for (const tag of ["1.7.0", "1.9.0", "2.0.0"]) registry.push("ghcr.io/acme/shop", tag);
  return { github, registry, deps: fakeDeps(github, registry) };
}

const dashboardOf = (github: FakeGitHub) => github.issues.find((issue) => issue.title === "Ferry dashboard")!;
/** The notices the dashboard shows (its visible list is rendered from the same block, markdown-escaped). */
const noticesOf = (github: FakeGitHub) => {
  const body = dashboardOf(github).body ?? "";
  return body.includes("### Notices")
    ? parseNotices(body).map((notice) => `${notice.environment}/${notice.image}: ${notice.message}`)
    : [];
};

describe("a range narrowed below the running version (running 2.0.0, range 1.x)", () => {
  it("keeps 2.0.0 and says on the dashboard that the running version is outside the policy", async () => {
    const { github, deps } = setup('{ range: "1.x" }');
    await syncRepository(deps, { reason: "scan" });
    expect(github.pulls).toHaveLength(0);
    expect(noticesOf(github)).toEqual([
      "staging/shop: running 2.0.0 is outside the policy (semver 1.x): Ferry does not move backwards on its own (the policy's best tag is 1.9.0); set allowDowngrade: true in the policy, or /promote a version, to move back",
    ]);
  });

  it("moves back to 1.9.0 by PR with allowDowngrade: true, past the floor the 2.0.0 merge left, and says why", async () => {
    const { github, deps } = setup('{ range: "1.x", allowDowngrade: true }');
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    await updateState(deps, loaded, (state) => {
      state.floors.staging = { shop: "2.0.0" };
    });
    await syncRepository(deps, { reason: "scan" });
    expect(github.pulls).toHaveLength(1);
    expect(github.pulls[0]!.title).toBe("Promote shop 1.9.0 to staging");
    expect(parseBody(github.pulls[0]!.body)?.changes[0]).toMatchObject({
      from: { tag: "2.0.0" },
      to: { tag: "1.9.0" },
    });
    expect(noticesOf(github)).toEqual([
      "staging/shop: running 2.0.0 is outside the policy (semver 1.x): allowDowngrade moves it back to 1.9.0",
    ]);
  });

  it("keeps the last scan's notices when the dashboard is refreshed without planning (a merge or a command)", async () => {
    const { github, deps } = setup('{ range: "1.x" }');
    await syncRepository(deps, { reason: "scan" });
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    await writeDashboard(deps, loaded);
    expect(noticesOf(github)).toEqual([expect.stringContaining("running 2.0.0 is outside the policy")]);
  });

  it("shows no notice once the running version is inside the policy again", async () => {
    const { github, deps } = setup('{ range: "^2.0.0" }');
    await syncRepository(deps, { reason: "scan" });
    expect(dashboardOf(github).body).toContain("| staging | shop | `2.0.0` |");
    expect(noticesOf(github)).toEqual([]);
  });
});
