import { randomUUID } from "node:crypto";
import type { GitHubNotifyLedger } from "../../app/github-port.js";
import { TransientError } from "../../core/errors.js";
import { claimInLedger, LEDGER_FILE, LEDGER_REF } from "../../core/notify/ledger.js";
import { type GitHubRepoContext, orUndefinedOn404, status } from "./github-repo-context.js";

/** Compare-and-swap attempts of one claim (each lost race is another replica's claim landing). */
const CLAIM_ATTEMPTS = 6;

/**
 * The notification ledger on `LEDGER_REF` (core/notify/ledger.ts): read the head and its file,
 * add the id, move the ref by compare-and-swap (never forced). Four requests a claim, two for a
 * duplicate; the ref is outside refs/heads, so no branch, PR or push event ever shows it.
 */
export function ledgerOf(ctx: GitHubRepoContext): Required<GitHubNotifyLedger> {
  const ref = LEDGER_REF.slice("refs/".length);
  async function head(): Promise<string | undefined> {
    const response = await orUndefinedOn404(ctx.octokit.rest.git.getRef({ ...ctx.r, ref }));
    return response?.data.object.sha;
  }
  async function read(commit: string): Promise<string | undefined> {
    const response = await orUndefinedOn404(
      ctx.octokit.rest.repos.getContent({ ...ctx.r, path: LEDGER_FILE, ref: commit }),
    );
    const data = response?.data as { content?: string; encoding?: string } | undefined;
    if (!data?.content) return undefined;
    return Buffer.from(data.content, (data.encoding as BufferEncoding | undefined) ?? "base64").toString(
      "utf8",
    );
  }
  async function claimNotification(eventId: string): Promise<"claimed" | "seen"> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const parent = await head();
      const claim = claimInLedger(parent ? await read(parent) : undefined, eventId);
      if (claim === "seen") return "seen";
      const tree = await ctx.octokit.rest.git.createTree({
        ...ctx.r,
        tree: [{ path: LEDGER_FILE, mode: "100644", type: "blob", content: claim.content }],
      });
      const commit = await ctx.octokit.rest.git.createCommit({
        ...ctx.r,
        // A nonce of this claim: two replicas claiming the same id from the same parent in the same
        // second would write the same commit, and both would see the ref "already at" theirs.
        message: `ferry: notification ${eventId}\n\nclaim ${randomUUID()}`,
        tree: tree.data.sha,
        parents: parent ? [parent] : [],
      });
      try {
        if (parent === undefined)
          await ctx.octokit.rest.git.createRef({ ...ctx.r, ref: LEDGER_REF, sha: commit.data.sha });
        else await ctx.octokit.rest.git.updateRef({ ...ctx.r, ref, sha: commit.data.sha, force: false });
        return "claimed";
      } catch (error) {
        if (status(error) !== 422) throw error;
        // A retried request that had in fact landed leaves the ref at our commit.
        if ((await head()) === commit.data.sha) return "claimed";
      }
    }
    throw new TransientError(
      "notify-ledger-contended",
      `the notification ledger moved ${CLAIM_ATTEMPTS} times`,
    );
  }
  return { claimNotification };
}
