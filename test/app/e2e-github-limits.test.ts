import { actAs, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { parseBody } from "../../src/core/pr/body.js";
/**
 * GitHub's size limits, as github.com answers them:
 * - an issue or pull request title over 256 characters is refused with 422 "title is too long
 *   (maximum is 256 characters)" (https://github.com/googleapis/repo-automation-bots/issues/1895);
 * - an issue, pull request or comment body over 65,536 characters is refused with 422
 *   "body is too long (maximum is 65536 characters)" (https://github.com/renovatebot/renovate/issues/2032,
 *   https://github.com/renovatebot/renovate/issues/14551, https://github.com/potproject/code-agent/issues/3);
 * - a check run takes 50 annotations a request, and more through updates of the run
 *   (https://docs.github.com/en/rest/checks/runs#update-a-check-run: "The Checks API limits the
 *   number of annotations to a maximum of 50 per API request. To create more than 50 annotations,
 *   you have to make multiple requests to the Update a check run endpoint");
 * - team reviewers without access to the repository make `POST /requested_reviewers` answer 422
 *   "Reviews may only be requested from collaborators. One or more of the teams you specified is not
 *   a collaborator of the … repository." after the PR exists
 *   (https://github.com/projectcontour/contour/pull/5998, https://github.com/peter-evans/create-pull-request/issues/4138);
 * - a recursive tree past GitHub's limit comes back `truncated: true`
 *   (https://docs.github.com/en/rest/git/trees#get-a-tree: "the limit for the tree array is 100,000
 *   entries with a maximum size of 7 MB").
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandReactions, dashboards, startWorld, type World } from "../support/app-e2e-world.js";

const LIMIT = 65_536;

/** A config with many environments and images: its dashboard table is far longer than GitHub allows. */
function bigConfig(registryHost: string, environments: number, images: number): string {
  const lines = ["images:"];
  for (let i = 0; i < images; i++)
    lines.push(
      `  image-with-a-long-name-number-${String(i).padStart(3, "0")}:`,
      `    repository: ${registryHost}/acme/missing-${i}`,
      `    policy: { range: "^1.0.0" }`,
    );
  lines.push("  shop:", `    repository: ${registryHost}/acme/shop`, `    policy: { range: "^1.0.0" }`);
  lines.push("environments:");
  for (let e = 0; e < environments; e++)
    lines.push(
      `  environment-${String(e).padStart(3, "0")}:`,
      `    paths: [overlays/prod]`,
      `    update: manual`,
      `    merge: review`,
    );
  return lines.join("\n") + "\n";
}

describe("GitHub's size limits", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("cuts a dashboard longer than 65,536 characters with a link to the rest, and /hold still lands in the state ref", async () => {
    world = await startWorld({ ci: false });
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "main",
      { ".github/ferry.yml": bigConfig(world.registry.host, 30, 25) },
      "Many environments",
      { as: "mona" },
    );
    await world.settle();
    const issue = await world.openIssue();
    expect(await commandReactions(world, issue, "/hold environment-007")).toEqual(["eyes", "rocket"]);
    const state = await inspect.readFile(world.emu, "acme", "config", "refs/ferry/state", "state.json");
    expect(Object.keys((JSON.parse(state ?? "{}") as { holds: object }).holds)).toEqual(["environment-007"]);
    const found = await dashboards(world);
    expect(found).toHaveLength(1);
    const body = found[0]!.body ?? "";
    expect(body.length).toBeLessThanOrEqual(LIMIT);
    expect(body).toContain("cut to GitHub's limit of 65,536 characters");
    expect(body).toContain(`${world.emu.webUrl}/acme/config/tree/`);
    expect(body).toContain("| environment\\-000 |");
  });
});

/** 20 images with long names, each pinned at 1.0.0 in staging and prod. */
function manyImages(registryHost: string): { config: string; overlay: string; names: string[] } {
  const names = Array.from(
    { length: 20 },
    (_, i) => `image-with-a-rather-long-name-${String(i).padStart(2, "0")}`,
  );
  const config = [
    "images:",
    ...names.flatMap((name) => [
      `  ${name}:`,
      `    repository: ${registryHost}/acme/${name}`,
      `    policy: { range: "^1.0.0" }`,
    ]),
    "environments:",
    "  staging:",
    "    paths: [overlays/staging]",
    "    update: auto",
    "    merge: review",
  ].join("\n");
  const overlay = [
    "apiVersion: kustomize.config.k8s.io/v1beta1",
    "kind: Kustomization",
    "resources:",
    "  - deployment.yaml",
    "images:",
    ...names.flatMap((name) => [`  - name: ${registryHost}/acme/${name}`, `    newTag: "1.0.0"`]),
  ].join("\n");
  return { config: `${config}\n`, overlay: `${overlay}\n`, names };
}

