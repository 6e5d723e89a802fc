/**
 * Who may promote what (docs/config.md "Who may promote what"): an image's own `promoters` on top
 * of the environment's rule, checked live for every command that changes an environment, with
 * rules and CODEOWNERS read from the default branch only.
 */
import { describe, expect, it } from "vitest";
import { checkConfigPullRequest } from "../../src/app/check-config.js";
import { runCommentCommands, type CommentInput } from "../../src/app/run-command.js";
import { FakeGitHub, FakeRegistry, fakeDeps } from "../support/app-fakes.js";

const CONFIG = `images:
  cart:
    repository: ghcr.io/acme/cart
    promoters: { teams: [acme/team-a] }
  pay:
    repository: ghcr.io/acme/pay
    promoters: { codeowners: true }
environments:
  prod:
    paths: [apps]
    update: manual
    merge: review
    promoters: { permission: write }
`;

const overlay = (image: string) =>
  `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n  - name: ghcr.io/acme/${image}\n    newTag: "1.0.0"\n`;

let commentId = 500;
function comment(body: string, author: string): CommentInput {
  return {
    commentId: commentId++,
    issueNumber: 1,
    issueState: "open",
    body,
    author,
    authorType: "User",
    action: "created",
  };
}

function world() {
  const github = new FakeGitHub({
    ".github/ferry.yml": CONFIG,
    ".github/CODEOWNERS": "* @mona\n/apps/pay/ @acme/team-b\n",
    "apps/cart/kustomization.yaml": overlay("cart"),
    "apps/pay/kustomization.yaml": overlay("pay"),
  });
  const registry = new FakeRegistry();
  for (const image of ["cart", "pay"])
    for (const tag of ["1.0.0", "1.1.0"]) registry.push(`ghcr.io/acme/${image}`, tag);
  for (const login of ["alice", "bob"]) github.permissions.set(login, "write");
  github.permissions.set("root", "admin");
  github.teams.set("acme/team-a", ["alice"]);
  github.teams.set("acme/team-b", ["bob"]);
  const deps = fakeDeps(github, registry);
  const run = async (body: string, author: string) => {
    const outcome = await runCommentCommands(deps, comment(body, author));
    return { outcome, reply: github.comments.at(-1)?.body ?? "" };
  };
  return { github, deps, run };
}

const prodPulls = (github: FakeGitHub) =>
  github.pulls.filter((pull) => pull.headRef.startsWith("ferry/prod"));

