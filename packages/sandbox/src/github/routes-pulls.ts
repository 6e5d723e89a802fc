/** Pull requests: create, list, get, update, merge, files, commits, requested reviewers and reviews. */
import { emit, emitPull } from "./emulator-events.js";
import { scheduleAutoMerge, startCi } from "./emulator-pull-effects.js";
import { authorizeRepo, roleOf } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import type { Issue, Repo, Review } from "./model.js";
import { computePull, mergeabilityComputing, mergePull, type MergeMethod } from "./pull-logic.js";
import {
  ApiError,
  checkBodyLength,
  checkTitleLength,
  notFound,
  paginate,
  requireString,
  validationFailed,
  type RequestContext,
} from "./router.js";
import * as shape from "./shapes.js";
import { forkOwnedBy } from "./forks.js";
import { ZERO_SHA } from "./git-store.js";

/** The most files `GET /pulls/{n}/files` lists, over all its pages. */
const MAX_LISTED_FILES = 3000;

export function findPull(repo: Repo, number: string | number): Issue {
  const issue = repo.issues.get(Number(number));
  if (!issue?.pull) throw notFound();
  return issue;
}

/** GitHub's refusal of a second open PR from the same head branch into the same base. */
function refuseSecondOpenPull(
  repo: Repo,
  headBranch: string,
  headRepo: Repo | undefined,
  base: string,
): void {
  for (const other of repo.issues.values()) {
    if (
      other.state === "open" &&
      other.pull?.headRef === headBranch &&
      other.pull.headRepo === headRepo &&
      other.pull.baseRef === base
    ) {
      throw validationFailed("Validation Failed", [
        {
          resource: "PullRequest",
          code: "custom",
          message: `A pull request already exists for ${(headRepo ?? repo).owner}:${headBranch}.`,
        },
      ]);
    }
  }
}

/** Opens a pull request as `login`; shared by the REST route and the test helpers. */
export async function openPull(
  emu: GitHubEmulator,
  repo: Repo,
  login: string,
  input: {
    title: string;
    head: string;
    base: string;
    body?: string | null;
    draft?: boolean;
    maintainerCanModify?: boolean;
  },
): Promise<Issue> {
  const headBranch = input.head.includes(":") ? input.head.slice(input.head.indexOf(":") + 1) : input.head;
  const headOwner = input.head.includes(":") ? input.head.slice(0, input.head.indexOf(":")) : repo.owner;
  // `owner:branch` from another owner names a branch of that owner's fork of this repository.
  const headRepo =
    headOwner.toLowerCase() === repo.owner.toLowerCase() ? undefined : forkOwnedBy(emu, repo, headOwner);
  if (headOwner.toLowerCase() !== repo.owner.toLowerCase() && !headRepo) {
    throw validationFailed("Validation Failed", [
      { resource: "PullRequest", field: "head", code: "invalid" },
    ]);
  }
  const baseSha = await repo.git.readRef(`refs/heads/${input.base}`);
  if (!baseSha)
    throw validationFailed("Validation Failed", [
      { resource: "PullRequest", field: "base", code: "invalid" },
    ]);
  const headSha = await (headRepo ?? repo).git.readRef(`refs/heads/${headBranch}`);
  if (!headSha)
    throw validationFailed("Validation Failed", [
      { resource: "PullRequest", field: "head", code: "invalid" },
    ]);
  // Checked again just before the PR is stored: the git reads in between let another request for
  // the same branch pass this check too, and github.com opens only one of the two.
  refuseSecondOpenPull(repo, headBranch, headRepo, input.base);
  // The fork's commits are served by the base from then on (under refs/pull/<n>/head below).
  if (headRepo) await repo.git.fetchFrom(headRepo.git, headSha);
  if ((await repo.git.commitsBetween(baseSha, headSha)).length === 0) {
    throw validationFailed("Validation Failed", [
      {
        resource: "PullRequest",
        code: "custom",
        message: `No commits between ${input.base} and ${headBranch}`,
      },
    ]);
  }
  const number = emu.nextNumber(repo);
  if (headRepo) await repo.git.compareAndSwapRef(`refs/pull/${number}/head`, headSha, ZERO_SHA);
  const id = emu.id();
  const pullId = emu.id();
  const now = emu.now();
  const issue: Issue = {
    id,
    nodeId: shape.nodeIdFor("I", id),
    number,
    title: input.title,
    body: input.body ?? null,
    state: "open",
    stateReason: null,
    user: login,
    labels: [],
    assignees: [],
    locked: false,
    createdAt: now,
    updatedAt: now,
    closedAt: null,
    closedBy: null,
    reactions: [],
    pullId,
    pullNodeId: shape.nodeIdFor("PR", pullId),
    pull: {
      headRef: headBranch,
      ...(headRepo ? { headRepo } : {}),
      headSha,
      baseRef: input.base,
      merged: false,
      mergedAt: null,
      mergedBy: null,
      mergeCommitSha: null,
      draft: input.draft ?? false,
      maintainerCanModify: input.maintainerCanModify ?? false,
      requestedReviewers: [],
      requestedTeams: [],
      baseShaAtClose: null,
      autoMerge: null,
      mergeabilityUnknownFor: repo.mergeabilityLag,
    },
  };
  refuseSecondOpenPull(repo, headBranch, headRepo, input.base);
  repo.issues.set(number, issue);
  emu.faults.created(`pull:${repo.id}:${number}`);
  emu.faults.created(`issue:${repo.id}:${number}`);
  await emitPull(emu, repo, issue, "opened", login);
  startCi(emu, repo, issue);
  return issue;
}

