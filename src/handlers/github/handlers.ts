import { CONFIG_PATH } from "../../core/config/load-config.js";
import { parseBranchName } from "../../core/pr/branch.js";
import { checkConfigOnDefaultBranch, checkConfigPullRequest } from "../../app/check-config.js";
import { checkDiffPullRequest } from "../../app/diff-pull-request.js";
import { guardFerryPull } from "../../app/guard-ferry-pull.js";
import { recordMerge } from "../../app/record-merge.js";
import { runCommentCommands } from "../../app/run-command.js";
import { syncRepository, type SyncTrigger } from "../../app/sync-repository.js";
import { parseCommands } from "../../core/pr/commands.js";
import { MAX_COMMANDS_PER_COMMENT } from "../../core/pr/reply-bounds.js";
import { mergeFerryPullAt } from "./merge-retry-handlers.js";
import { postMergeGroupWindowStatus, postPullWindowStatus } from "../../app/window-status.js";
import type { HandlerEvent, HandlerServices, RepositoryPayload } from "./services.js";

/**
 * GitHub webhook events → one use case each (thin). Work runs behind the ack on the queue; every
 * use case re-reads GitHub and the registry, so redelivered or reordered events converge
 * (docs/reliability.md rows 7–8).
 */

const repoOf = (payload: RepositoryPayload) => ({
  owner: payload.repository.owner.login,
  repo: payload.repository.name,
});

interface CommentPayload extends RepositoryPayload {
  action: string;
  comment: { id: number; body: string; user: { login: string; type: string } };
  issue: { number: number; state: string; pull_request?: unknown };
}

/**
 * issue_comment: commands, `created` only (the use case checks the action and the author again).
 * A comment without a command costs nothing; one with commands is admitted by the flood guard
 * first (each of its commands, at most MAX_COMMANDS_PER_COMMENT, spends one of the person's
 * hourly commands), so that nobody can spend the installation's API budget or flood a thread.
 */
export async function onIssueComment(
  event: HandlerEvent<CommentPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  if (payload.action !== "created" || payload.comment.user.type === "Bot") return;
  const body = payload.comment.body ?? "";
  const commands = parseCommands(body).length;
  if (commands === 0) return;
  const { owner, repo } = repoOf(payload);
  const repository = `${owner}/${repo}`;
  const author = payload.comment.user.login;
  // Every command a comment would run counts, whatever it does and however it ends.
  const decision = services.commandGuard.admit(
    repository,
    author,
    Math.min(commands, MAX_COMMANDS_PER_COMMENT),
  );
  if (decision.kind === "ignore") return;
  if (decision.kind === "warn") {
    services.queue.enqueue(`command-flood:${repository}:${author}`, () =>
      services
        .depsFor(event.octokit, owner, repo)
        .github.comment(
          payload.issue.number,
          `@${author} too many commands: further commands from you in ${repository} are ignored for ${decision.minutes} minutes.`,
        ),
    );
    return;
  }
  services.queue.enqueue(`comment:${repository}#${payload.comment.id}`, async () => {
    const outcome = await runCommentCommands(services.depsFor(event.octokit, owner, repo), {
      action: payload.action,
      commentId: payload.comment.id,
      issueNumber: payload.issue.number,
      issueState: payload.issue.state === "open" ? "open" : "closed",
      body,
      author,
      authorType: payload.comment.user.type,
      maxCommands: decision.commands,
      isPullRequest: payload.issue.pull_request !== undefined && payload.issue.pull_request !== null,
      ...(payload.repository.default_branch ? { defaultBranch: payload.repository.default_branch } : {}),
    });
    // Only refusals count against the comment burst; every command counts for the hour either way.
    if (outcome !== "refused") services.commandGuard.refund(repository, author);
  });
}

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
  // Every page: GitHub lists 100 files a page and 3,000 in all
  // (https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files). Read once for both checks.
  let listed: Promise<{ filename: string; previous_filename?: string }[]> | undefined;
  const listFiles = () =>
    (listed ??= event.octokit.paginate(event.octokit.rest.pulls.listFiles, {
      owner,
      repo,
      pull_number: pull.number,
      per_page: 100,
    }));
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

interface CheckPayload extends RepositoryPayload {
  action: string;
  check_suite?: {
    head_sha: string;
    head_branch?: string | null;
    conclusion?: string | null;
    status?: string | null;
  };
  check_run?: {
    head_sha: string;
    conclusion?: string | null;
    status?: string;
    check_suite?: { head_branch?: string | null };
  };
  sha?: string;
  state?: string;
  branches?: { name: string }[];
  workflow_run?: {
    head_sha: string;
    head_branch?: string | null;
    conclusion?: string | null;
    status?: string | null;
  };
}

/**
 * check_suite/check_run/status/workflow_run completions: in the config repo they may make a Ferry
 * PR mergeable; in a source repo a successful build makes its image eligible (CI gating), so the
 * installation's config repos that name that source are synced.
 */
