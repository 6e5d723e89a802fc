/**
 * `PUT /repos/{o}/{r}/pulls/{n}/update-branch` (https://docs.github.com/en/rest/pulls/pulls#update-a-pull-request-branch):
 * "Updates the pull request branch with the latest upstream changes by merging HEAD from the base
 * branch into the pull request branch" — a merge commit (parents: head, base), so the head branch's
 * rulesets apply to it as to any ref write (`required_linear_history` refuses it). 202 with
 * "Updating pull request branch."; 422 when `expected_head_sha` is not the head or the merge conflicts.
 */
import { onRefChanged } from "./emulator-pull-effects.js";
import { authorizeRepo } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import { validationFailed } from "./router.js";
import { findPull } from "./routes-pulls.js";
import { refuseRuleViolations } from "./rulesets.js";

export function registerUpdateBranchRoute(emu: GitHubEmulator): void {
  emu.router.add("PUT", "/repos/:owner/:repo/pulls/:number/update-branch", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, ["pull_requests", "contents"], "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const pull = findPull(repo, ctx.params.number!).pull!;
    // A fork's branch is written only when its owner lets maintainers edit the PR.
    const headRepo = pull.headRepo ?? repo;
    if (pull.headRepo && !pull.maintainerCanModify)
      throw validationFailed(
        "Validation Failed: the pull request's head is a fork that maintainers may not modify",
      );
    const ref = `refs/heads/${pull.headRef}`;
    const head = await headRepo.git.readRef(ref);
    const base = await repo.git.readRef(`refs/heads/${pull.baseRef}`);
    if (!head || !base) throw validationFailed("Reference does not exist");
    const expected = ctx.body.expected_head_sha;
    if (typeof expected === "string" && expected !== head)
      throw validationFailed("expected head sha didn't match current head ref.");
    if (!(await repo.git.isAncestor(base, head))) {
      const outcome = await repo.git.mergeCommits(head, base);
      if (!outcome.clean) throw validationFailed("merge conflict between base and head");
      const identity = emu.identityOf(login);
      const sha = await repo.git.commitTree({
        tree: outcome.tree,
        parents: [head, base],
        message: `Merge branch '${pull.baseRef}' into ${pull.headRef}\n`,
        author: identity,
        committer: identity,
      });
      await refuseRuleViolations(emu, ctx.actor, headRepo, ref, head, sha);
      if (headRepo !== repo) await headRepo.git.fetchFrom(repo.git, sha);
      if (!(await headRepo.git.compareAndSwapRef(ref, sha, head)))
        throw validationFailed("expected head sha didn't match current head ref.");
      await onRefChanged(emu, headRepo, ref, head, sha, login);
    }
    return {
      status: 202,
      body: {
        message: "Updating pull request branch.",
        url: `${emu.webUrl}/${repo.owner}/${repo.name}/pull/${ctx.params.number}`,
      },
    };
  });
}
