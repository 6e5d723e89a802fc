/**
 * Test and sandbox helpers of the GitHub emulator that act as a given user (or CI, or a rival
 * writer): they change the same state the REST routes do and fire the same webhooks.
 */
import { emit } from "./emulator-events.js";
import {
  addActionsCheckRun,
  checkSuiteFor,
  emitCheckRun,
  onRefChanged,
  pullsForSha,
} from "./emulator-pull-effects.js";
import { authorize } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import { ZERO_SHA } from "./git-store.js";
import type { Repo } from "./model.js";
import { createStatus } from "./routes-checks.js";
import { createComment, editComment as editCommentOp } from "./routes-issues.js";
import { openPull, submitReview } from "./routes-pulls.js";
import { writeFilesCommit } from "./routes-repos.js";
import * as shape from "./shapes.js";
export interface CommitStatusInput {
  context: string;
  state: "error" | "failure" | "pending" | "success";
  as?: string;
  description?: string;
}

export type TagOptions = { annotated?: boolean; message?: string; as?: string };
export type OpenPullRequestInput = {
  head: string;
  base?: string;
  title?: string;
  body?: string;
  as?: string;
};
export type ReviewInput = { as: string; event: "APPROVE" | "REQUEST_CHANGES" | "COMMENT"; body?: string };
export type SimulatedCi = { context: string; conclusion?: string; delayMs?: number };
export type WorkflowRunOptions = { name?: string; branch?: string; event?: string };
export type PackageInput = { name: string; tag: string; digest: string; as?: string };

/** Pushes one commit to `branch` as `as` (creating the branch from the default branch if needed); fires push. */
export async function commit(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  branch: string,
  files: Record<string, string | null>,
  message: string,
  options: { as?: string } = {},
): Promise<string> {
  const r = emu.repo(owner, repo);
  const login = options.as ?? r.owner;
  const ref = `refs/heads/${branch}`;
  if (!(await r.git.readRef(ref))) {
    const base = await r.git.readRef(`refs/heads/${r.defaultBranch}`);
    if (base) await r.git.compareAndSwapRef(ref, base, ZERO_SHA);
  }
  const changes = Object.entries(files).map(([path, content]) =>
    content === null ? { path, sha: null } : { path, content },
  );
  return (await writeFilesCommit(emu, r, branch, changes, message, login)).sha;
}

/** Creates a branch at `from` (a branch or SHA; default: the default branch). */
export async function createBranch(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  branch: string,
  from?: string,
  options: { as?: string } = {},
): Promise<string> {
  const r = emu.repo(owner, repo);
  const sha = await r.git.resolveCommit(from ?? r.defaultBranch);
  if (!sha) throw new Error(`unknown revision ${from}`);
  if (!(await r.git.compareAndSwapRef(`refs/heads/${branch}`, sha, ZERO_SHA)))
    throw new Error(`branch ${branch} exists`);
  await onRefChanged(emu, r, `refs/heads/${branch}`, ZERO_SHA, sha, options.as ?? r.owner);
  return sha;
}

/** Creates tag `name` at `target` (branch or SHA): lightweight, or annotated with a tag object. */
export async function tag(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  name: string,
  target: string,
  options: TagOptions = {},
): Promise<string> {
  const r = emu.repo(owner, repo);
  const login = options.as ?? r.owner;
  const commit = await r.git.resolveCommit(target);
  if (!commit) throw new Error(`unknown revision ${target}`);
  const object = options.annotated
    ? await r.git.writeTag({
        object: commit,
        type: "commit",
        tag: name,
        tagger: emu.identityOf(login),
        message: options.message ?? name,
      })
    : commit;
  if (!(await r.git.compareAndSwapRef(`refs/tags/${name}`, object, ZERO_SHA)))
    throw new Error(`tag ${name} exists`);
  await onRefChanged(emu, r, `refs/tags/${name}`, ZERO_SHA, object, login);
  return object;
}

export async function openPullRequest(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  input: OpenPullRequestInput,
): Promise<number> {
  const r = emu.repo(owner, repo);
  const issue = await openPull(emu, r, input.as ?? r.owner, {
    head: input.head,
    base: input.base ?? r.defaultBranch,
    title: input.title ?? input.head,
    body: input.body ?? null,
  });
  return issue.number;
}

