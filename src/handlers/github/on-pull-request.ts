import { checkConfigPullRequest } from "../../app/check-config.js";
import { checkDiffPullRequest } from "../../app/diff-pull-request.js";
import { guardFerryPull } from "../../app/guard-ferry-pull.js";
import { recordMerge } from "../../app/record-merge.js";
import { postPullWindowStatus } from "../../app/window-status.js";
import { parseBranchName } from "../../core/pr/branch.js";
import { type HandlerEvent, type HandlerServices, type RepositoryPayload, repoOf } from "./services.js";

interface PullRequestPayload extends RepositoryPayload {
  action: string;
  number: number;
  pull_request: {
    number: number;
    node_id: string;
    state: string;
    merged?: boolean | null;
    head: { ref: string; sha: string; repo?: { full_name: string } | null };
    base: { ref: string; sha?: string };
    title: string;
    body?: string | null;
    labels?: { name?: string }[];
    user?: { login: string } | null;
  };
}

/** GitHub lists at most this many of a pull request's files: a PR that long may change any file. */
const MAX_LISTED_FILES = 3000;

/**
 * pull_request: the config check on PRs touching ferry.yml, the diff check on PRs touching an
 * environment (Ferry's own included); floors when a Ferry PR merges.
 */
export async function onPullRequest(
  event: HandlerEvent<PullRequestPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  const { owner, repo } = repoOf(payload);
  const pull = payload.pull_request;
  const deps = () => services.depsFor(event.octokit, owner, repo);
  const appLogin = deps().appLogin;
  // Ferry's own PRs never touch the config, so they need no config check. Its own: opened by the
  // app, not merely from a branch named `ferry/<env>` (anyone with write access can push one).
  const ferrys =
    parseBranchName(pull.head.ref) !== undefined && appLogin !== undefined && pull.user?.login === appLogin;
  if (
    payload.action === "synchronize" &&
    ferrys &&
    payload.sender !== undefined &&
    payload.sender.login !== appLogin
  ) {
    // Someone else pushed into Ferry's PR: never merged, the branch is rebuilt from Ferry's plan.
    const pusher = payload.sender.login;
    services.queue.enqueue(`guard:${owner}/${repo}#${pull.number}@${pull.head.sha}`, () =>
      guardFerryPull(deps(), pull.number, pusher),
    );
  }
  // Every page (GitHub lists 3,000 at most), read once for all the checks.
  let listed: Promise<{ filename: string; previous_filename?: string }[]> | undefined;
  const listFiles = () => (listed ??= deps().github.listChangedFiles!(pull.number));
  const opened = ["opened", "synchronize", "reopened"].includes(payload.action);
  // Only when the diff check is on: otherwise not even the file list is read for it.
  if (opened && pull.base.sha && deps().diff) {
    const baseSha = pull.base.sha;
    services.queue.enqueue(`diff-check:${owner}/${repo}#${pull.number}@${pull.head.sha}`, async () => {
      const files = await listFiles();
      await checkDiffPullRequest(deps(), {
        number: pull.number,
        headSha: pull.head.sha,
        baseSha,
        changedFiles: files.flatMap((file) =>
          file.previous_filename ? [file.filename, file.previous_filename] : [file.filename],
        ),
        listCut: files.length >= MAX_LISTED_FILES,
        fork: pull.head.repo?.full_name.toLowerCase() !== `${owner}/${repo}`.toLowerCase(),
        ferrys,
      });
    });
  }
  // `ferry/window` on every PR head, when the base's config has a change window or freeze.
  if (opened && pull.base.sha) {
    const baseSha = pull.base.sha;
    services.queue.enqueue(`window-status:${owner}/${repo}@${pull.head.sha}`, () =>
      postPullWindowStatus(deps(), {
        headSha: pull.head.sha,
        baseSha,
        changedFiles: async () => {
          const files = await listFiles();
          return {
            files: files.flatMap((file) =>
              file.previous_filename ? [file.filename, file.previous_filename] : [file.filename],
            ),
            cut: files.length >= MAX_LISTED_FILES,
          };
        },
      }),
    );
  }
  if (opened && !ferrys) {
    services.queue.enqueue(`config-check:${owner}/${repo}@${pull.head.sha}`, async () => {
      const files = await listFiles();
      await checkConfigPullRequest(deps(), {
        headSha: pull.head.sha,
        changedFiles: files.map((file) => file.filename),
        listCut: files.length >= MAX_LISTED_FILES,
      });
    });
  }
  if (payload.action === "closed" && pull.merged && ferrys) {
    services.queue.enqueue(`merged:${owner}/${repo}#${pull.number}`, () =>
      recordMerge(deps(), {
        number: pull.number,
        nodeId: pull.node_id,
        state: "closed",
        merged: true,
        headRef: pull.head.ref,
        headSha: pull.head.sha,
        baseRef: pull.base.ref,
        title: pull.title,
        body: pull.body ?? "",
        labels: (pull.labels ?? []).map((label) => label.name ?? ""),
        autoMerge: false,
        author: pull.user?.login ?? "",
        ...(pull.head.repo ? { headRepo: pull.head.repo.full_name } : {}),
      }),
    );
  }
}
