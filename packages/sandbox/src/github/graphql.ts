/**
 * The few GraphQL operations Ferry uses: `enablePullRequestAutoMerge`,
 * `disablePullRequestAutoMerge`, `enqueuePullRequest`, `updateRefs`, `pinIssue`/`unpinIssue`, and looking a pull request's node id up. Every
 * document is first checked against GitHub's published schema (`graphql-schema-check.ts`); past that
 * this is not a GraphQL engine: the operation is recognised by name and its `input` read from the variables or
 * the inline object. Errors come back as GitHub sends them (HTTP 200, `errors[]`).
 */
import { emit, emitPull } from "./emulator-events.js";
import { graphqlSchemaErrors } from "./graphql-schema-check.js";
import { updateRefs } from "./graphql-update-refs.js";
import { authorize } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import type { Issue, Repo } from "./model.js";
import { enqueue } from "./merge-queue.js";
import { enableAutoMerge } from "./pull-logic.js";
import { ApiError, type Reply, type RequestContext } from "./router.js";
import * as shape from "./shapes.js";

type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

/** Parses a GraphQL input object literal like `{pullRequestId: $id, mergeMethod: SQUASH}`. */
function parseInputLiteral(text: string, variables: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const pattern = /(\w+)\s*:\s*("(?:[^"\\]|\\.)*"|\$\w+|[\w.-]+)/g;
  for (const match of text.matchAll(pattern)) {
    const raw = match[2]!;
    let value: unknown = raw;
    if (raw.startsWith("$")) value = variables[raw.slice(1)];
    else if (raw.startsWith('"')) value = JSON.parse(raw) as Value;
    else if (raw === "true" || raw === "false") value = raw === "true";
    else if (raw === "null") value = null;
    result[match[1]!] = value;
  }
  return result;
}

function mutationInput(
  query: string,
  name: string,
  variables: Record<string, unknown>,
): Record<string, unknown> | undefined {
  // A whole-word match: `pinIssue` must not be found inside `unpinIssue`.
  const found = new RegExp(`\\b${name}\\b`).exec(query);
  if (!found) return undefined;
  const rest = query.slice(found.index + name.length);
  const byVariable = /^\s*\(\s*input\s*:\s*\$(\w+)\s*\)/.exec(rest);
  if (byVariable) return (variables[byVariable[1]!] as Record<string, unknown>) ?? {};
  const inline = /^\s*\(\s*input\s*:\s*\{([^}]*)\}\s*\)/.exec(rest);
  return inline ? parseInputLiteral(inline[1]!, variables) : {};
}

function findByNodeId(emu: GitHubEmulator, nodeId: unknown): { repo: Repo; issue: Issue } | undefined {
  for (const repo of emu.repos.values()) {
    for (const issue of repo.issues.values()) {
      if (issue.pull && (issue.pullNodeId === nodeId || issue.nodeId === nodeId)) return { repo, issue };
    }
  }
  return undefined;
}

/** Issues only: GitHub's pinIssue refuses pull request ids. */
function findIssueByNodeId(emu: GitHubEmulator, nodeId: unknown): { repo: Repo; issue: Issue } | undefined {
  for (const repo of emu.repos.values()) {
    for (const issue of repo.issues.values()) {
      if (!issue.pull && issue.nodeId === nodeId) return { repo, issue };
    }
  }
  return undefined;
}

function failure(path: string, type: string, message: string): Reply {
  return {
    body: {
      data: { [path]: null },
      errors: [{ type, path: [path], locations: [{ line: 2, column: 3 }], message }],
    },
  };
}

function pullRequestNode(issue: Issue) {
  const auto = issue.pull!.autoMerge;
  return {
    id: issue.pullNodeId,
    number: issue.number,
    state: issue.pull!.merged ? "MERGED" : issue.state.toUpperCase(),
    autoMergeRequest: auto
      ? { enabledAt: issue.updatedAt, mergeMethod: auto.method, enabledBy: { login: auto.enabledBy } }
      : null,
  };
}

/**
 * The PR a mutation names by node id, once the actor holds write on pull requests and contents;
 * otherwise the GraphQL failure GitHub answers (`NOT_FOUND`, or `FORBIDDEN` with `forbidden`).
 */
function pullForMutation(
  emu: GitHubEmulator,
  ctx: RequestContext,
  name: string,
  pullRequestId: unknown,
  forbidden: string,
): { repo: Repo; issue: Issue } | { reply: Reply } {
  const found = findByNodeId(emu, pullRequestId);
  if (!found)
    return {
      reply: failure(
        name,
        "NOT_FOUND",
        `Could not resolve to a node with the global id of '${String(pullRequestId)}'`,
      ),
    };
  try {
    authorize(emu, ctx.actor, found.repo, "pull_requests", "write", "write");
    authorize(emu, ctx.actor, found.repo, "contents", "write", "write");
  } catch (error) {
    if (error instanceof ApiError) return { reply: failure(name, "FORBIDDEN", forbidden) };
    throw error;
  }
  return found;
}