describe("image promoters", () => {
  it("lets a member of team A promote A's app and refuses B's, naming the image and who may", async () => {
    const { github, run } = world();
    expect((await run("/promote prod cart@1.1.0", "alice")).outcome).toBe("done");
    expect(prodPulls(github)).toHaveLength(1);
    const refused = await run("/promote prod pay@1.1.0", "alice");
    expect(refused.outcome).toBe("refused");
    expect(refused.reply).toBe(
      "@alice you may not promote pay in prod: only members of @acme/team-b or a repository admin may",
    );
  });

  it("gives pay to its CODEOWNERS: team B promotes it, and an admin anything", async () => {
    const { github, run } = world();
    expect((await run("/promote prod pay@1.1.0", "bob")).outcome).toBe("done");
    expect((await run("/promote prod cart@1.1.0", "bob")).outcome).toBe("refused");
    expect((await run("/promote prod cart@1.1.0", "root")).outcome).toBe("done");
    expect(prodPulls(github)).toHaveLength(1);
  });

  it("needs every image a command touches: /promote prod and /hold prod touch both apps", async () => {
    const { github, run } = world();
    const promoted = await run("/promote prod", "alice");
    expect(promoted.outcome).toBe("refused");
    expect(promoted.reply).toContain("you may not promote pay in prod");
    expect(prodPulls(github)).toHaveLength(0);
    const held = await run("/hold prod", "alice");
    expect(held.outcome).toBe("refused");
    expect(held.reply).toContain("you may not hold pay in prod");
    expect((await run("/hold prod", "root")).outcome).toBe("done");
    expect((await run("/unhold prod", "bob")).reply).toContain("you may not unhold cart in prod");
  });

  it("still applies the environment's rule: a team member without write is refused for their own app", async () => {
    const { github, run } = world();
    github.teams.set("acme/team-a", ["alice", "reader"]);
    github.permissions.set("reader", "read");
    const refused = await run("/promote prod cart@1.1.0", "reader");
    expect(refused.outcome).toBe("refused");
    expect(refused.reply).toContain("you need write permission to change prod");
  });

  it("reads CODEOWNERS from the default branch only: a PR granting team A pay grants nothing until merged", async () => {
    const { github, run } = world();
    github.branches.set("grab", github.branches.get("main")!);
    const grab = { ".github/CODEOWNERS": "* @mona\n/apps/pay/ @acme/team-a\n" };
    github.push("grab", grab);
    expect((await run("/promote prod pay@1.1.0", "alice")).outcome).toBe("refused");
    github.push("main", grab);
    expect((await run("/promote prod pay@1.1.0", "alice")).outcome).toBe("done");
  });

  it("reads the rules from the default branch's config only: a PR's ferry.yml granting team B cart grants nothing", async () => {
    const { github, run } = world();
    github.branches.set("grab", github.branches.get("main")!);
    github.push("grab", {
      ".github/ferry.yml": CONFIG.replace("teams: [acme/team-a]", "teams: [acme/team-b]"),
    });
    expect((await run("/promote prod cart@1.1.0", "bob")).outcome).toBe("refused");
    expect((await run("/promote prod cart@1.1.0", "alice")).outcome).toBe("done");
  });

  it("says on the PR's ferry/config check who gains and loses promote rights", async () => {
    const { github, deps } = world();
    github.branches.set("grab", github.branches.get("main")!);
    const changes = {
      ".github/CODEOWNERS": "* @mona\n/apps/pay/ @acme/team-a\n",
      ".github/ferry.yml": CONFIG.replace("teams: [acme/team-a]", "teams: [acme/team-a, acme/team-c]"),
    };
    const head = github.push("grab", changes);
    await checkConfigPullRequest(deps, { headSha: head, changedFiles: Object.keys(changes) });
    const run = github.checkRuns.at(-1)!;
    expect(run.title).toContain("who may promote changes");
    expect(run.summary).toContain(
      [
        "- prod / cart: members of @acme/team-c may now promote",
        "- prod / pay: members of @acme/team-a may now promote",
        "- prod / pay: members of @acme/team-b may no longer promote",
      ].join("\n"),
    );
  });

  it("requests the reviewers of each image the PR changes, besides the environment's", async () => {
    const reviewersAfter = async (command: string) => {
      const { github, deps } = world();
      github.push("main", {
        ".github/ferry.yml": CONFIG.replace(
          "    promoters: { codeowners: true }\n",
          "    promoters: { codeowners: true }\n    reviewers: { teams: [acme/pay-reviewers], users: [carol] }\n",
        ).replace("    merge: review\n", "    merge: review\n    reviewers: { users: [dave] }\n"),
      });
      await runCommentCommands(deps, comment(command, "root"));
      return prodPulls(github).map((pull) => pull.reviewers);
    };
    expect(await reviewersAfter("/promote prod cart@1.1.0")).toEqual([["dave"]]);
    expect(await reviewersAfter("/promote prod pay@1.1.0")).toEqual([
      ["dave", "carol", "acme/pay-reviewers"],
    ]);
  });

  it("runs the check on a PR that changes CODEOWNERS alone", async () => {
    const { github, deps } = world();
    github.branches.set("grab", github.branches.get("main")!);
    const head = github.push("grab", { CODEOWNERS: "/apps/ @acme/team-a\n" });
    expect(await checkConfigPullRequest(deps, { headSha: head, changedFiles: ["CODEOWNERS"] })).toBe(
      "success",
    );
    // .github/CODEOWNERS comes first and is unchanged: nobody gains anything.
    expect(github.checkRuns.at(-1)!.summary).toContain("Who may promote: no change.");
  });
});
