/**
 * The GitHub adapter speaking real HTTP to the GitHub emulator (docs/testing.md "Fakes and emulators"): compare-and-swap
 * refs, sha-pinned merges, reaction dedupe, live permissions.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGitHubRepo, type GitHubRepoAdapter } from "../../../src/adapters/github/github-repo.js";
import { installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, repos } from "../../../packages/sandbox/src/github/index.js";
import type { PullRequestInfo } from "../../../src/app/github-port.js";

describe("GitHubRepoAdapter against the emulator", () => {
  let world: World;
  let github: GitHubRepoAdapter;
  beforeEach(async () => {
    world = await startWorld();
    const app = await installApp(world);
    github = createGitHubRepo(app.installation, "acme", "config");
  });
  afterEach(async () => {
    await world.emu.close();
  });

  async function commitOnMain(files: Record<string, string>) {
    const base = (await github.getBranch("main"))!;
    return github.createCommit({ baseTreeSha: base.treeSha, parents: [base.sha], files, message: "test" });
  }

  it("writes one commit with inline content and reads it back through the tree", async () => {
    const commit = await commitOnMain({ "overlays/staging/kustomization.yaml": "images: []\n" });
    expect(await github.createRef("ferry/staging", commit.sha)).toBe("created");
    const branch = (await github.getBranch("ferry/staging"))!;
    const entry = (await github.listTree(branch.treeSha)).find(
      (e) => e.path === "overlays/staging/kustomization.yaml",
    )!;
    expect(entry.type).toBe("blob");
    expect(await github.readBlob(entry.sha)).toBe("images: []\n");
  });

  // GitHub's contents API inlines files up to 1 MB; between 1 and 100 MB it answers `content: ""`
  // with `encoding: "none"` (GitHub changelog 2022-05-03; palantir/go-githubapp#227).
  it("reads a 2 MB file the contents API answers without content through the blob API, and gives sizes with the tree", async () => {
    const big = `# ${"y".repeat(2 * 1024 * 1024)}\n`;
    const commit = await commitOnMain({ "big.yaml": big });
    const { data } = await world
      .as("mona")
      .rest.repos.getContent({ owner: "acme", repo: "config", path: "big.yaml", ref: commit.sha });
    expect([(data as { content?: string }).content, (data as { encoding?: string }).encoding]).toEqual([
      "",
      "none",
    ]);
    expect(await github.readFile(commit.sha, "big.yaml")).toBe(big);
    const entry = (await github.listTree(commit.treeSha)).find((e) => e.path === "big.yaml");
    expect(entry?.size).toBe(big.length);
  });

  it("keeps working when its methods are passed around unbound (no `this`)", async () => {
    const { defaultBranch, getBranch, createCommit, readFile, writeStateCommit, stateHead } = github;
    const base = (await getBranch(await defaultBranch()))!;
    const big = `# ${"z".repeat(2 * 1024 * 1024)}\n`;
    const commit = await createCommit({
      baseTreeSha: base.treeSha,
      parents: [base.sha],
      files: { "big.yaml": big },
      message: "test",
    });
    // Past 1 MB the contents API answers without content: readFile goes on to the blob API.
    expect(await readFile(commit.sha, "big.yaml")).toBe(big);
    expect(await writeStateCommit(undefined, "{}", "state")).toBe("written");
    const head = await stateHead();
    // A second writer from the same parent loses the compare-and-swap (and checks the head again).
    expect(await writeStateCommit(undefined, '{"holds":[]}', "state")).toBe("conflict");
    expect(await stateHead()).toBe(head);
  });

  it("reports an existing ref instead of failing, and a non-fast-forward update as a conflict", async () => {
    const first = await commitOnMain({ "a.txt": "1" });
    const second = await commitOnMain({ "a.txt": "2" });
    expect(await github.createRef("ferry/staging", first.sha)).toBe("created");
    expect(await github.createRef("ferry/staging", second.sha)).toBe("exists");
    expect(await github.updateRef("ferry/staging", second.sha)).toBe("conflict");
    expect((await github.getBranch("ferry/staging"))!.sha).toBe(first.sha);
    expect(await github.updateRef("ferry/staging", first.sha)).toBe("updated");
  });

  it("reads a commit's statuses past the first page, and past its bound of 10 pages never answers success", async () => {
    const head = (await github.getBranch("main"))!.sha;
    for (let i = 0; i < 150; i++)
      actAs.setStatus(world.emu, "acme", "config", head, {
        state: i === 0 ? "failure" : "success",
        context: `s-${i}`,
      });
    expect(await github.checksState(head)).toBe("failure");
    expect(await github.checksState(head, ["s-0"])).toBe("failure");
    const other = (await commitOnMain({ "a.txt": "a\n" })).sha;
    for (let i = 0; i < 1001; i++)
      actAs.setStatus(world.emu, "acme", "config", other, { state: "success", context: `s-${i}` });
    expect(await github.checksState(other, ["s-1"])).toBe("pending");
  });

  it("gives a branch's required checks from its protection, and none for an unprotected branch", async () => {
    expect(await github.requiredChecks("main")).toBeUndefined();
    repos.protectBranch(world.emu, "acme", "config", "main", { requiredChecks: ["ci/test", "ferry/config"] });
    expect((await github.getBranch("main"))!.protected).toBe(true);
    expect(await github.requiredChecks("main")).toEqual(["ci/test", "ferry/config"]);
  });

  it("refuses to merge when the head moved after validation", async () => {
    const commit = await commitOnMain({ "a.txt": "1" });
    await github.createRef("ferry/staging", commit.sha);
    const pull = await github.createPull({
      head: "ferry/staging",
      base: "main",
      title: "Promote shop 1.8.0 to staging",
      body: "",
    });
    const moved = await github.createCommit({
      baseTreeSha: commit.treeSha,
      parents: [commit.sha],
      files: { "b.txt": "late" },
      message: "late",
    });
    expect(await github.updateRef("ferry/staging", moved.sha)).toBe("updated");
    expect(await github.merge(pull.number, commit.sha, "squash")).toBe("head-moved");
    expect(await github.merge(pull.number, moved.sha, "squash")).toBe("merged");
  });

  it("enqueues where the base has a merge queue, takes 'already in the queue' as queued, and gives a refusal in GitHub's own words", async () => {
    await actAs.createBranch(world.emu, "acme", "config", "release", "main");
    // The queue holds its entries: it requires `queue-ci`, which a merge group gets only from an
    // hour-long CI run.
    repos.addRuleset(world.emu, "acme", "config", {
      branches: ["release"],
      requiredChecks: ["queue-ci"],
      mergeQueue: {},
    });
    actAs.setCi(world.emu, "acme", "config", { context: "slow", delayMs: 3_600_000 });
    const pulls = [];
    for (const name of ["ferry/staging", "ferry/prod"]) {
      const commit = await commitOnMain({ [`${name}.txt`]: name });
      await github.createRef(name, commit.sha);
      pulls.push(await github.createPull({ head: name, base: "release", title: name, body: "" }));
      actAs.setStatus(world.emu, "acme", "config", commit.sha, { context: "queue-ci", state: "success" });
    }
    const [staging, prod] = pulls as [PullRequestInfo, PullRequestInfo];
    expect(await github.merge(staging.number, staging.headSha, "squash")).toBe("queue-required");
    expect(await github.enqueuePull(staging, staging.headSha)).toBe("queued");
    expect(await github.enqueuePull(staging, staging.headSha)).toBe("queued");
    expect(await github.enqueuePull(prod, staging.headSha)).toEqual({
      refused: "Head branch was modified. Review and try the merge again.",
    });
  });

  it("dedupes by reaction: the second identical reaction says it existed", async () => {
    const { id } = await actAs.comment(
      world.emu,
      "acme",
      "config",
      (await github.createIssue({ title: "t", body: "b" }))!,
      "/ferry status",
      { as: "mona" },
    );
    expect(await github.react(id, "eyes")).toBe("created");
    expect(await github.react(id, "eyes")).toBe("existed");
  });

  it("finds Ferry's issue by title even after someone closed it, so the holds in it are not lost", async () => {
    const number = (await github.createIssue({ title: "Ferry dashboard", body: "holds" }))!;
    await github.updateIssue(number, { state: "closed" });
    expect(await github.findIssue("Ferry dashboard")).toEqual({
      number,
      title: "Ferry dashboard",
      body: "holds",
      state: "closed",
    });
  });

  it("prefers the open issue of a title over an older closed one", async () => {
    const older = (await github.createIssue({ title: "Ferry dashboard", body: "old" }))!;
    const newer = (await github.createIssue({ title: "Ferry dashboard", body: "new" }))!;
    await github.updateIssue(newer, { state: "closed" });
    await github.updateIssue(older, { state: "open" });
    expect((await github.findIssue("Ferry dashboard"))?.number).toBe(older);
  });

  it("lists an environment's Deployments newest first with their statuses oldest first, and says when a bound stopped it", async () => {
    const mona = world.as("mona");
    const hubot = world.as("hubot");
    const shas: string[] = [];
    for (const round of [1, 2, 3]) {
      const { sha } = await commitOnMain({ "a.txt": String(round) });
      shas.push(sha);
      const { data } = await mona.rest.repos.createDeployment({
        owner: "acme",
        repo: "config",
        ref: sha,
        environment: "prod",
        required_contexts: [],
        auto_merge: false,
      });
      const id = (data as { id: number }).id;
      for (const state of ["in_progress", "success"] as const)
        await mona.rest.repos.createDeploymentStatus({
          owner: "acme",
          repo: "config",
          deployment_id: id,
          state,
          description: state,
        });
    }
    const all = await github.listDeploymentRecords("prod", { maxDeployments: 10, maxStatuses: 100 }, [
      "mona",
    ]);
    expect(all.deployments.map((d) => d.sha)).toEqual([...shas].reverse());
    expect(all.deployments[0]!.statuses.map((s) => s.state)).toEqual(["in_progress", "success"]);
    expect(all.stopped).toBe(false);
    const fewDeployments = await github.listDeploymentRecords(
      "prod",
      { maxDeployments: 2, maxStatuses: 100 },
      ["mona"],
    );
    expect([fewDeployments.deployments.length, fewDeployments.stopped]).toEqual([2, true]);
    const fewStatuses = await github.listDeploymentRecords("prod", { maxDeployments: 10, maxStatuses: 3 }, [
      "mona",
    ]);
    expect([fewStatuses.statusesRead, fewStatuses.stopped]).toEqual([3, true]);
    // Statuses count only from the environment's reporters: hubot can write to the repository, and
    // its Deployment and its newer "success" are passed over.
    const { data: forged } = await hubot.rest.repos.createDeployment({
      owner: "acme",
      repo: "config",
      ref: shas[0]!,
      environment: "prod",
      required_contexts: [],
      auto_merge: false,
    });
    await hubot.rest.repos.createDeploymentStatus({
      owner: "acme",
      repo: "config",
      deployment_id: (forged as { id: number }).id,
      state: "success",
    });
    const reported = await github.deploymentHealth("prod", ["mona"]);
    expect(reported?.sha).toBe(shas.at(-1));
    expect((await github.deploymentHealth("prod", ["hubot"]))?.sha).toBe(shas[0]);
    expect(await github.deploymentHealth("prod", ["staging-reconciler"])).toBeUndefined();
    const onlyMona = await github.listDeploymentRecords("prod", { maxDeployments: 10, maxStatuses: 100 }, [
      "MONA",
    ]);
    expect(onlyMona.deployments.map((d) => d.sha)).toEqual([...shas].reverse());
  });

  it("reads permissions live", async () => {
    expect(await github.permissionOf("mona")).toBe("admin");
    expect(await github.permissionOf("hubot")).toBe("write");
    expect(["none", "read"]).toContain(await github.permissionOf("eve"));
  });
});
