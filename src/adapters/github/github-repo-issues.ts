import type { Permission } from "../../core/config/schema.js";
import { fitBody } from "../../core/pr/body-limit.js";
import type {
  GitHubAccess,
  GitHubComments,
  GitHubIssues,
  IssueInfo,
  ReactionContent,
} from "../../app/github-port.js";
import { type GitHubRepoContext, orUndefinedOn404, status } from "./github-repo-context.js";

/** The label on Ferry's issues (its PRs carry it too): `findIssue` reads only these. */
const FERRY_ISSUE_LABEL = "ferry";
/** Pages of 100 `ferry`-labelled issues and PRs read when looking for one by title (3,000 items). */
const MAX_ISSUE_PAGES = 30;

/**
 * Issues, comments and access: Ferry's `ferry`-labelled issues, comments and reactions, and who
 * may run a command (`GitHubComments`, `GitHubIssues`, `GitHubAccess`).
 */
export function issuesOf(ctx: GitHubRepoContext): Required<GitHubComments & GitHubIssues & GitHubAccess> {
  async function comment(issueNumber: number, body: string): Promise<void> {
    // A `/ferry status` answer for a big config can pass GitHub's body limit: cut it rather than lose it.
    const fitted = fitBody(body, "", "The dashboard issue and `ferry plan` show the rest.") ?? body;
    await ctx.octokit.rest.issues.createComment({ ...ctx.r, issue_number: issueNumber, body: fitted });
  }

  async function react(commentId: number, content: ReactionContent): Promise<"created" | "existed"> {
    // GitHub answers 200 when this app already reacted so, 201 when it is new: an atomic dedupe key.
    const response = await ctx.octokit.rest.reactions.createForIssueComment({
      ...ctx.r,
      comment_id: commentId,
      content,
    });
    return (response.status as number) === 200 ? "existed" : "created";
  }

  async function permissionOf(login: string): Promise<Permission | "none"> {
    if (!ctx.access) return livePermissionOf(login);
    return ctx.access.get(
      `permission:${ctx.fullName}:${login.toLowerCase()}`,
      () => livePermissionOf(login),
      (permission) => ["none", "read", "triage"].includes(permission),
    );
  }

  async function livePermissionOf(login: string): Promise<Permission | "none"> {
    const response = await orUndefinedOn404(
      ctx.octokit.rest.repos.getCollaboratorPermissionLevel({ ...ctx.r, username: login }),
    );
    if (!response) return "none";
    const data = response.data as {
      role_name?: string;
      permission: string;
      user?: {
        permissions?: Partial<Record<"admin" | "maintain" | "push" | "triage" | "pull", boolean>>;
      } | null;
    };
    const base = (["read", "triage", "write", "maintain", "admin"] as const).find(
      (name) => name === data.role_name,
    );
    if (base) return base;
    // A custom role (`role_name` is its own name): decide on the base role it inherits, the
    // highest grant in `user.permissions`; `permission` alone reports Maintain as write
    // (https://docs.github.com/en/rest/collaborators/collaborators#get-repository-permissions-for-a-user).
    const grants = data.user?.permissions;
    if (grants) {
      if (grants.admin) return "admin";
      if (grants.maintain) return "maintain";
      if (grants.push) return "write";
      if (grants.triage) return "triage";
      if (grants.pull) return "read";
    }
    const permission = data.permission;
    return (
      (["read", "write", "admin"] as const).find((name) => name === permission) ??
      (permission === "pull" ? "read" : permission === "push" ? "write" : "none")
    );
  }

  async function isTeamMember(team: string, login: string): Promise<boolean> {
    const [org, slug] = team.includes("/") ? (team.split("/") as [string, string]) : [ctx.owner, team];
    if (!ctx.access) return liveTeamMembership(org, slug, login);
    return ctx.access.get(
      `team:${org}/${slug}:${login.toLowerCase()}`,
      () => liveTeamMembership(org, slug, login),
      (member) => !member,
    );
  }

  async function liveTeamMembership(org: string, slug: string, login: string): Promise<boolean> {
    const response = await orUndefinedOn404(
      ctx.octokit.rest.teams.getMembershipForUserInOrg({ org, team_slug: slug, username: login }),
    );
    return response?.data.state === "active";
  }

  async function findIssue(title: string): Promise<IssueInfo | undefined> {
    // Closed ones too: a dashboard someone closed still holds the holds and floors, and is reopened
    // rather than replaced by an empty one (which would silently lift every hold). Ferry's PRs carry
    // the label too, so every page is read: the one page of 100 newest items used to miss the
    // dashboard after ~100 PRs and a duplicate was created. Bounded (docs/reliability.md).
    const matches: { number: number; title: string; body?: string | null; state: string }[] = [];
    let pages = 0;
    for await (const { data } of ctx.octokit.paginate.iterator(ctx.octokit.rest.issues.listForRepo, {
      ...ctx.r,
      labels: FERRY_ISSUE_LABEL,
      state: "all",
      per_page: 100,
    })) {
      for (const candidate of data)
        if (!candidate.pull_request && candidate.title === title) matches.push(candidate);
      if (++pages >= MAX_ISSUE_PAGES) break;
    }
    // The oldest open one: replicas that raced to create a dashboard all settle on the same issue.
    const byNumber = matches.sort((a, b) => a.number - b.number);
    const issue = byNumber.find((candidate) => candidate.state === "open") ?? byNumber[0];
    return issue
      ? {
          number: issue.number,
          title: issue.title,
          body: issue.body ?? "",
          state: issue.state === "open" ? "open" : "closed",
        }
      : undefined;
  }

  async function getIssue(number: number): Promise<(IssueInfo & { author: string }) | undefined> {
    let response;
    try {
      response = await ctx.octokit.rest.issues.get({ ...ctx.r, issue_number: number });
    } catch (error) {
      // 404, or 410 when the issue was deleted or issues were turned off: the same as absent.
      if (status(error) === 404 || status(error) === 410) return undefined;
      throw error;
    }
    if (response.data.pull_request) return undefined;
    const { data } = response;
    return {
      number: data.number,
      title: data.title,
      body: data.body ?? "",
      state: data.state === "open" ? "open" : "closed",
      author: data.user?.login ?? "",
    };
  }

  async function createIssue(input: { title: string; body: string }): Promise<number | undefined> {
    try {
      const { data } = await ctx.octokit.rest.issues.create({
        ...ctx.r,
        ...input,
        labels: [FERRY_ISSUE_LABEL],
      });
      return data.number;
    } catch (error) {
      // 410 "Issues are disabled for this repo" (https://github.com/ossf/allstar/issues/64).
      if (status(error) === 410) return undefined;
      throw error;
    }
  }

  async function updateIssue(
    number: number,
    input: { body?: string; state?: "open" | "closed" },
  ): Promise<void> {
    await ctx.octokit.rest.issues.update({ ...ctx.r, issue_number: number, ...input });
  }

  async function pinIssue(number: number): Promise<void> {
    const { data } = await ctx.octokit.rest.issues.get({ ...ctx.r, issue_number: number });
    await ctx.octokit.graphql(
      `mutation($id: ID!) { pinIssue(input: { issueId: $id }) { clientMutationId } }`,
      { id: data.node_id },
    );
  }
  return {
    comment,
    react,
    findIssue,
    getIssue,
    createIssue,
    updateIssue,
    pinIssue,
    permissionOf,
    isTeamMember,
  };
}
