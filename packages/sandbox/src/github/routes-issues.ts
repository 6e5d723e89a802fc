/** Issues, issue comments, reactions and labels. */
import { emit, emitPull } from "./emulator-events.js";
import { authorizeRepo, roleOf } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import type { Issue, IssueComment, Label, Reaction, Repo } from "./model.js";
import {
  ApiError,
  checkBodyLength,
  checkTitleLength,
  notFound,
  paginate,
  requireString,
  validationFailed,
} from "./router.js";
import * as shape from "./shapes.js";

const REACTIONS = ["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"];

export function findIssue(repo: Repo, number: string | number): Issue {
  const issue = repo.issues.get(Number(number));
  if (!issue) throw notFound();
  return issue;
}

async function emitIssueChange(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  action: string,
  login: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  if (issue.pull) await emitPull(emu, repo, issue, action, login, extra);
  else emit(emu, repo, "issues", { action, issue: shape.issue(emu.shapes, repo, issue), ...extra }, login);
}

export async function createComment(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  login: string,
  body: string,
  appId?: number,
): Promise<IssueComment> {
  const id = emu.id();
  const now = emu.now();
  const comment: IssueComment = {
    id,
    nodeId: shape.nodeIdFor("IC", id),
    issueNumber: issue.number,
    user: login,
    body,
    createdAt: now,
    updatedAt: now,
    reactions: [],
    deleted: false,
  };
  if (appId !== undefined) comment.appId = appId;
  repo.comments.set(id, comment);
  issue.updatedAt = now;
  emu.faults.created(`comment:${repo.id}:${id}`);
  emit(
    emu,
    repo,
    "issue_comment",
    {
      action: "created",
      issue: shape.issue(emu.shapes, repo, issue),
      comment: shape.issueComment(emu.shapes, repo, comment),
    },
    login,
  );
  return comment;
}

export function editComment(
  emu: GitHubEmulator,
  repo: Repo,
  comment: IssueComment,
  login: string,
  body: string,
): IssueComment {
  const previous = comment.body;
  comment.body = body;
  comment.updatedAt = emu.now();
  const issue = repo.issues.get(comment.issueNumber)!;
  emit(
    emu,
    repo,
    "issue_comment",
    {
      action: "edited",
      changes: { body: { from: previous } },
      issue: shape.issue(emu.shapes, repo, issue),
      comment: shape.issueComment(emu.shapes, repo, comment),
    },
    login,
  );
  return comment;
}

export function ensureLabel(
  emu: GitHubEmulator,
  repo: Repo,
  name: string,
  color = "ededed",
  description: string | null = null,
): Label {
  const existing = [...repo.labels.values()].find((l) => l.name.toLowerCase() === name.toLowerCase());
  if (existing) return existing;
  const id = emu.id();
  const label: Label = { id, nodeId: shape.nodeIdFor("LA", id), name, color, description, default: false };
  repo.labels.set(name, label);
  return label;
}

function addReaction(
  emu: GitHubEmulator,
  list: Reaction[],
  login: string,
  content: unknown,
): { reaction: Reaction; created: boolean } {
  if (typeof content !== "string" || !REACTIONS.includes(content)) {
    throw validationFailed("Validation Failed", [
      { resource: "Reaction", field: "content", code: "invalid" },
    ]);
  }
  const existing = list.find((x) => x.user === login && x.content === content);
  if (existing) return { reaction: existing, created: false };
  const id = emu.id();
  const reaction: Reaction = {
    id,
    nodeId: shape.nodeIdFor("REA", id),
    user: login,
    content,
    createdAt: emu.now(),
  };
  list.push(reaction);
  return { reaction, created: true };
}

