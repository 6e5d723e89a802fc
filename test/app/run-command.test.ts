import { describe, expect, it } from "vitest";
import { TransientError } from "../../src/core/errors.js";
import { parseBody } from "../../src/core/pr/body.js";
import { parseState } from "../../src/core/pr/dashboard.js";
import { runCommentCommands, type CommentInput } from "../../src/app/run-command.js";
import { syncRepository } from "../../src/app/sync-repository.js";
import { recordMerge } from "../../src/app/record-merge.js";
import { configRepo, FakeGitHub, FakeRegistry, fakeDeps } from "../support/app-fakes.js";

let commentId = 100;
function comment(body: string, author = "mona", extra: Partial<CommentInput> = {}): CommentInput {
  return {
    commentId: commentId++,
    issueNumber: 1,
    issueState: "open",
    body,
    author,
    authorType: "User",
    action: "created",
    ...extra,
  };
}

/** staging runs 1.8.0 (merged by Ferry), prod runs 1.7.0. */
async function released() {
  const github = new FakeGitHub(configRepo());
  const registry = new FakeRegistry();
  registry.push("ghcr.io/acme/shop", "1.7.0");
  const digest = registry.push("ghcr.io/acme/shop", "1.8.0");
  const deps = fakeDeps(github, registry);
  await syncRepository(deps, { reason: "registry" });
  await recordMerge(deps, { ...github.pulls[0]! });
  github.permissions.set("mona", "maintain");
  github.permissions.set("hubot", "write");
  return { github, registry, deps, digest };
}

const prodPulls = (github: FakeGitHub) => github.pulls.filter((pull) => pull.headRef === "ferry/prod");

describe("/promote", () => {
  it("opens the prod PR with the exact digest staging runs, for a maintainer", async () => {
    const { github, deps, digest } = await released();
    const input = comment("/promote prod");
    expect(await runCommentCommands(deps, input)).toBe("done");
    expect(prodPulls(github)).toHaveLength(1);
    expect(parseBody(prodPulls(github)[0]!.body)?.changes[0]?.to).toEqual({ tag: "1.8.0", digest });
    expect(github.file("ferry/prod", "overlays/prod/kustomization.yaml")).toContain(digest);
    expect([...github.reactions.get(input.commentId)!]).toEqual(["eyes", "rocket"]);
  });

  it("opens the prod PR by creating its branch first, without a PR lookup or a reply: the PR links back to the issue", async () => {
    const { github, deps } = await released();
    const calls = github.calls.length;
    const commentsBefore = github.comments.length;
    expect(await runCommentCommands(deps, comment("/promote prod", "mona", { issueNumber: 7 }))).toBe("done");
    const made = github.calls.slice(calls);
    expect(made).not.toContain("findOpenPull");
    expect(made.filter((call) => call === "createCommit")).toHaveLength(1);
    expect(github.comments.length).toBe(commentsBefore);
    expect(prodPulls(github)[0]!.body).toContain("Requested in #7.");
    expect(prodPulls(github)[0]!.labels).toEqual(["ferry", "env:prod"]);
  });

  it("answers a repeated /promote through the existing branch: the open PR already carries it", async () => {
    const { github, deps } = await released();
    await runCommentCommands(deps, comment("/promote prod"));
    expect(await runCommentCommands(deps, comment("/promote prod"))).toBe("done");
    expect(prodPulls(github)).toHaveLength(1);
    expect(github.comments.at(-1)!.body).toBe(
      `#${prodPulls(github)[0]!.number} already carries this for prod.`,
    );
  });

  it("answers 👎 with a reason when the registry fails for now, instead of leaving only 👀 behind", async () => {
    const { github, registry } = await released();
    const unavailable = Object.assign(Object.create(registry) as FakeRegistry, {
      resolveDigest: () => Promise.reject(new TransientError("registry-unavailable", "ghcr.io answered 503")),
    });
    const input = comment("/promote staging shop@1.8.0");
    expect(await runCommentCommands(fakeDeps(github, unavailable), input)).toBe("failed");
    expect([...github.reactions.get(input.commentId)!]).toEqual(["eyes", "-1"]);
    expect(github.comments.at(-1)!.body).toBe(
      "@mona Ferry could not finish this command: ghcr.io answered 503. Try again in a while.",
    );
  });

  it("refuses an outsider with 👎 and a one-line reason, changing nothing", async () => {
    const { github, deps } = await released();
    const input = comment("/promote prod", "eve");
    expect(await runCommentCommands(deps, input)).toBe("refused");
    expect(prodPulls(github)).toHaveLength(0);
    expect(github.reactions.get(input.commentId)!.has("-1")).toBe(true);
    expect(github.comments.at(-1)!.body).toMatch(
      /^@eve you need maintain permission or membership of acme\/release/,
    );
  });

  it("refuses write access when the environment needs maintain", async () => {
    const { github, deps } = await released();
    expect(await runCommentCommands(deps, comment("/promote prod", "hubot"))).toBe("refused");
    expect(prodPulls(github)).toHaveLength(0);
  });

  it("accepts a member of a promoters team", async () => {
    const { github, deps } = await released();
    github.teams.set("acme/release", ["rel"]);
    expect(await runCommentCommands(deps, comment("/promote prod", "rel"))).toBe("done");
    expect(prodPulls(github)).toHaveLength(1);
  });

  it("ignores bots, Ferry itself and edited comments without reacting", async () => {
    const { github, deps } = await released();
    for (const input of [
      comment("/promote prod", "dependabot[bot]", { authorType: "Bot" }),
      comment("/promote prod", "ferry[bot]"),
      comment("/promote prod", "mona", { action: "edited" }),
    ]) {
      expect(await runCommentCommands(deps, input)).toBe("ignored");
      expect(github.reactions.get(input.commentId)).toBeUndefined();
    }
    expect(prodPulls(github)).toHaveLength(0);
  });

  it("handles a redelivered comment once", async () => {
    const { github, deps } = await released();
    const input = comment("/promote prod");
    await runCommentCommands(deps, input);
    const comments = github.comments.length;
    expect(await runCommentCommands(deps, input)).toBe("duplicate");
    expect(github.comments.length).toBe(comments);
    expect(prodPulls(github)).toHaveLength(1);
  });

  it("refuses commands on a closed issue or PR", async () => {
    const { github, deps } = await released();
    expect(await runCommentCommands(deps, comment("/promote prod", "mona", { issueState: "closed" }))).toBe(
      "refused",
    );
    expect(prodPulls(github)).toHaveLength(0);
  });

  it("refuses a tag staging does not run", async () => {
    const { github, deps } = await released();
    expect(await runCommentCommands(deps, comment("/promote prod shop@1.7.0"))).toBe("refused");
    expect(github.comments.at(-1)!.body).toMatch(/staging runs shop 1\.8\.0, not 1\.7\.0/);
  });

  it("waits until staging has soaked when it reports health", async () => {
    const { github, deps } = await released();
    const config = github
      .file("main", ".github/ferry.yml")!
      .replace("update: manual", "update: manual\n    soak: 30m");
    const head = github.push("main", { ".github/ferry.yml": config });
    // Reported on the config commit that carries what is promoted.
    github.health.set("staging", { sha: head, state: "success", since: new Date("2025-12-31T23:50:00Z") });
    expect(await runCommentCommands(deps, comment("/promote prod"))).toBe("refused");
    expect(github.comments.at(-1)!.body).toMatch(/healthy for 10m, less than its soak of 30m/);
  });

  it("waits, saying so, when staging never reported health (a soak never passes silently)", async () => {
    const { github, deps } = await released();
    const config = github
      .file("main", ".github/ferry.yml")!
      .replace("update: manual", "update: manual\n    soak: 30m");
    github.push("main", { ".github/ferry.yml": config });
    expect(await runCommentCommands(deps, comment("/promote prod"))).toBe("refused");
    expect(github.comments.at(-1)!.body).toMatch(
      /no health reported for staging by ferry's reconciler \(as ferry\[bot\]\)/,
    );
  });

  it("does not count health reported on a commit where staging ran other versions", async () => {
    const { github, deps } = await released();
    // The commit before staging took 1.8.0: healthy for hours, but with 1.7.0.
    const before = [...github.commits.keys()].find((id) =>
      github.commits.get(id)!.files["overlays/staging/kustomization.yaml"]?.includes('"1.7.0"'),
    )!;
    github.health.set("staging", { sha: before, state: "success", since: new Date("2025-12-31T12:00:00Z") });
    const config = github
      .file("main", ".github/ferry.yml")!
      .replace("update: manual", "update: manual\n    soak: 30m");
    github.push("main", { ".github/ferry.yml": config });
    expect(await runCommentCommands(deps, comment("/promote prod"))).toBe("refused");
    expect(github.comments.at(-1)!.body).toMatch(
      /no health reported for staging with the versions being promoted/,
    );
  });

  it("soaks on time alone when the config says so", async () => {
    const { github, deps } = await released();
    const config = github
      .file("main", ".github/ferry.yml")!
      .replace("update: manual", "update: manual\n    soak: { duration: 30m, basis: time }");
    github.push("main", { ".github/ferry.yml": config });
    expect(await runCommentCommands(deps, comment("/promote prod"))).toBe("done");
    expect(github.pulls.filter((pull) => pull.headRef === "ferry/prod")).toHaveLength(1);
  });
});

