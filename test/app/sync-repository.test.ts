import { parseNotices } from "../../src/core/pr/dashboard.js";
import { describe, expect, it } from "vitest";
import { parseBody } from "../../src/core/pr/body.js";
import { MAX_LISTED_PULLS, syncRepository } from "../../src/app/sync-repository.js";
import { mergeWhenReady } from "../../src/app/merge-when-ready.js";
import { recordMerge } from "../../src/app/record-merge.js";
import { loadRepoConfig } from "../../src/app/load-repo-config.js";
import { updateState } from "../../src/app/update-state.js";
import { configRepo, FakeGitHub, FakeRegistry, fakeDeps, kustomization } from "../support/app-fakes.js";
import { mayPassOnRetry } from "../../src/core/errors.js";

function setup(files = configRepo()) {
  const github = new FakeGitHub(files);
  const registry = new FakeRegistry();
  registry.push("ghcr.io/acme/shop", "1.7.0");
  return { github, registry, deps: fakeDeps(github, registry) };
}

function changedLines(before: string, after: string): number {
  const a = before.split("\n");
  const b = after.split("\n");
  return b.filter((line, index) => line !== a[index]).length;
}

describe("syncRepository: new image → PR per environment", () => {
  it("opens exactly one staging PR with a one-line diff when shop 1.8.0 is pushed", async () => {
    const { github, registry, deps } = setup();
    github.checks.set("never", "pending");
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    expect(github.pulls).toHaveLength(1);
    const pull = github.pulls[0]!;
    expect(pull.title).toBe("Promote shop 1.8.0 to staging");
    expect(pull.headRef).toBe("ferry/staging");
    expect(pull.labels).toEqual(["ferry", "env:staging"]);
    const before = github.file("main", "overlays/staging/kustomization.yaml")!;
    const after = github.file("ferry/staging", "overlays/staging/kustomization.yaml")!;
    expect(changedLines(before, after)).toBe(1);
    expect(after).toContain('newTag: "1.8.0"');
    expect(github.file("ferry/staging", "overlays/prod/kustomization.yaml")).toBe(
      github.file("main", "overlays/prod/kustomization.yaml"),
    );
    expect(parseBody(pull.body)?.changes[0]?.to.tag).toBe("1.8.0");
  });

  it("syncs the image a GHCR event names, however the owner's name is cased", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry", repositories: ["ghcr.io/Acme/Shop"] });
    expect(github.pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
  });

  it("leaves images alone that a trigger does not name", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry", repositories: ["ghcr.io/acme/shop-config"] });
    expect(github.pulls).toEqual([]);
  });

  it("changes nothing when the same trigger is delivered again", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    const head = github.branches.get("ferry/staging");
    const writes = github.calls.filter((call) => /create|update/.test(call)).length;
    await syncRepository(deps, { reason: "registry" });
    expect(github.branches.get("ferry/staging")).toBe(head);
    expect(github.calls.filter((call) => /create|update/.test(call)).length).toBe(writes);
    expect(github.pulls).toHaveLength(1);
  });

  it("updates the same PR when 1.8.1 arrives before it merged", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    registry.push("ghcr.io/acme/shop", "1.8.1");
    await syncRepository(deps, { reason: "registry" });
    expect(github.pulls).toHaveLength(1);
    expect(github.pulls[0]!.title).toBe("Promote shop 1.8.1 to staging");
    expect(github.file("ferry/staging", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.8.1"');
  });

  it("never moves a PR back to an older tag when a replica that listed the tags earlier syncs after it", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    // A second replica whose tag list was read before 1.8.1 was pushed.
    const stale = new FakeRegistry();
    stale.push("ghcr.io/acme/shop", "1.7.0");
    stale.push("ghcr.io/acme/shop", "1.8.0");
    registry.push("ghcr.io/acme/shop", "1.8.1");
    await syncRepository(deps, { reason: "registry" });
    await syncRepository(fakeDeps(github, stale), { reason: "registry" });
    expect(github.pulls).toHaveLength(1);
    expect(github.pulls[0]!.title).toBe("Promote shop 1.8.1 to staging");
    expect(github.file("ferry/staging", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.8.1"');
  });

  it("redoes the write from the new tip when the branch moves underneath, never forcing", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    let intruder: string | undefined;
    github.beforeUpdateRef = (branch) => {
      intruder ??= github.push(branch, { "NOTES.md": "someone else" });
    };
    registry.push("ghcr.io/acme/shop", "1.8.1");
    await syncRepository(deps, { reason: "registry" });
    expect(github.calls.filter((call) => call === "updateRef").length).toBe(2);
    expect(github.file("ferry/staging", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.8.1"');
    // A fast-forward over the other writer's commit, not a force-push that drops it from history.
    expect(github.commits.get(github.branches.get("ferry/staging")!)!.parents).toContain(intruder);
  });

  it("merges itself on an unprotected base once checks pass, with the validated head sha", async () => {
    const { github, registry, deps } = setup();
    registry.push("ghcr.io/acme/shop", "1.8.0");
    github.checks.set("pending-marker", "pending");
    await syncRepository(deps, { reason: "registry" });
    expect(github.pulls[0]!.merged).toBe(true);
    expect(github.file("main", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.8.0"');
  });

  it("waits for the required check on a protected base, then merges when it passes", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    github.checks.set(pull.headSha, "pending");
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("waiting");
    github.checks.set(pull.headSha, "success");
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("merged");
  });

  it("leaves a PR with native auto-merge enabled to GitHub instead of racing it with its own merge", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    github.autoMergeAllowed = true;
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    expect(pull.autoMerge).toBe(true);
    github.checks.set(pull.headSha, "success");
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    const merges = github.calls.filter((call) => call === "merge").length;
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("waiting");
    expect(github.calls.filter((call) => call === "merge").length).toBe(merges);
  });

  it("does not ask for auto-merge on a repository that does not allow it (GitHub's default), and merges itself", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    expect(github.calls).not.toContain("enableAutoMerge");
    github.checks.set(pull.headSha, "success");
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("merged");
  });

  it("asks for auto-merge when the repository's settings cannot be read", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    github.settingsHidden = true;
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    expect(github.calls).toContain("enableAutoMerge");
  });

  it("merges a PR once when two merges of it arrive together: the second reads it again instead of asking GitHub", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    github.checks.set(pull.headSha, "success");
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    const merges = () => github.calls.filter((call) => call === "merge").length;
    const before = merges();
    const outcomes = await Promise.all([
      mergeWhenReady(deps, loaded, { ...pull }),
      mergeWhenReady(deps, loaded, { ...pull }),
    ]);
    expect(outcomes).toEqual(["merged", "merged"]);
    expect(merges() - before).toBe(1);
  });

  it("aborts the merge when the head moved after validation", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    const validated = { ...github.pulls[0]! };
    github.checks.set(validated.headSha, "success");
    github.pulls[0]!.headSha = github.push("ferry/staging", { "x.txt": "late push" });
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    expect(await mergeWhenReady(deps, loaded, validated)).toBe("stopped");
    expect(github.pulls[0]!.merged).toBe(false);
  });

  it("leaves an environment on hold alone", async () => {
    const { github, registry, deps } = setup();
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    await updateState(deps, loaded, (state) => {
      state.holds.staging = { by: "mona", at: "2026-01-01T00:00:00.000Z", reason: "hold" };
    });
    registry.push("ghcr.io/acme/shop", "1.8.0");
    const result = await syncRepository(deps, { reason: "scan" });
    expect(result.environments.staging).toBe("held");
    expect(github.pulls).toHaveLength(0);
  });

  it("does not undo a human revert below the last merged tag until a newer tag appears", async () => {
    const { github, registry, deps } = setup();
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    expect(github.pulls[0]!.merged).toBe(true);
    await recordMerge(deps, { ...github.pulls[0]! });
    github.push("main", {
      "overlays/staging/kustomization.yaml": github
        .file("main", "overlays/staging/kustomization.yaml")!
        .replace('"1.8.0"', '"1.7.0"'),
    });
    await syncRepository(deps, { reason: "scan" });
    expect(github.pulls).toHaveLength(1);
    registry.push("ghcr.io/acme/shop", "1.8.2");
    await syncRepository(deps, { reason: "scan" });
    expect(github.pulls).toHaveLength(2);
    expect(github.pulls[1]!.title).toBe("Promote shop 1.8.2 to staging");
  });

  it("closes an automatic PR whose change already landed on the base", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "registry" });
    github.push("main", {
      "overlays/staging/kustomization.yaml": github.file(
        "ferry/staging",
        "overlays/staging/kustomization.yaml",
      )!,
    });
    await syncRepository(deps, { reason: "push" });
    expect(github.pulls[0]!.state).toBe("closed");
    expect(github.comments.at(-1)?.body).toMatch(/already has this change/);
  });

  it("keeps the dashboard issue current on the periodic scan, with the table and the Mermaid diagram", async () => {
    const { github, deps } = setup();
    await syncRepository(deps, { reason: "scan" });
    const dashboard = github.issues.find((issue) => issue.title === "Ferry dashboard")!;
    expect(dashboard.body).toContain("| staging | shop | `1.7.0` |");
    expect(dashboard.body).toContain("env_staging --> env_prod");
  });

  it("rewrites the dashboard on a scan only when its content changes, never for its time alone", async () => {
    const { github, deps } = setup();
    await syncRepository(deps, { reason: "scan" });
    const writes = () =>
      github.calls.filter((call) => call === "createIssue" || call === "updateIssue").length;
    const first = writes();
    const later = { ...deps, now: () => new Date("2026-01-01T06:00:00Z") };
    await syncRepository(later, { reason: "scan" });
    expect(writes()).toBe(first);
    github.push("main", { "overlays/prod/kustomization.yaml": kustomization("1.7.1") });
    await syncRepository(later, { reason: "scan" });
    expect(writes()).toBe(first + 1);
    expect(github.issues.find((issue) => issue.title === "Ferry dashboard")!.body).toContain(
      "| prod | shop | `1.7.1` |",
    );
  });

  it("reads the dashboard issue once and the open PRs in one listing per scan, looking up only a branch with a change", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "scan" });
    github.checks.set(github.pulls[0]!.headSha, "pending");
    const mark = github.calls.length;
    await syncRepository(deps, { reason: "scan" });
    const calls = github.calls.slice(mark);
    expect(calls.filter((call) => call === "findIssue")).toHaveLength(1);
    expect(calls.filter((call) => call === "listOpenPulls")).toHaveLength(1);
    // staging still carries 1.8.0, so its PR is read again; prod (manual, none listed) is not looked up.
    expect(calls.filter((call) => call === "findOpenPull")).toHaveLength(1);
    // An event's sync does not list: it looks up the units it touches.
    const eventMark = github.calls.length;
    await syncRepository(deps, { reason: "registry" });
    expect(github.calls.slice(eventMark).filter((call) => call === "listOpenPulls")).toHaveLength(0);
  });

  it("shows on the dashboard the PR a scan just opened, not what its listing saw before", async () => {
    const { github, registry, deps } = setup();
    github.protectedBranches.set("main", ["ci"]);
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(deps, { reason: "scan" });
    const pull = github.pulls.find((candidate) => candidate.headRef === "ferry/staging")!;
    expect(pull.state).toBe("open");
    const dashboard = github.issues.find((issue) => issue.title === "Ferry dashboard")!;
    expect(dashboard.body).toContain(`#${pull.number}`);
  });

  it("looks up each branch on its own when there are more open PRs than a scan lists", async () => {
    const { github, registry, deps } = setup();
    await syncRepository(deps, { reason: "scan" });
    const many = Array.from({ length: MAX_LISTED_PULLS + 1 }, (_, index) => ({
      headRef: `feature-${index}`,
      headRepo: "acme/config",
    }));
    github.listOpenPulls = async () => many as unknown as Awaited<ReturnType<FakeGitHub["listOpenPulls"]>>;
    registry.push("ghcr.io/acme/shop", "1.7.1");
    const mark = github.calls.length;
    await syncRepository(deps, { reason: "scan" });
    // Each unit's branch is read on its own (staging's change, prod's for the dashboard), as before
    // the listing existed; a listing that would be cut is never taken for "no PR".
    expect(github.calls.slice(mark).filter((call) => call === "findOpenPull").length).toBeGreaterThanOrEqual(
      2,
    );
  });

  it("never takes a fork's PR from a branch named like Ferry's for Ferry's own on the dashboard", async () => {
    const { github, registry, deps } = setup();
    await syncRepository(deps, { reason: "scan" });
    github.pulls.push({
      ...github.pulls[0]!,
      number: 99,
      state: "open",
      headRef: "ferry/prod",
      headRepo: "mallory/config",
      author: "mallory",
    } as (typeof github.pulls)[number]);
    registry.push("ghcr.io/acme/shop", "1.7.1");
    await syncRepository(deps, { reason: "scan" });
    const dashboard = github.issues.find((issue) => issue.title === "Ferry dashboard")!;
    expect(dashboard.body).not.toContain("#99");
  });

  it("makes no changes and opens one issue while the config is broken", async () => {
    const { github, registry, deps } = setup({
      ...configRepo(),
      ".github/ferry.yml": "images: {}\nenvironments:\n  staging:\n    paths: [../x]\n",
    });
    registry.push("ghcr.io/acme/shop", "1.8.0");
    const first = await syncRepository(deps, { reason: "scan" });
    await syncRepository(deps, { reason: "scan" });
    expect(first.skipped).toBe("invalid-config");
    expect(github.pulls).toHaveLength(0);
    expect(github.issues.filter((issue) => issue.title.includes("ferry.yml is invalid"))).toHaveLength(1);
  });
});