describe("a promotion of more images than a title can name", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("opens one PR titled with the count, every image listed in the body", async () => {
    world = await startWorld({ ci: false });
    const { config, overlay, names } = manyImages(world.registry.host);
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "main",
      { ".github/ferry.yml": config, "overlays/staging/kustomization.yaml": overlay },
      "Twenty images",
      { as: "mona" },
    );
    for (const name of names) await pushImage(world.registry.url, `acme/${name}`, "1.1.0", { content: name });
    await world.settle();
    await world.server.scanNow();
    await world.settle();
    const pulls = await world.pulls("open");
    expect(pulls.map((pull) => pull.title)).toEqual(["Promote 20 images to staging"]);
    const plan = parseBody(pulls[0]!.body);
    expect(plan?.changes.map((change) => change.image).sort()).toEqual(names);
    for (const name of names) expect(pulls[0]!.body).toContain(name.replace(/-/g, "\\-"));
  });
});

describe("a ferry/config check with more than 50 annotations", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("annotates every one of 120 warnings: the run, then updates of it, 50 at a time", async () => {
    world = await startWorld({ ci: false });
    await actAs.createBranch(world.emu, "acme", "config", "many", "main", { as: "mona" });
    // 120 images that no file of the one environment names: a warning each.
    const head = await actAs.commit(
      world.emu,
      "acme",
      "config",
      "many",
      { ".github/ferry.yml": bigConfig(world.registry.host, 1, 120) },
      "Many images",
      { as: "mona" },
    );
    await actAs.openPullRequest(world.emu, "acme", "config", { head: "many", title: "Many", as: "mona" });
    await world.settle();
    const { data } = await world.as.mona.rest.checks.listForRef({ owner: "acme", repo: "config", ref: head });
    const run = data.check_runs.find((check) => check.name === "ferry/config");
    expect(run?.conclusion).toBe("success");
    const annotations = await world.as.mona.paginate(world.as.mona.rest.checks.listAnnotations, {
      owner: "acme",
      repo: "config",
      check_run_id: run!.id,
      per_page: 100,
    });
    expect(annotations.filter((annotation) => annotation.message?.includes("missing-119"))).toHaveLength(1);
    expect(annotations.length).toBeGreaterThanOrEqual(120);
  });
});

describe("team reviewers without access to the config repository", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("/promote prod still opens the PR, labelled, and the reply says which reviewers GitHub refused", async () => {
    world = await startWorld({ ci: true });
    // The team exists but was never given access to acme/config.
    repos.createTeam(world.emu, "acme", "release", ["mona"]);
    const config = await inspect.readFile(world.emu, "acme", "config", "main", ".github/ferry.yml");
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "main",
      {
        ".github/ferry.yml": config!.replace(
          "    merge: review\n",
          "    merge: review\n    reviewers: { teams: [acme/release] }\n",
        ),
      },
      "Ask the release team to review prod",
      { as: "mona" },
    );
    await world.push("1.8.0");
    const issue = await world.openIssue();
    expect(await commandReactions(world, issue, "/promote prod")).toEqual(["eyes", "rocket"]);
    const prod = (await world.pulls("open")).filter((pull) => pull.head.ref === "ferry/prod");
    expect(prod).toHaveLength(1);
    const { data: labelled } = await world.as.mona.rest.issues.get({
      owner: "acme",
      repo: "config",
      issue_number: prod[0]!.number,
    });
    expect(labelled.labels.map((label) => (typeof label === "string" ? label : label.name))).toContain(
      "ferry",
    );
    const replies = inspect.listComments(world.emu, "acme", "config", issue).map((comment) => comment.body);
    expect(replies.at(-1)).toContain(`Opened #${prod[0]!.number}, but GitHub refused to request reviews`);
    expect(replies.at(-1)).toContain("`acme/release`");
  });
});

describe("a config repository whose recursive tree GitHub cuts (truncated: true)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("plans from the environments' own folders: a push still opens the staging PR with the one edit", async () => {
    world = await startWorld({ ci: false });
    // The repository has 9 entries; GitHub would cut it past 100,000.
    repos.setRepoSettings(world.emu, "acme", "config", { treeEntryLimit: 4 });
    await world.push("1.8.0");
    const pulls = await world.pulls("open");
    expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
    const { data: files } = await world.as.mona.rest.pulls.listFiles({
      owner: "acme",
      repo: "config",
      pull_number: pulls[0]!.number,
    });
    expect(files.map((file) => [file.filename, file.additions, file.deletions])).toEqual([
      ["overlays/staging/kustomization.yaml", 1, 1],
    ]);
  });

  it("names the limit and the folder when an environment's folder alone is too big to list", async () => {
    world = await startWorld({ ci: false });
    repos.setRepoSettings(world.emu, "acme", "config", { treeEntryLimit: 1 });
    const issue = await world.openIssue();
    expect(await commandReactions(world, issue, "/promote staging")).toEqual(["-1", "eyes"]);
    const reply = inspect.listComments(world.emu, "acme", "config", issue).at(-1)?.body ?? "";
    expect(reply).toContain(
      "overlays/staging has more entries than GitHub lists in one request (100,000 entries or 7 MB)",
    );
  });
});