export async function comment(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  number: number,
  body: string,
  options: { as: string },
): Promise<{ id: number }> {
  const r = emu.repo(owner, repo);
  const issue = r.issues.get(number);
  if (!issue) throw new Error(`no issue #${number}`);
  authorize(emu, { kind: "user", login: options.as }, r, "issues", "write", "read");
  const comment = await createComment(emu, r, issue, emu.account(options.as).login, body);
  return { id: comment.id };
}

export function editComment(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  commentId: number,
  body: string,
  options: { as: string },
): void {
  const r = emu.repo(owner, repo);
  const comment = r.comments.get(commentId);
  if (!comment) throw new Error(`no comment ${commentId}`);
  editCommentOp(emu, r, comment, emu.account(options.as).login, body);
}

export async function review(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  number: number,
  options: ReviewInput,
): Promise<{ id: number }> {
  const r = emu.repo(owner, repo);
  const issue = r.issues.get(number);
  if (!issue?.pull) throw new Error(`no pull request #${number}`);
  const review = await submitReview(emu, r, issue, emu.account(options.as).login, {
    event: options.event,
    body: options.body ?? (options.event === "APPROVE" ? "" : "Review"),
  });
  return { id: review.id };
}

/** A commit status, as an external CI would post it. */
export function setStatus(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  sha: string,
  input: CommitStatusInput,
): void {
  const r = emu.repo(owner, repo);
  createStatus(emu, r, sha, input.as ?? r.owner, {
    state: input.state,
    context: input.context,
    description: input.description ?? null,
  });
}

/** Simulated CI: every new PR head SHA gets a `context` check run that concludes after `delayMs`. */
export function setCi(emu: GitHubEmulator, owner: string, repo: string, ci: SimulatedCi | null): void {
  const r = emu.repo(owner, repo);
  if (ci === null) {
    r.ci = [];
    return;
  }
  r.ci = r.ci.filter((x) => x.context !== ci.context);
  r.ci.push({ context: ci.context, conclusion: ci.conclusion ?? "success", delayMs: ci.delayMs ?? 0 });
}

/** A GitHub Actions run finished on `sha`: a completed check suite + run and a `workflow_run` event. */
export async function completeWorkflowRun(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  sha: string,
  conclusion: string,
  options: WorkflowRunOptions = {},
): Promise<{ id: number }> {
  const r = emu.repo(owner, repo);
  const name = options.name ?? "CI";
  const branch =
    options.branch ??
    (await r.git.listRefs("refs/heads/")).find((x) => x.sha === sha)?.ref.slice(11) ??
    r.defaultBranch;
  const run = addActionsCheckRun(emu, r, { sha, branch, name, conclusion });
  const { id } = run;
  const suite = checkSuiteFor(emu, r, emu.actionsAppId, sha, branch);
  const bot = emu.appById(emu.actionsAppId).botLogin;
  await emitCheckRun(emu, r, run, "completed", bot);
  const commit = await r.git.readCommit(sha);
  const workflowId = 1000 + (name.length % 100);
  const base = `${emu.apiUrl}/repos/${r.owner}/${r.name}`;
  const html = `${emu.webUrl}/${r.owner}/${r.name}`;
  const workflow = {
    badge_url: `${html}/workflows/${name}/badge.svg`,
    created_at: r.createdAt,
    html_url: `${html}/blob/${r.defaultBranch}/.github/workflows/ci.yml`,
    id: workflowId,
    name,
    node_id: shape.nodeIdFor("W", workflowId),
    path: ".github/workflows/ci.yml",
    state: "active",
    updated_at: r.createdAt,
    url: `${base}/actions/workflows/${workflowId}`,
  };
  const repoLite = shape.minimalRepository(emu.shapes, r);
  const person = (who: { name: string; email: string }) => ({ name: who.name, email: who.email });
  const actor = shape.simpleUser(emu.shapes, emu.loginForEmail(commit.author.email) ?? r.owner);
  const workflowRun = {
    actor,
    triggering_actor: actor,
    artifacts_url: `${base}/actions/runs/${id}/artifacts`,
    cancel_url: `${base}/actions/runs/${id}/cancel`,
    check_suite_id: suite.id,
    check_suite_node_id: suite.nodeId,
    check_suite_url: `${base}/check-suites/${suite.id}`,
    conclusion,
    created_at: emu.now(),
    event: options.event ?? "push",
    head_branch: branch,
    head_commit: {
      id: sha,
      tree_id: commit.tree,
      message: commit.message.trim(),
      timestamp: commit.committer.date,
      author: person(commit.author),
      committer: person(commit.committer),
    },
    head_repository: repoLite,
    head_sha: sha,
    html_url: `${html}/actions/runs/${id}`,
    id,
    jobs_url: `${base}/actions/runs/${id}/jobs`,
    logs_url: `${base}/actions/runs/${id}/logs`,
    name,
    node_id: shape.nodeIdFor("WFR", id),
    path: ".github/workflows/ci.yml",
    previous_attempt_url: null,
    pull_requests: pullsForSha(emu, r, sha),
    referenced_workflows: [],
    repository: repoLite,
    rerun_url: `${base}/actions/runs/${id}/rerun`,
    run_attempt: 1,
    run_number: id,
    run_started_at: emu.now(),
    status: "completed",
    updated_at: emu.now(),
    url: `${base}/actions/runs/${id}`,
    workflow_id: workflowId,
    workflow_url: `${base}/actions/workflows/${workflowId}`,
    display_title: commit.message.split("\n")[0],
  };
  emit(emu, r, "workflow_run", { action: "completed", workflow, workflow_run: workflowRun }, bot);
  return { id };
}