export async function submitReview(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  login: string,
  input: { event?: string; body?: string; commitId?: string },
): Promise<Review> {
  const states: Record<string, Review["state"]> = {
    APPROVE: "APPROVED",
    REQUEST_CHANGES: "CHANGES_REQUESTED",
    COMMENT: "COMMENTED",
  };
  const state = input.event ? states[input.event] : "PENDING";
  if (!state)
    throw validationFailed(
      `Unprocessable Entity: event "${input.event}" is not one of APPROVE, REQUEST_CHANGES, COMMENT`,
    );
  if (issue.user === login && state === "APPROVED")
    throw validationFailed("Unprocessable Entity", ["Can not approve your own pull request"]);
  if (issue.user === login && state === "CHANGES_REQUESTED")
    throw validationFailed("Unprocessable Entity", ["Can not request changes on your own pull request"]);
  if ((state === "CHANGES_REQUESTED" || state === "COMMENTED") && !input.body) {
    throw validationFailed("Unprocessable Entity", [
      `Review Body is required when the event is ${input.event}`,
    ]);
  }
  const id = emu.id();
  const review: Review = {
    id,
    nodeId: shape.nodeIdFor("PRR", id),
    pullNumber: issue.number,
    user: login,
    body: input.body ?? "",
    state,
    commitId: input.commitId ?? issue.pull!.headSha,
    submittedAt: emu.now(),
  };
  repo.reviews.push(review);
  issue.pull!.requestedReviewers = issue.pull!.requestedReviewers.filter((r) => r !== login);
  if (state !== "PENDING") {
    const view = await computePull(emu, repo, issue);
    const reviewShape = { ...shape.review(emu.shapes, repo, review), state: state.toLowerCase() };
    emit(
      emu,
      repo,
      "pull_request_review",
      {
        action: "submitted",
        review: reviewShape,
        pull_request: shape.pullSimple(emu.shapes, repo, issue, view.baseSha),
      },
      login,
    );
    scheduleAutoMerge(emu, repo);
  }
  return review;
}