describe("a PR that merged between GitHub's refusal and the lookup", () => {
  it("makes the sync a retryable failure, not a final one: the retry plans on the new base", async () => {
    const { github, registry, deps } = setup();
    registry.push("ghcr.io/acme/shop", "1.8.0");
    // Another replica's PR from ferry/staging was open when this one asked to open its own, and
    // merged before this one looked it up (what e2e-notify's two replicas showed under load).
    github.createPull = async () => {
      throw Object.assign(
        new Error(
          'Validation Failed: {"resource":"PullRequest","code":"custom","message":"A pull request already exists for acme:ferry/staging."}',
        ),
        { status: 422 },
      );
    };
    const failure = await syncRepository(deps, { reason: "registry" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: "pull-gone" });
    expect(mayPassOnRetry(failure)).toBe(true);
  });

  it("any other refusal with no PR open stays final", async () => {
    const { github, registry, deps } = setup();
    registry.push("ghcr.io/acme/shop", "1.8.0");
    github.createPull = async () => {
      throw Object.assign(new Error("Validation Failed: No commits between main and ferry/staging"), {
        status: 422,
      });
    };
    const failure = await syncRepository(deps, { reason: "registry" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((failure as Error).message).toContain("No commits between");
    expect(mayPassOnRetry(failure)).toBe(false);
  });
});

describe("CI gating", () => {
  const gated = (files: Record<string, string>) => ({
    ...files,
    ".github/ferry.yml": files[".github/ferry.yml"]!.replace(
      "    repository: ghcr.io/acme/shop\n",
      "    repository: ghcr.io/acme/shop\n    source: acme/shop\n",
    ),
  });

  it("skips a tag whose source commit has no successful CI run, and takes it once CI passes", async () => {
    const github = new FakeGitHub(gated(configRepo()));
    const registry = new FakeRegistry();
    registry.push("ghcr.io/acme/shop", "1.7.0", "a".repeat(40));
    registry.push("ghcr.io/acme/shop", "1.8.0", "b".repeat(40));
    github.protectedBranches.set("main", ["ci"]);
    const deps = fakeDeps(github, registry);
    github.checks.set("b".repeat(40), "failure");
    await syncRepository(deps, { reason: "scan" });
    expect(github.pulls).toHaveLength(0);
    github.checks.set("b".repeat(40), "success");
    await syncRepository(deps, { reason: "workflow_run", sources: ["acme/shop"] });
    expect(github.pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
    expect(github.pulls[0]!.body).toContain(`/acme/shop/compare/${"a".repeat(40)}...${"b".repeat(40)}`);
  });
});

describe("automatic environments with from", () => {
  it("wait, with the reason on the dashboard, while the upstream never reported health", async () => {
    const files = configRepo();
    files[".github/ferry.yml"] += `  qa:
    paths: [overlays/qa]
    from: staging
    update: auto
    merge: review
    soak: 30m
`;
    files["overlays/qa/kustomization.yaml"] = files["overlays/staging/kustomization.yaml"]!;
    const github = new FakeGitHub(files);
    const registry = new FakeRegistry();
    registry.push("ghcr.io/acme/shop", "1.7.0");
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(fakeDeps(github, registry), { reason: "registry" });
    const scan = await syncRepository(fakeDeps(github, registry, new Date("2026-01-02T00:00:00Z")), {
      reason: "scan",
    });
    expect(scan.environments.qa).toBe("soaking");
    expect(github.pulls.filter((pull) => pull.headRef === "ferry/qa")).toHaveLength(0);
    const dashboard = github.issues.find((issue) => issue.title === "Ferry dashboard")!.body;
    expect(parseNotices(dashboard)).toContainEqual({
      environment: "qa",
      image: "shop",
      message: "waits for staging: no health reported for staging by ferry's reconciler (as ferry[bot])",
    });
  });

  it("wait for the upstream's soak before following it, like /promote does", async () => {
    const files = configRepo();
    files[".github/ferry.yml"] += `  qa:
    paths: [overlays/qa]
    from: staging
    update: auto
    merge: review
    soak: 30m
`;
    files["overlays/qa/kustomization.yaml"] = files["overlays/staging/kustomization.yaml"]!;
    const github = new FakeGitHub(files);
    const registry = new FakeRegistry();
    registry.push("ghcr.io/acme/shop", "1.7.0");
    registry.push("ghcr.io/acme/shop", "1.8.0");
    await syncRepository(fakeDeps(github, registry), { reason: "registry" });
    // staging now runs 1.8.0 and has been healthy for 10 minutes only.
    const head = (await github.getBranch("main"))!.sha;
    github.health.set("staging", { sha: head, state: "success", since: new Date("2025-12-31T23:50:00Z") });
    const early = await syncRepository(fakeDeps(github, registry), { reason: "scan" });
    expect(early.environments.qa).toBe("soaking");
    expect(github.pulls.filter((pull) => pull.headRef === "ferry/qa")).toHaveLength(0);
    const later = await syncRepository(fakeDeps(github, registry, new Date("2026-01-01T00:25:00Z")), {
      reason: "scan",
    });
    expect(later.environments.qa).toBe("opened");
    expect(github.pulls.filter((pull) => pull.headRef === "ferry/qa").map((pull) => pull.title)).toEqual([
      "Promote shop 1.8.0 to qa",
    ]);
  });

  it("follow exactly what the upstream runs, and never move backwards", async () => {
    const files = configRepo();
    files[".github/ferry.yml"] += `  qa:
    paths: [overlays/qa]
    from: staging
    update: auto
    merge: review
`;
    files["overlays/qa/kustomization.yaml"] = files["overlays/staging/kustomization.yaml"]!.replace(
      '"1.7.0"',
      '"1.9.0"',
    );
    const github = new FakeGitHub(files);
    const registry = new FakeRegistry();
    registry.push("ghcr.io/acme/shop", "1.7.0");
    const digest = registry.push("ghcr.io/acme/shop", "1.8.0");
    const deps = fakeDeps(github, registry);
    await syncRepository(deps, { reason: "registry" });
    // staging merged 1.8.0 on its own; qa runs 1.9.0 already, so it is not pulled back to 1.8.0.
    expect(github.pulls.filter((pull) => pull.headRef === "ferry/qa")).toHaveLength(0);
    github.push("main", {
      "overlays/qa/kustomization.yaml": files["overlays/qa/kustomization.yaml"]!.replace(
        '"1.9.0"',
        '"1.6.0"',
      ),
    });
    await syncRepository(deps, { reason: "scan" });
    const qa = github.pulls.filter((pull) => pull.headRef === "ferry/qa");
    expect(qa.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to qa"]);
    expect(parseBody(qa[0]!.body)?.changes[0]?.to).toEqual({ tag: "1.8.0", digest });
  });
});
