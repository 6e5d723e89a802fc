/**
 * Webhook emission of the GitHub emulator: which installations receive an event, and the
 * push and pull_request payloads.
 */
import { installationCovers } from "./emulator-accounts.js";
import { computePull } from "./pull-logic.js";
import type { GitHubEmulator } from "./emulator.js";
import { ZERO_SHA, type GitIdentity } from "./git-store.js";
import type { Installation, Issue, Repo } from "./model.js";
import * as shape from "./shapes.js";
import { toWebhookPayload } from "./webhook-shapes.js";

/**
 * GitHub lets an app subscribe to an event only with a permission that covers it (any one of
 * these), so an installation without it never receives the event.
 */
const EVENT_PERMISSIONS: Record<string, string[]> = {
  push: ["contents"],
  pull_request: ["pull_requests"],
  pull_request_review: ["pull_requests"],
  issue_comment: ["issues", "pull_requests"],
  issues: ["issues"],
  label: ["metadata"],
  merge_group: ["merge_queues"],
  check_run: ["checks"],
  check_suite: ["checks"],
  status: ["statuses"],
  workflow_run: ["actions"],
  registry_package: ["packages"],
  deployment: ["deployments"],
  deployment_status: ["deployments"],
  repository_ruleset: ["administration"],
};

/** Sends `event` to every app installed on `repo` that subscribes to it. */
export function emit(
  emu: GitHubEmulator,
  repo: Repo,
  event: string,
  payload: Record<string, unknown>,
  senderLogin: string,
): void {
  for (const inst of emu.installations.values()) {
    if (!installationCovers(emu, inst, repo)) continue;
    const app = emu.apps.get(inst.appId);
    if (!app) continue;
    const full: Record<string, unknown> = {
      ...payload,
      repository: shape.repository(emu.shapes, repo),
      sender: shape.simpleUser(emu.shapes, senderLogin),
    };
    const owner = emu.account(repo.owner);
    if (owner.type === "Organization") full.organization = shape.organization(emu.shapes, owner.login);
    full.installation = { id: inst.id, node_id: shape.nodeIdFor("INST", inst.id) };
    deliverTo(emu, inst, event, full);
  }
}

/** Whether any installation on `repo` would receive `event` (so costly payloads are built only when needed). */
export function hasSubscribers(emu: GitHubEmulator, repo: Repo, event: string): boolean {
  for (const inst of emu.installations.values()) {
    if (installationCovers(emu, inst, repo) && receives(emu, inst, event)) return true;
  }
  return false;
}

function receives(emu: GitHubEmulator, inst: Installation, event: string): boolean {
  const app = emu.apps.get(inst.appId);
  if (!app?.webhookUrl) return false;
  if (event === "installation") return true;
  if (!app.events.includes(event)) return false;
  const needs = EVENT_PERMISSIONS[event] ?? [];
  return (
    needs.length === 0 || needs.some((name) => name === "metadata" || inst.permissions[name] !== undefined)
  );
}

export function deliverTo(
  emu: GitHubEmulator,
  inst: Installation,
  event: string,
  payload: Record<string, unknown>,
): void {
  const app = emu.apps.get(inst.appId);
  if (!app?.webhookUrl || !receives(emu, inst, event)) return;
  emu.webhooks.enqueue(
    { appId: app.id, url: app.webhookUrl, secret: app.webhookSecret, targetId: app.id },
    event,
    toWebhookPayload(event, payload),
  );
}

export async function emitPush(
  emu: GitHubEmulator,
  repo: Repo,
  ref: string,
  before: string,
  after: string,
  pusher: string,
  forced: boolean,
): Promise<void> {
  if (!hasSubscribers(emu, repo, "push")) return;
  const commits: Record<string, unknown>[] = [];
  let headCommit: Record<string, unknown> | null = null;
  if (after !== ZERO_SHA) {
    if (ref.startsWith("refs/tags/")) {
      // A tag push lists no commits; head_commit is the tagged commit.
      const peeled = await repo.git.resolveCommit(after);
      if (peeled) headCommit = await pushCommit(emu, repo, peeled);
    } else {
      const shas = before === ZERO_SHA ? [after] : await repo.git.commitsBetween(before, after);
      for (const sha of shas.slice(-20)) commits.push(await pushCommit(emu, repo, sha));
      headCommit = commits.at(-1) ?? null;
    }
  }
  const account = emu.account(pusher);
  emit(
    emu,
    repo,
    "push",
    {
      ref,
      before,
      after,
      created: before === ZERO_SHA,
      deleted: after === ZERO_SHA,
      forced,
      base_ref: null,
      compare: `${emu.webUrl}/${repo.owner}/${repo.name}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
      commits,
      head_commit: headCommit,
      pusher: { name: account.login, email: account.email },
    },
    pusher,
  );
}

async function pushCommit(emu: GitHubEmulator, repo: Repo, sha: string): Promise<Record<string, unknown>> {
  const commit = await repo.git.readCommit(sha);
  const files = commit.parents[0] ? await repo.git.changedFiles(commit.parents[0], sha) : [];
  const person = (who: GitIdentity) => {
    const login = emu.loginForEmail(who.email);
    return { name: who.name, email: who.email, date: who.date, ...(login ? { username: login } : {}) };
  };
  return {
    id: sha,
    tree_id: commit.tree,
    distinct: true,
    message: commit.message.replace(/\n$/, ""),
    timestamp: commit.committer.date,
    url: `${emu.webUrl}/${repo.owner}/${repo.name}/commit/${sha}`,
    author: person(commit.author),
    committer: person(commit.committer),
    added: files.filter((f) => f.status === "added").map((f) => f.path),
    removed: files.filter((f) => f.status === "removed").map((f) => f.path),
    modified: files.filter((f) => f.status === "modified" || f.status === "renamed").map((f) => f.path),
  };
}

export async function emitPull(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  action: string,
  sender: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  if (!hasSubscribers(emu, repo, "pull_request")) return;
  const view = await computePull(emu, repo, issue);
  emit(
    emu,
    repo,
    "pull_request",
    { action, number: issue.number, pull_request: view.body, ...extra },
    sender,
  );
}