/** A container image version was published to GHCR from `repo`: a `registry_package` event. */
export function publishPackage(emu: GitHubEmulator, owner: string, repo: string, input: PackageInput): void {
  const r = emu.repo(owner, repo);
  const login = input.as ?? r.owner;
  const id = emu.id();
  const versionId = emu.id();
  const html = `${emu.webUrl}/${r.owner}/${r.name}/pkgs/container/${input.name}`;
  const now = emu.now();
  emit(
    emu,
    r,
    "registry_package",
    {
      action: "published",
      registry_package: {
        id,
        name: input.name,
        namespace: r.owner,
        description: null,
        ecosystem: "CONTAINER",
        package_type: "CONTAINER",
        html_url: html,
        created_at: now,
        updated_at: now,
        owner: shape.simpleUser(emu.shapes, r.owner),
        package_version: {
          id: versionId,
          version: input.digest,
          name: input.digest,
          summary: "",
          description: "",
          html_url: `${html}/${versionId}`,
          metadata: [],
          package_files: [],
          installation_command: `docker pull ghcr.io/${r.owner.toLowerCase()}/${input.name}:${input.tag}`,
          package_url: `ghcr.io/${r.owner.toLowerCase()}/${input.name}:${input.tag}`,
          container_metadata: {
            tag: { name: input.tag, digest: input.digest },
            labels: null,
            manifest: null,
          },
          created_at: now,
          updated_at: now,
        },
        registry: {
          about_url: "https://docs.github.com/packages",
          name: "GitHub CONTAINER registry",
          type: "CONTAINER",
          url: `https://ghcr.io/${r.owner.toLowerCase()}`,
          vendor: "GitHub Inc",
        },
      },
    },
    login,
  );
}

/** Another writer moves `ref` by one commit (same tree), so the caller's compare-and-swap loses (faults.refRace). */
export async function rivalPush(emu: GitHubEmulator, repo: Repo, ref: string): Promise<void> {
  const current = await repo.git.readRef(ref);
  if (!current) return;
  const tree = (await repo.git.readCommit(current)).tree;
  const ident = { name: "rival", email: "rival@localhost", date: emu.now() };
  const sha = await repo.git.commitTree({
    tree,
    parents: [current],
    message: "A concurrent change\n",
    author: ident,
  });
  if (await repo.git.compareAndSwapRef(ref, sha, current))
    await onRefChanged(emu, repo, ref, current, sha, repo.owner);
}