export async function onChecksCompleted(
  event: HandlerEvent<CheckPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  const sha =
    payload.check_suite?.head_sha ??
    payload.check_run?.head_sha ??
    payload.workflow_run?.head_sha ??
    payload.sha;
  if (!sha) return;
  if (
    payload.state === "pending" ||
    (payload.action !== undefined && payload.action !== "completed" && event.name !== "status")
  )
    return;
  const { owner, repo } = repoOf(payload);
  const branches = [
    payload.check_suite?.head_branch,
    payload.check_run?.check_suite?.head_branch,
    payload.workflow_run?.head_branch,
    ...(payload.branches ?? []).map((b) => b.name),
  ];
  const onFerryBranch = branches.some(
    (branch) => typeof branch === "string" && parseBranchName(branch) !== undefined,
  );
  // Only Ferry's own branches carry PRs Ferry merges; other checks in the config repo are not its business.
  if (onFerryBranch) {
    const branch = branches.find(
      (name): name is string => typeof name === "string" && parseBranchName(name) !== undefined,
    )!;
    services.queue.enqueue(`checks:${owner}/${repo}@${sha}`, async () => {
      const deps = services.depsFor(event.octokit, owner, repo);
      await mergeFerryPullAt(deps, branch, sha, payload.repository.default_branch);
    });
    return;
  }
  const conclusion =
    payload.check_suite?.conclusion ??
    payload.workflow_run?.conclusion ??
    payload.check_run?.conclusion ??
    payload.state;
  // A finished build in a source repo: workflow_run and check_suite say it once (check_run and
  // status would say it once per job).
  if (conclusion === "success" && (event.name === "workflow_run" || event.name === "check_suite")) {
    const source = payload.repository.full_name;
    syncInstallation({ octokit: event.octokit, installationId: payload.installation?.id }, services, {
      reason: event.name,
      sources: [source],
    });
  }
}

interface PackagePayload extends RepositoryPayload {
  action: string;
}

/** registry_package/package published (GHCR): hints for the repositories it names. */
export async function onPackage(
  event: HandlerEvent<PackagePayload>,
  services: HandlerServices,
  repositories: string[],
): Promise<void> {
  if (repositories.length === 0) return;
  syncInstallation({ octokit: event.octokit, installationId: event.payload.installation?.id }, services, {
    reason: event.name,
    repositories,
  });
}

/** installation / installation_repositories: a first sync of the repos Ferry can now see. */
export async function onInstallation(
  event: HandlerEvent<{ installation?: { id: number } }>,
  services: HandlerServices,
): Promise<void> {
  syncInstallation({ octokit: event.octokit, installationId: event.payload.installation?.id }, services, {
    reason: event.name,
  });
}

/** Queues a sync of every repository of the event's installation (each without a config is skipped cheaply). */
export function syncInstallation(
  event: { octokit: HandlerEvent<unknown>["octokit"]; installationId?: number | undefined },
  services: HandlerServices,
  trigger: SyncTrigger,
  scope: {
    /** Narrows the installation's repositories (the scan's share of a very large installation). */
    selectRepositories?: <R extends { owner: string; repo: string }>(repositories: R[]) => R[];
    /** Checked when the queued work runs, not only when it was queued: the scan's share may have moved. */
    stillOurs?: () => boolean;
    /** Runs the installation's listing when a slot is free (the scan bounds how many run at once). */
    gate?: (work: () => Promise<void>) => Promise<void>;
  } = {},
): void {
  // Keyed by installation and by what is synced, not why: one build reports as workflow_run and
  // check_suite, and the two coalesce into one sync. The scan keeps its own key (it also refreshes
  // the dashboard). Without the installation, a scan of three organisations would merge the third
  // into the second's waiting task and never list its repositories.
  const what =
    trigger.reason === "scan"
      ? "scan"
      : JSON.stringify({
          repositories: trigger.repositories,
          sources: trigger.sources,
          baseBranch: trigger.baseBranch,
        });
  const { selectRepositories, stillOurs, gate } = scope;
  const listAndQueue = async (): Promise<void> => {
    // Checked once a slot is free, right before the listing: the share may have moved meanwhile.
    if (stillOurs && !stillOurs()) return;
    const listed = await services.installationRepos(event.octokit);
    for (const { owner, repo, defaultBranch } of selectRepositories ? selectRepositories(listed) : listed) {
      const repoTrigger: SyncTrigger = {
        ...trigger,
        ...(defaultBranch && !trigger.baseBranch ? { baseBranch: defaultBranch } : {}),
      };
      services.queue.enqueue(`sync:${owner}/${repo}:${what}`, async () => {
        if (stillOurs && !stillOurs()) return;
        await syncRepository(services.depsFor(event.octokit, owner, repo), repoTrigger);
      });
    }
  };
  services.queue.enqueue(`installation-sync:${event.installationId ?? "?"}:${what}`, () =>
    gate ? gate(listAndQueue) : listAndQueue(),
  );
}
