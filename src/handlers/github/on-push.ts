import { checkConfigOnDefaultBranch } from "../../app/check-config.js";
import { syncRepository } from "../../app/sync-repository.js";
import { CONFIG_PATH } from "../../core/config/load-config.js";
import { type HandlerEvent, type HandlerServices, type RepositoryPayload, repoOf } from "./services.js";

interface PushPayload extends RepositoryPayload {
  ref: string;
  after: string;
  deleted?: boolean;
  commits?: { added?: string[]; modified?: string[]; removed?: string[] }[];
  head_commit?: { added?: string[]; modified?: string[]; removed?: string[] } | null;
}

/** push to the default branch: re-check the config when it changed, then sync (closes PRs already on base). */
export async function onPush(event: HandlerEvent<PushPayload>, services: HandlerServices): Promise<void> {
  const { payload } = event;
  const branch = payload.repository.default_branch;
  if (payload.deleted || branch === undefined || payload.ref !== `refs/heads/${branch}`) return;
  const { owner, repo } = repoOf(payload);
  const touched = [...(payload.commits ?? []), ...(payload.head_commit ? [payload.head_commit] : [])].some(
    (commit) =>
      [...(commit.added ?? []), ...(commit.modified ?? []), ...(commit.removed ?? [])].includes(CONFIG_PATH),
  );
  services.queue.enqueue(`sync:${owner}/${repo}`, async () => {
    const deps = services.depsFor(event.octokit, owner, repo);
    if (touched && !(await checkConfigOnDefaultBranch(deps, { branch, headSha: payload.after }))) return;
    await syncRepository(deps, { reason: "push", baseBranch: branch });
  });
}