describe("/rollback, /hold, /unhold, /ferry status", () => {
  it("/rollback opens a PR restoring the previous version and holds the environment", async () => {
    const { github, registry, deps } = await released();
    expect(await runCommentCommands(deps, comment("/rollback staging"))).toBe("done");
    const pull = github.pulls.at(-1)!;
    expect(pull.title).toBe("Roll back shop 1.7.0 in staging");
    // staging merges automatically (no checks in this repo), so the rollback is already on main.
    expect(github.file("main", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.7.0"');
    const state = parseState(github.issues.find((issue) => issue.title === "Ferry dashboard")!.body);
    expect(state.holds.staging?.reason).toBe("rollback");
    registry.push("ghcr.io/acme/shop", "1.8.1");
    expect((await syncRepository(deps, { reason: "scan" })).environments.staging).toBe("held");
  });

  it("/hold stops automatic updates and /unhold resumes them", async () => {
    const { github, registry, deps } = await released();
    await runCommentCommands(deps, comment("/hold staging"));
    registry.push("ghcr.io/acme/shop", "1.8.1");
    await syncRepository(deps, { reason: "scan" });
    expect(github.pulls.filter((p) => p.headRef === "ferry/staging")).toHaveLength(1);
    await runCommentCommands(deps, comment("/unhold staging"));
    await syncRepository(deps, { reason: "scan" });
    expect(github.pulls.filter((p) => p.headRef === "ferry/staging")).toHaveLength(2);
  });

  it("/ferry status answers with the environments × images table", async () => {
    const { github, deps } = await released();
    expect(await runCommentCommands(deps, comment("/ferry status", "hubot"))).toBe("done");
    expect(github.comments.at(-1)!.body).toContain("| staging | shop | `1.8.0` |");
    expect(github.comments.at(-1)!.body).toContain("| prod | shop | `1.7.0` |");
  });
});
