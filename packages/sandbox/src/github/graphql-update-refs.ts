/**
 * GraphQL `updateRefs(input: { repositoryId, refUpdates: [{ name, afterOid, beforeOid, force }] })`
 * (https://docs.github.com/en/graphql/reference/mutations#updaterefs, input `RefUpdate`: "beforeOid:
 * The value this ref needs to point to before the update", "force: Force a non fast-forward
 * update"). Unlike `PATCH /git/refs` with `force: true`, a forced update here can be a
 * compare-and-swap. Each update is judged as the REST ref writes are (fast-forward unless forced,
 * the `workflows` permission, repository rulesets); the batch stops at the first refusal, whose
 * words come back in `errors[]` (HTTP 200). What GitHub answers for a stale `beforeOid` is not
 * documented: the emulator refuses it with REST's "Reference update failed".
 */
import { onRefChanged } from "./emulator-pull-effects.js";
import { authorize } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import { ApiError, type Reply, type RequestContext } from "./router.js";
import { refuseWorkflowChange } from "./routes-repos.js";
import { refuseRuleViolations } from "./rulesets.js";

function failure(type: string, message: string): Reply {
  return {
    body: {
      data: { updateRefs: null },
      errors: [{ type, path: ["updateRefs"], locations: [{ line: 2, column: 3 }], message }],
    },
  };
}

export async function updateRefs(
  emu: GitHubEmulator,
  ctx: RequestContext,
  input: Record<string, unknown>,
): Promise<Reply> {
  const repo = [...emu.repos.values()].find((candidate) => candidate.nodeId === input.repositoryId);
  if (!repo)
    return failure(
      "NOT_FOUND",
      `Could not resolve to a node with the global id of '${String(input.repositoryId)}'`,
    );
  try {
    authorize(emu, ctx.actor, repo, "contents", "write", "write");
  } catch (error) {
    if (error instanceof ApiError) return failure("FORBIDDEN", "Resource not accessible by integration");
    throw error;
  }
  const login = emu.actingLogin(ctx.actor);
  const updates = Array.isArray(input.refUpdates) ? (input.refUpdates as Record<string, unknown>[]) : [];
  for (const update of updates) {
    const ref = String(update.name);
    const after = String(update.afterOid);
    const force = update.force === true;
    const current = await repo.git.readRef(ref);
    if (!current) return failure("UNPROCESSABLE", "Reference does not exist");
    if (typeof update.beforeOid === "string" && update.beforeOid !== current)
      return failure("UNPROCESSABLE", "Reference update failed");
    if ((await repo.git.objectType(after)) === undefined)
      return failure("UNPROCESSABLE", "Object does not exist");
    if (current === after) continue;
    if (!force && !(await repo.git.isAncestor(current, after)))
      return failure("UNPROCESSABLE", "Update is not a fast forward");
    try {
      await refuseWorkflowChange(emu, ctx, repo, ref, current, after);
      await refuseRuleViolations(emu, ctx.actor, repo, ref, current, after);
    } catch (error) {
      if (error instanceof ApiError) return failure("UNPROCESSABLE", error.message);
      throw error;
    }
    if (!(await repo.git.compareAndSwapRef(ref, after, current)))
      return failure("UNPROCESSABLE", "Reference update failed");
    await onRefChanged(emu, repo, ref, current, after, login, { forced: force });
  }
  return { body: { data: { updateRefs: { clientMutationId: input.clientMutationId ?? null } } } };
}
