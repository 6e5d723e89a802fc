import type { GitHubStateRef } from "../../app/github-port.js";
import { STATE_FILE, STATE_REF } from "../../app/github-port.js";
import { type GitHubRepoContext, refCommit, status } from "./github-repo-context.js";

/** The state ref: its head, and a commit of the state file moved onto it by compare-and-swap (`GitHubStateRef`). */
export function stateRefOf(ctx: GitHubRepoContext): GitHubStateRef {
  return {
    stateHead: () => stateHead(ctx),
    writeStateCommit: (parent, content, message) => writeStateCommit(ctx, parent, content, message),
  };
}

function stateHead(ctx: GitHubRepoContext): Promise<string | undefined> {
  return refCommit(ctx, STATE_REF);
}

async function writeStateCommit(
  ctx: GitHubRepoContext,
  parent: string | undefined,
  content: string,
  message: string,
): Promise<"written" | "conflict"> {
  // No base tree: the state commits carry the state file alone, unrelated to the branches.
  const tree = await ctx.octokit.rest.git.createTree({
    ...ctx.r,
    tree: [{ path: STATE_FILE, mode: "100644", type: "blob", content }],
  });
  const commit = await ctx.octokit.rest.git.createCommit({
    ...ctx.r,
    message,
    tree: tree.data.sha,
    parents: parent === undefined ? [] : [parent],
  });
  const sha = commit.data.sha;
  try {
    if (parent === undefined) await ctx.octokit.rest.git.createRef({ ...ctx.r, ref: STATE_REF, sha });
    else
      await ctx.octokit.rest.git.updateRef({
        ...ctx.r,
        ref: STATE_REF.slice("refs/".length),
        sha,
        force: false,
      });
    return "written";
  } catch (error) {
    if (status(error) !== 422) throw error;
    // A retried request that had in fact landed leaves the ref at our commit: that is success.
    return (await stateHead(ctx)) === sha ? "written" : "conflict";
  }
}