export function registerIssueRoutes(emu: GitHubEmulator): void {
  const r = emu.router;
  const c = () => emu.shapes;
  // Pull requests are issues too: GitHub accepts either permission for their comments, labels and state.
  const ISSUES_OR_PULLS = ["issues", "pull_requests"];

  r.add("POST", "/repos/:owner/:repo/issues", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "issues", "write", "read");
    // As github.com answers with issues turned off (https://github.com/ossf/allstar/issues/64).
    if (!repo.hasIssues) throw new ApiError(410, "Issues are disabled for this repo");
    const login = emu.actingLogin(ctx.actor);
    const title = requireString(ctx.body, "title", "Issue");
    checkTitleLength(ctx.body.title);
    checkBodyLength(ctx.body.body, "Issue");
    const id = emu.id();
    const now = emu.now();
    const number = emu.nextNumber(repo);
    const labels = Array.isArray(ctx.body.labels)
      ? (ctx.body.labels as (string | { name: string })[]).map((l) => (typeof l === "string" ? l : l.name))
      : [];
    const issue: Issue = {
      id,
      nodeId: shape.nodeIdFor("I", id),
      number,
      title,
      body: typeof ctx.body.body === "string" ? ctx.body.body : null,
      state: "open",
      stateReason: null,
      user: login,
      labels: labels.map((name) => ensureLabel(emu, repo, name).name),
      assignees: Array.isArray(ctx.body.assignees)
        ? (ctx.body.assignees as string[]).map((a) => emu.account(a).login)
        : [],
      locked: false,
      createdAt: now,
      updatedAt: now,
      closedAt: null,
      closedBy: null,
      reactions: [],
    };
    repo.issues.set(number, issue);
    emu.faults.created(`issue:${repo.id}:${number}`);
    emit(emu, repo, "issues", { action: "opened", issue: shape.issue(c(), repo, issue) }, login);
    return { status: 201, body: shape.issue(c(), repo, issue) };
  });

  r.add("GET", "/repos/:owner/:repo/issues", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    const state = ctx.query.get("state") ?? "open";
    const labels = (ctx.query.get("labels") ?? "")
      .split(",")
      .map((l) => l.trim().toLowerCase())
      .filter(Boolean);
    const creator = ctx.query.get("creator");
    let issues = [...repo.issues.values()].filter((i) => state === "all" || i.state === state);
    issues = issues.filter((i) => labels.every((l) => i.labels.some((x) => x.toLowerCase() === l)));
    if (creator) issues = issues.filter((i) => i.user.toLowerCase() === creator.toLowerCase());
    issues.sort((a, b) => b.number - a.number);
    if (ctx.query.get("direction") === "asc") issues.reverse();
    return paginate(
      ctx,
      issues.map((i) => shape.issue(c(), repo, i)),
    );
  });

  r.add("GET", "/repos/:owner/:repo/issues/comments/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    if (emu.faults.missFresh(`comment:${repo.id}:${ctx.params.id}`)) throw notFound();
    const comment = repo.comments.get(Number(ctx.params.id));
    if (!comment || comment.deleted) throw notFound();
    return { body: shape.issueComment(c(), repo, comment) };
  });

  r.add("PATCH", "/repos/:owner/:repo/issues/comments/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "read");
    const login = emu.actingLogin(ctx.actor);
    const comment = repo.comments.get(Number(ctx.params.id));
    if (!comment || comment.deleted) throw notFound();
    if (
      comment.user !== login &&
      roleOf(emu, repo, login) !== "admin" &&
      !["maintain", "write", "triage"].includes(roleOf(emu, repo, login))
    ) {
      throw new ApiError(403, "Resource not accessible by personal access token");
    }
    return {
      body: shape.issueComment(
        c(),
        repo,
        editComment(emu, repo, comment, login, requireString(ctx.body, "body", "IssueComment")),
      ),
    };
  });

  r.add("DELETE", "/repos/:owner/:repo/issues/comments/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "read");
    const login = emu.actingLogin(ctx.actor);
    const comment = repo.comments.get(Number(ctx.params.id));
    if (!comment || comment.deleted) throw notFound();
    if (comment.user !== login && !["admin", "maintain", "write"].includes(roleOf(emu, repo, login)))
      throw new ApiError(403, "Resource not accessible by personal access token");
    comment.deleted = true;
    const issue = repo.issues.get(comment.issueNumber)!;
    emit(
      emu,
      repo,
      "issue_comment",
      {
        action: "deleted",
        issue: shape.issue(c(), repo, issue),
        comment: shape.issueComment(c(), repo, comment),
      },
      login,
    );
    return { status: 204 };
  });

  r.add("GET", "/repos/:owner/:repo/issues/comments", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    const comments = [...repo.comments.values()].filter((x) => !x.deleted);
    return paginate(
      ctx,
      comments.map((x) => shape.issueComment(c(), repo, x)),
    );
  });

  r.add("POST", "/repos/:owner/:repo/issues/comments/:id/reactions", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "read");
    const login = emu.actingLogin(ctx.actor);
    const comment = repo.comments.get(Number(ctx.params.id));
    if (!comment || comment.deleted) throw notFound();
    const { reaction, created } = addReaction(emu, comment.reactions, login, ctx.body.content);
    return { status: created ? 201 : 200, body: shape.reaction(c(), reaction) };
  });

  r.add("GET", "/repos/:owner/:repo/issues/comments/:id/reactions", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    const comment = repo.comments.get(Number(ctx.params.id));
    if (!comment || comment.deleted) throw notFound();
    const content = ctx.query.get("content");
    return paginate(
      ctx,
      comment.reactions.filter((x) => !content || x.content === content).map((x) => shape.reaction(c(), x)),
    );
  });

  r.add("DELETE", "/repos/:owner/:repo/issues/comments/:id/reactions/:reactionId", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "read");
    const comment = repo.comments.get(Number(ctx.params.id));
    if (!comment) throw notFound();
    comment.reactions = comment.reactions.filter((x) => x.id !== Number(ctx.params.reactionId));
    return { status: 204 };
  });

  r.add("GET", "/repos/:owner/:repo/issues/:number", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    if (emu.faults.missFresh(`issue:${repo.id}:${ctx.params.number}`)) throw notFound();
    return { body: shape.issue(c(), repo, findIssue(repo, ctx.params.number!)) };
  });

  r.add("PATCH", "/repos/:owner/:repo/issues/:number", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "triage");
    const login = emu.actingLogin(ctx.actor);
    const issue = findIssue(repo, ctx.params.number!);
    checkTitleLength(ctx.body.title);
    checkBodyLength(ctx.body.body, "Issue");
    if (typeof ctx.body.title === "string") issue.title = ctx.body.title;
    if (typeof ctx.body.body === "string" || ctx.body.body === null)
      issue.body = ctx.body.body as string | null;
    if (Array.isArray(ctx.body.labels)) {
      issue.labels = (ctx.body.labels as (string | { name: string })[]).map(
        (l) => ensureLabel(emu, repo, typeof l === "string" ? l : l.name).name,
      );
    }
    if (Array.isArray(ctx.body.assignees))
      issue.assignees = (ctx.body.assignees as string[]).map((a) => emu.account(a).login);
    issue.updatedAt = emu.now();
    if (ctx.body.state === "closed" && issue.state === "open") {
      if (issue.pull)
        issue.pull.baseShaAtClose = (await repo.git.readRef(`refs/heads/${issue.pull.baseRef}`)) ?? null;
      issue.state = "closed";
      issue.closedAt = emu.now();
      issue.closedBy = login;
      issue.stateReason = typeof ctx.body.state_reason === "string" ? ctx.body.state_reason : "completed";
      await emitIssueChange(emu, repo, issue, "closed", login);
    } else if (ctx.body.state === "open" && issue.state === "closed" && !issue.pull?.merged) {
      issue.state = "open";
      issue.closedAt = null;
      issue.stateReason = "reopened";
      await emitIssueChange(emu, repo, issue, "reopened", login);
    } else if (typeof ctx.body.title === "string" || typeof ctx.body.body === "string") {
      await emitIssueChange(emu, repo, issue, "edited", login, { changes: {} });
    }
    return { body: shape.issue(c(), repo, issue) };
  });

  r.add("POST", "/repos/:owner/:repo/issues/:number/comments", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "read");
    const login = emu.actingLogin(ctx.actor);
    const issue = findIssue(repo, ctx.params.number!);
    if (issue.locked && roleOf(emu, repo, login) === "read")
      throw new ApiError(403, "Unable to create comment because issue is locked.");
    checkBodyLength(ctx.body.body, "IssueComment");
    const comment = await createComment(
      emu,
      repo,
      issue,
      login,
      requireString(ctx.body, "body", "IssueComment"),
      emu.actingAppId(ctx.actor),
    );
    return {
      status: 201,
      body: shape.issueComment(c(), repo, comment),
      headers: { location: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/issues/comments/${comment.id}` },
    };
  });

  r.add("GET", "/repos/:owner/:repo/issues/:number/comments", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    const issue = findIssue(repo, ctx.params.number!);
    const comments = [...repo.comments.values()].filter((x) => x.issueNumber === issue.number && !x.deleted);
    return paginate(
      ctx,
      comments.map((x) => shape.issueComment(c(), repo, x)),
    );
  });

  r.add("POST", "/repos/:owner/:repo/issues/:number/reactions", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "read");
    const login = emu.actingLogin(ctx.actor);
    const issue = findIssue(repo, ctx.params.number!);
    const { reaction, created } = addReaction(emu, issue.reactions, login, ctx.body.content);
    return { status: created ? 201 : 200, body: shape.reaction(c(), reaction) };
  });

  r.add("GET", "/repos/:owner/:repo/issues/:number/reactions", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    const issue = findIssue(repo, ctx.params.number!);
    const content = ctx.query.get("content");
    return paginate(
      ctx,
      issue.reactions.filter((x) => !content || x.content === content).map((x) => shape.reaction(c(), x)),
    );
  });

  // ------------------------------------------------------------------ labels

  r.add("POST", "/repos/:owner/:repo/labels", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "issues", "write", "write");
    const name = requireString(ctx.body, "name", "Label");
    if ([...repo.labels.values()].some((l) => l.name.toLowerCase() === name.toLowerCase())) {
      throw validationFailed("Validation Failed", [
        { resource: "Label", code: "already_exists", field: "name" },
      ]);
    }
    const color = typeof ctx.body.color === "string" ? ctx.body.color.replace(/^#/, "") : "ededed";
    const label = ensureLabel(
      emu,
      repo,
      name,
      color,
      typeof ctx.body.description === "string" ? ctx.body.description : null,
    );
    return { status: 201, body: shape.label(c(), repo, label) };
  });

  r.add("GET", "/repos/:owner/:repo/labels", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    return paginate(
      ctx,
      [...repo.labels.values()].map((l) => shape.label(c(), repo, l)),
    );
  });

  r.add("GET", "/repos/:owner/:repo/labels/:name", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    const label = [...repo.labels.values()].find(
      (l) => l.name.toLowerCase() === ctx.params.name!.toLowerCase(),
    );
    if (!label) throw notFound();
    return { body: shape.label(c(), repo, label) };
  });

  const labelNames = (body: Record<string, unknown>): string[] => {
    const raw = Array.isArray(body.labels) ? body.labels : [];
    return (raw as (string | { name: string })[]).map((l) => (typeof l === "string" ? l : l.name));
  };

  const changeLabels = async (repo: Repo, issue: Issue, login: string, next: string[]) => {
    const before = new Set(issue.labels);
    issue.labels = next;
    issue.updatedAt = emu.now();
    for (const name of next) {
      if (before.has(name)) continue;
      await emitIssueChange(emu, repo, issue, "labeled", login, {
        label: shape.label(c(), repo, repo.labels.get(name)!),
      });
    }
    for (const name of before) {
      if (next.includes(name)) continue;
      await emitIssueChange(emu, repo, issue, "unlabeled", login, {
        label: shape.label(c(), repo, repo.labels.get(name)!),
      });
    }
  };

  r.add("POST", "/repos/:owner/:repo/issues/:number/labels", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "triage");
    const login = emu.actingLogin(ctx.actor);
    const issue = findIssue(repo, ctx.params.number!);
    const names = labelNames(ctx.body).map((name) => ensureLabel(emu, repo, name).name);
    await changeLabels(repo, issue, login, [...new Set([...issue.labels, ...names])]);
    return { body: issue.labels.map((name) => shape.label(c(), repo, repo.labels.get(name)!)) };
  });

  r.add("PUT", "/repos/:owner/:repo/issues/:number/labels", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "triage");
    const login = emu.actingLogin(ctx.actor);
    const issue = findIssue(repo, ctx.params.number!);
    await changeLabels(repo, issue, login, [
      ...new Set(labelNames(ctx.body).map((name) => ensureLabel(emu, repo, name).name)),
    ]);
    return { body: issue.labels.map((name) => shape.label(c(), repo, repo.labels.get(name)!)) };
  });

  r.add("GET", "/repos/:owner/:repo/issues/:number/labels", (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "read", "read");
    const issue = findIssue(repo, ctx.params.number!);
    return paginate(
      ctx,
      issue.labels.map((name) => shape.label(c(), repo, repo.labels.get(name)!)),
    );
  });

  r.add("DELETE", "/repos/:owner/:repo/issues/:number/labels/:name", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, ISSUES_OR_PULLS, "write", "triage");
    const login = emu.actingLogin(ctx.actor);
    const issue = findIssue(repo, ctx.params.number!);
    const name = issue.labels.find((l) => l.toLowerCase() === ctx.params.name!.toLowerCase());
    if (!name) throw new ApiError(404, "Label does not exist");
    await changeLabels(
      repo,
      issue,
      login,
      issue.labels.filter((l) => l !== name),
    );
    return { body: issue.labels.map((l) => shape.label(c(), repo, repo.labels.get(l)!)) };
  });
}
