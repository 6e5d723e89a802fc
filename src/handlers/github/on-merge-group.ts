import { checkDiffPullRequest } from "../../app/diff-pull-request.js";
import { postMergeGroupWindowStatus } from "../../app/window-status.js";
import { type HandlerEvent, type HandlerServices, type RepositoryPayload, repoOf } from "./services.js";

interface MergeGroupPayload extends RepositoryPayload {
  action: string;
  merge_group: { head_sha: string; base_sha: string };
}

/**
 * merge_group checks_requested: the diff check on the group commit against its base, so that a
 * required `ferry/diff` reports there too and the queue never waits for it; `ferry/window` likewise.
 */
export async function onMergeGroup(
  event: HandlerEvent<MergeGroupPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  const { owner, repo } = repoOf(payload);
  if (payload.action !== "checks_requested") return;
  const group = payload.merge_group;
  services.queue.enqueue(`window-status:${owner}/${repo}@${group.head_sha}`, () =>
    postMergeGroupWindowStatus(services.depsFor(event.octokit, owner, repo), {
      headSha: group.head_sha,
      baseSha: group.base_sha,
    }),
  );
  if (!services.depsFor(event.octokit, owner, repo).diff) return;
  services.queue.enqueue(`diff-check:${owner}/${repo}@${group.head_sha}`, async () => {
    await checkDiffPullRequest(services.depsFor(event.octokit, owner, repo), {
      headSha: group.head_sha,
      baseSha: group.base_sha,
    });
  });
}