export function registerPullRoutes(emu: GitHubEmulator): void {
  const r = emu.router;
  const c = () => emu.shapes;

  const simple = async (repo: Repo, issue: Issue) => {
    const p = issue.pull!;
    const live = await repo.git.readRef(`refs/heads/${p.baseRef}`);
    const baseSha = issue.state === "open" ? (live ?? p.baseShaAtClose) : (p.baseShaAtClose ?? live);
    return shape.pullSimple(c(), repo, issue, baseSha ?? "0".repeat(40));
  };

  r.add("POST", "/repos/:owner/:repo/pulls", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "write", "read");
    const login = emu.actingLogin(ctx.actor);
    const head = requireString(ctx.body, "head", "PullRequest");
    const base = requireString(ctx.body, "base", "PullRequest");
    const title = typeof ctx.body.title === "string" ? ctx.body.title : undefined;
    if (!title)
      throw validationFailed("Validation Failed", [
        { resource: "PullRequest", field: "title", code: "missing_field" },
      ]);
    checkTitleLength(ctx.body.title);
    checkBodyLength(ctx.body.body, "Issue");
    const issue = await openPull(emu, repo, login, {
      title,
      head,
      base,
      body: typeof ctx.body.body === "string" ? ctx.body.body : null,
      draft: ctx.body.draft === true,
      maintainerCanModify: ctx.body.maintainer_can_modify !== false,
    });
    const view = await computePull(emu, repo, issue);
    return { status: 201, body: view.body, headers: { location: view.body.url } };
  });

  r.add("GET", "/repos/:owner/:repo/pulls", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "read", "read");
    const state = ctx.query.get("state") ?? "open";
    const head = ctx.query.get("head");
    const base = ctx.query.get("base");
    let pulls = [...repo.issues.values()].filter((i) => i.pull && (state === "all" || i.state === state));
    if (head) {
      const [owner, branch] = head.includes(":") ? head.split(/:(.*)/s) : [repo.owner, head];
      pulls = pulls.filter(
        (i) =>
          owner!.toLowerCase() === (i.pull!.headRepo ?? repo).owner.toLowerCase() &&
          i.pull!.headRef === branch,
      );
    }
    if (base) pulls = pulls.filter((i) => i.pull!.baseRef === base);
    const sort = ctx.query.get("sort") ?? "created";
    const key = (i: Issue) =>
      (sort === "updated" ? i.updatedAt : i.createdAt) + String(i.number).padStart(9, "0");
    pulls.sort((a, b) => key(a).localeCompare(key(b)));
    if ((ctx.query.get("direction") ?? "desc") === "desc") pulls.reverse();
    const page = paginate(ctx, pulls);
    const body = [];
    for (const issue of page.body as Issue[]) body.push(await simple(repo, issue));
    return { body, headers: page.headers };
  });

  r.add("GET", "/repos/:owner/:repo/pulls/:number", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "read", "read");
    if (emu.faults.missFresh(`pull:${repo.id}:${ctx.params.number}`)) throw notFound();
    const issue = findPull(repo, ctx.params.number!);
    const body = (await computePull(emu, repo, issue)).body;
    if (issue.state === "open" && (emu.faults.takeMergeabilityPending() || mergeabilityComputing(issue))) {
      return { body: { ...body, mergeable: null, rebaseable: null, mergeable_state: "unknown" } };
    }
    return { body };
  });

  r.add("PATCH", "/repos/:owner/:repo/pulls/:number", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const issue = findPull(repo, ctx.params.number!);
    const p = issue.pull!;
    checkTitleLength(ctx.body.title);
    checkBodyLength(ctx.body.body, "Issue");
    const changes: Record<string, unknown> = {};
    if (typeof ctx.body.title === "string" && ctx.body.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.title = ctx.body.title;
    }
    if ((typeof ctx.body.body === "string" || ctx.body.body === null) && ctx.body.body !== issue.body) {
      changes.body = { from: issue.body ?? "" };
      issue.body = ctx.body.body as string | null;
    }
    if (typeof ctx.body.base === "string" && ctx.body.base !== p.baseRef) {
      if (!(await repo.git.readRef(`refs/heads/${ctx.body.base}`)))
        throw validationFailed("Validation Failed", [
          { resource: "PullRequest", field: "base", code: "invalid" },
        ]);
      changes.base = {
        ref: { from: p.baseRef },
        sha: { from: (await computePull(emu, repo, issue)).baseSha },
      };
      p.baseRef = ctx.body.base;
    }
    if (typeof ctx.body.maintainer_can_modify === "boolean")
      p.maintainerCanModify = ctx.body.maintainer_can_modify;
    let stateAction: string | undefined;
    if (ctx.body.state === "closed" && issue.state === "open") {
      p.baseShaAtClose = (await repo.git.readRef(`refs/heads/${p.baseRef}`)) ?? null;
      issue.state = "closed";
      issue.closedAt = emu.now();
      issue.closedBy = login;
      p.autoMerge = null;
      stateAction = "closed";
    } else if (ctx.body.state === "open" && issue.state === "closed") {
      if (p.merged)
        throw validationFailed("Validation Failed", [
          { resource: "PullRequest", code: "custom", message: "Cannot reopen a merged pull request" },
        ]);
      const head = await (p.headRepo ?? repo).git.readRef(`refs/heads/${p.headRef}`);
      if (!head)
        throw validationFailed("Validation Failed", [
          { resource: "PullRequest", code: "custom", message: "The head branch was deleted" },
        ]);
      if (p.headRepo) await repo.git.fetchFrom(p.headRepo.git, `+${head}:refs/pull/${issue.number}/head`);
      p.headSha = head;
      refuseSecondOpenPull(repo, p.headRef, p.headRepo, p.baseRef);
      issue.state = "open";
      issue.closedAt = null;
      p.baseShaAtClose = null;
      stateAction = "reopened";
    }
    issue.updatedAt = emu.now();
    if (Object.keys(changes).length > 0) await emitPull(emu, repo, issue, "edited", login, { changes });
    if (stateAction) await emitPull(emu, repo, issue, stateAction, login);
    return { body: (await computePull(emu, repo, issue)).body };
  });

  r.add("PUT", "/repos/:owner/:repo/pulls/:number/merge", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "contents", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const issue = findPull(repo, ctx.params.number!);
    const method = (ctx.body.merge_method ?? "merge") as MergeMethod;
    if (!["merge", "squash", "rebase"].includes(method))
      throw validationFailed("Validation Failed", [
        { resource: "PullRequest", field: "merge_method", code: "invalid" },
      ]);
    const sha = await mergePull(emu, repo, issue, {
      method,
      login,
      ...(typeof ctx.body.sha === "string" ? { sha: ctx.body.sha } : {}),
      ...(typeof ctx.body.commit_title === "string" ? { commitTitle: ctx.body.commit_title } : {}),
      ...(typeof ctx.body.commit_message === "string" ? { commitMessage: ctx.body.commit_message } : {}),
    });
    return { body: { sha, merged: true, message: "Pull Request successfully merged" } };
  });

  r.add("GET", "/repos/:owner/:repo/pulls/:number/merge", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "read", "read");
    const issue = findPull(repo, ctx.params.number!);
    if (!issue.pull!.merged) throw notFound();
    return { status: 204 };
  });

  const pullRange = async (repo: Repo, issue: Issue) => {
    const view = await computePull(emu, repo, issue);
    const mergeBase = (await repo.git.mergeBase(view.baseSha, issue.pull!.headSha)) ?? view.baseSha;
    return { mergeBase, head: issue.pull!.headSha };
  };

  r.add("GET", "/repos/:owner/:repo/pulls/:number/files", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "read", "read");
    const issue = findPull(repo, ctx.params.number!);
    const { mergeBase, head } = await pullRange(repo, issue);
    // "Responses include a maximum of 3000 files", 30 a page by default and 100 at most
    // (https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files).
    const files = (await repo.git.changedFiles(mergeBase, head)).slice(0, MAX_LISTED_FILES);
    const page = paginate(ctx, files);
    const body = [];
    for (const f of page.body as typeof files)
      body.push(shape.diffEntry(c(), repo, head, f, await repo.git.patch(mergeBase, head, f.path)));
    return { body, headers: page.headers };
  });

  r.add("GET", "/repos/:owner/:repo/pulls/:number/commits", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "read", "read");
    const issue = findPull(repo, ctx.params.number!);
    const { mergeBase, head } = await pullRange(repo, issue);
    const page = paginate(ctx, await repo.git.commitsBetween(mergeBase, head));
    const body = [];
    for (const sha of page.body as string[])
      body.push(shape.commit(c(), repo, await repo.git.readCommit(sha), emu.loginForEmail));
    return { body, headers: page.headers };
  });

  r.add("POST", "/repos/:owner/:repo/pulls/:number/requested_reviewers", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "write", "triage");
    const login = emu.actingLogin(ctx.actor);
    const issue = findPull(repo, ctx.params.number!);
    const reviewers = Array.isArray(ctx.body.reviewers) ? (ctx.body.reviewers as string[]) : [];
    const teams = Array.isArray(ctx.body.team_reviewers) ? (ctx.body.team_reviewers as string[]) : [];
    for (const reviewer of reviewers) {
      const account = emu.findAccount(reviewer);
      if (
        !account ||
        roleOf(emu, repo, account.login) === "none" ||
        (!repo.collaborators.has(account.login) && account.login !== repo.owner)
      ) {
        throw validationFailed(
          "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the " +
            `${repo.owner}/${repo.name} repository.`,
        );
      }
      if (account.login === issue.user)
        throw validationFailed("Review cannot be requested from pull request author.");
    }
    // A team must exist in the repository's organization and have access to the repository, else
    // the whole request is refused, after the PR exists
    // (https://github.com/projectcontour/contour/pull/5998, https://github.com/freifunkMUC/wg-access-server/pull/335).
    for (const slug of teams) {
      const team = emu.teams.get(`${repo.owner}/${slug}`.toLowerCase());
      if (!team || !team.repositories.has(repo.name.toLowerCase()))
        throw validationFailed(
          "Reviews may only be requested from collaborators. One or more of the teams you specified is not a collaborator of the " +
            `${repo.owner}/${repo.name} repository.`,
        );
    }
    const p = issue.pull!;
    for (const reviewer of reviewers) {
      const account = emu.account(reviewer);
      if (!p.requestedReviewers.includes(account.login)) {
        p.requestedReviewers.push(account.login);
        const view = await computePull(emu, repo, issue);
        emit(
          emu,
          repo,
          "pull_request",
          {
            action: "review_requested",
            number: issue.number,
            pull_request: view.body,
            requested_reviewer: shape.simpleUser(c(), account.login),
          },
          login,
        );
      }
    }
    for (const team of teams) if (!p.requestedTeams.includes(team)) p.requestedTeams.push(team);
    return { status: 201, body: await simple(repo, issue) };
  });

  r.add("GET", "/repos/:owner/:repo/pulls/:number/requested_reviewers", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "read", "read");
    const issue = findPull(repo, ctx.params.number!);
    return {
      body: { users: issue.pull!.requestedReviewers.map((login) => shape.simpleUser(c(), login)), teams: [] },
    };
  });

  r.add("POST", "/repos/:owner/:repo/pulls/:number/reviews", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "write", "read");
    const login = emu.actingLogin(ctx.actor);
    const issue = findPull(repo, ctx.params.number!);
    const review = await submitReview(emu, repo, issue, login, {
      ...(typeof ctx.body.event === "string" ? { event: ctx.body.event } : {}),
      ...(typeof ctx.body.body === "string" ? { body: ctx.body.body } : {}),
      ...(typeof ctx.body.commit_id === "string" ? { commitId: ctx.body.commit_id } : {}),
    });
    return { body: shape.review(c(), repo, review) };
  });

  r.add("GET", "/repos/:owner/:repo/pulls/:number/reviews", (ctx: RequestContext) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "read", "read");
    const issue = findPull(repo, ctx.params.number!);
    const reviews = repo.reviews.filter((x) => x.pullNumber === issue.number);
    return paginate(
      ctx,
      reviews.map((x) => shape.review(c(), repo, x)),
    );
  });

  r.add("GET", "/repos/:owner/:repo/pulls/:number/reviews/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "pull_requests", "read", "read");
    const review = repo.reviews.find(
      (x) => x.id === Number(ctx.params.id) && x.pullNumber === Number(ctx.params.number),
    );
    if (!review) throw new ApiError(404, "Not Found");
    return { body: shape.review(c(), repo, review) };
  });
}