export async function handleGraphql(emu: GitHubEmulator, ctx: RequestContext): Promise<Reply> {
  const query = typeof ctx.body.query === "string" ? ctx.body.query : "";
  const variables = (ctx.body.variables as Record<string, unknown>) ?? {};
  if (ctx.actor.kind === "anonymous")
    throw new ApiError(401, "This endpoint requires you to be authenticated.");
  // github.com checks the document against its schema before anything runs.
  const schemaErrors = graphqlSchemaErrors(query);
  if (schemaErrors.length > 0) return { status: 200, body: { errors: schemaErrors } };

  for (const name of ["enablePullRequestAutoMerge", "disablePullRequestAutoMerge"]) {
    const input = mutationInput(query, name, variables);
    if (!input) continue;
    const found = pullForMutation(
      emu,
      ctx,
      name,
      input.pullRequestId,
      `${ctx.actor.kind === "installation" ? ctx.actor.login : "Viewer"} does not have permission to enable auto-merge on this pull request.`,
    );
    if ("reply" in found) return found.reply;
    const { repo, issue } = found;
    const login = emu.actingLogin(ctx.actor);
    if (name === "enablePullRequestAutoMerge") {
      const method = String(input.mergeMethod ?? "MERGE").toUpperCase();
      if (!["MERGE", "SQUASH", "REBASE"].includes(method))
        return failure(name, "UNPROCESSABLE", `Invalid merge method ${method}`);
      const problem = await enableAutoMerge(
        emu,
        repo,
        issue,
        login,
        method as "MERGE" | "SQUASH" | "REBASE",
        typeof input.commitHeadline === "string" ? input.commitHeadline : undefined,
        typeof input.commitBody === "string" ? input.commitBody : undefined,
        typeof input.expectedHeadOid === "string" ? input.expectedHeadOid : undefined,
      );
      if (problem) return failure(name, "UNPROCESSABLE", problem);
    } else if (issue.pull!.autoMerge) {
      issue.pull!.autoMerge = null;
      issue.updatedAt = emu.now();
      await emitPull(emu, repo, issue, "auto_merge_disabled", login, { reason: "Disabled by user" });
    }
    return {
      body: {
        data: {
          [name]: { clientMutationId: input.clientMutationId ?? null, pullRequest: pullRequestNode(issue) },
        },
      },
    };
  }

  // `enqueuePullRequest(input: { pullRequestId, expectedHeadOid })`: into the base's merge queue.
  {
    const name = "enqueuePullRequest";
    const input = mutationInput(query, name, variables);
    if (input) {
      const found = pullForMutation(
        emu,
        ctx,
        name,
        input.pullRequestId,
        "Resource not accessible by integration",
      );
      if ("reply" in found) return found.reply;
      const { repo, issue } = found;
      const problem = await enqueue(
        emu,
        repo,
        issue,
        emu.actingLogin(ctx.actor),
        typeof input.expectedHeadOid === "string" ? input.expectedHeadOid : undefined,
      );
      if (problem) return failure(name, "UNPROCESSABLE", problem);
      return {
        body: {
          data: {
            [name]: {
              clientMutationId: input.clientMutationId ?? null,
              mergeQueueEntry: { id: `MQE_${issue.pullNodeId}`, position: 0, state: "QUEUED" },
            },
          },
        },
      };
    }
  }

  for (const name of ["pinIssue", "unpinIssue"]) {
    const input = mutationInput(query, name, variables);
    if (!input) continue;
    const found = findIssueByNodeId(emu, input.issueId);
    if (!found)
      return failure(
        name,
        "NOT_FOUND",
        `Could not resolve to a node with the global id of '${String(input.issueId)}'`,
      );
    const { repo, issue } = found;
    try {
      authorize(emu, ctx.actor, repo, "issues", "write", "triage");
    } catch (error) {
      if (error instanceof ApiError)
        return failure(name, "FORBIDDEN", "Resource not accessible by integration");
      throw error;
    }
    const login = emu.actingLogin(ctx.actor);
    const pinned = repo.pinnedIssues.includes(issue.number);
    if (name === "pinIssue" && !pinned) {
      if (repo.pinnedIssues.length >= 3)
        return failure(name, "UNPROCESSABLE", "You can't pin more than 3 issues in a repository.");
      repo.pinnedIssues.push(issue.number);
      emit(emu, repo, "issues", { action: "pinned", issue: shape.issue(emu.shapes, repo, issue) }, login);
    } else if (name === "unpinIssue" && pinned) {
      repo.pinnedIssues = repo.pinnedIssues.filter((n) => n !== issue.number);
      emit(emu, repo, "issues", { action: "unpinned", issue: shape.issue(emu.shapes, repo, issue) }, login);
    }
    return {
      body: {
        data: {
          [name]: {
            clientMutationId: input.clientMutationId ?? null,
            issue: { id: issue.nodeId, number: issue.number, isPinned: name === "pinIssue" },
          },
        },
      },
    };
  }

  {
    const input = mutationInput(query, "updateRefs", variables);
    if (input) return updateRefs(emu, ctx, input);
  }

  // `repository(owner:, name:) { pullRequest(number:) { id ... } }`
  const lookup = /repository\s*\(([^)]*)\)\s*\{\s*pullRequest\s*\(([^)]*)\)/.exec(query);
  if (lookup) {
    const repoArgs = parseInputLiteral(lookup[1]!, variables);
    const pullArgs = parseInputLiteral(lookup[2]!, variables);
    const repo = emu.findRepo(String(repoArgs.owner), String(repoArgs.name));
    if (!repo)
      return failure(
        "repository",
        "NOT_FOUND",
        `Could not resolve to a Repository with the name '${String(repoArgs.owner)}/${String(repoArgs.name)}'.`,
      );
    try {
      authorize(emu, ctx.actor, repo, "pull_requests", "read", "read");
    } catch {
      return failure(
        "repository",
        "NOT_FOUND",
        `Could not resolve to a Repository with the name '${repo.owner}/${repo.name}'.`,
      );
    }
    const issue = repo.issues.get(Number(pullArgs.number));
    return { body: { data: { repository: { pullRequest: issue?.pull ? pullRequestNode(issue) : null } } } };
  }
  return { body: { errors: [{ message: "The emulator does not implement this GraphQL operation." }] } };
}
