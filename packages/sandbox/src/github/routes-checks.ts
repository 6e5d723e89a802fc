/** Check runs and suites, commit statuses, deployments and deployment statuses. */
import { emit } from "./emulator-events.js";
import {
  checkSuiteFor,
  emitCheckRun,
  pullsForSha,
  refreshSuite,
  scheduleAutoMerge,
  suiteShape,
} from "./emulator-pull-effects.js";
import { isBranchProtected } from "./branch-coverage.js";
import { authorizeRepo } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import type { CheckRun, CommitStatus, Deployment, DeploymentStatus, Repo } from "./model.js";
import { contextState } from "./pull-logic.js";
import {
  ApiError,
  notFound,
  paginate,
  requireString,
  validationFailed,
  type RequestContext,
} from "./router.js";
import * as shape from "./shapes.js";

const CHECK_STATUSES = ["queued", "in_progress", "completed", "waiting", "requested", "pending"];
const CONCLUSIONS = [
  "action_required",
  "cancelled",
  "failure",
  "neutral",
  "success",
  "skipped",
  "stale",
  "timed_out",
];

/** Records a commit status and tells the apps; shared with the test helpers. */
export function createStatus(
  emu: GitHubEmulator,
  repo: Repo,
  sha: string,
  login: string,
  input: { state: string; context?: string; description?: string | null; targetUrl?: string | null },
): CommitStatus {
  if (!["error", "failure", "pending", "success"].includes(input.state)) {
    throw validationFailed("Validation Failed", [
      { resource: "Status", field: "state", code: "custom", message: "state is not included in the list" },
    ]);
  }
  const id = emu.id();
  const now = emu.now();
  const status: CommitStatus = {
    id,
    nodeId: shape.nodeIdFor("SC", id),
    sha,
    state: input.state as CommitStatus["state"],
    context: input.context ?? "default",
    description: input.description ?? null,
    targetUrl: input.targetUrl ?? null,
    creator: login,
    createdAt: now,
    updatedAt: now,
  };
  repo.statuses.push(status);
  emu.later(async () => {
    const commit = await repo.git.readCommit(sha);
    const branches = (await repo.git.listRefs("refs/heads/")).filter((x) => x.sha === sha);
    emit(
      emu,
      repo,
      "status",
      {
        id: status.id,
        sha,
        name: `${repo.owner}/${repo.name}`,
        target_url: status.targetUrl,
        avatar_url: null,
        context: status.context,
        description: status.description,
        state: status.state,
        commit: shape.commit(emu.shapes, repo, commit, emu.loginForEmail),
        branches: branches.map((b) => ({
          name: b.ref.slice(11),
          commit: { sha: b.sha, url: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/commits/${b.sha}` },
          protected: isBranchProtected(repo, b.ref.slice(11)),
        })),
        created_at: status.createdAt,
        updated_at: status.updatedAt,
      },
      login,
    );
  });
  scheduleAutoMerge(emu, repo);
  return status;
}

function combinedState(statuses: CommitStatus[]): string {
  if (statuses.some((s) => s.state === "error" || s.state === "failure")) return "failure";
  if (statuses.length === 0 || statuses.some((s) => s.state === "pending")) return "pending";
  return "success";
}

function latestPerContext(statuses: CommitStatus[]): CommitStatus[] {
  const latest = new Map<string, CommitStatus>();
  for (const s of statuses) latest.set(s.context, s);
  return [...latest.values()].reverse();
}

export function registerCheckRoutes(emu: GitHubEmulator): void {
  const r = emu.router;
  const c = () => emu.shapes;

  const requireAppActor = (ctx: RequestContext): number => {
    if (ctx.actor.kind !== "installation") throw new ApiError(403, "You must authenticate via a GitHub App.");
    return ctx.actor.appId;
  };

  const resolveSha = async (repo: Repo, ref: string) => {
    const sha = await repo.git.resolveCommit(ref);
    if (!sha) throw new ApiError(422, `No commit found for SHA: ${ref}`);
    return sha;
  };

  const runShape = (repo: Repo, run: CheckRun) =>
    shape.checkRun(c(), repo, run, pullsForSha(emu, repo, run.headSha));

  const applyRunFields = (run: CheckRun, body: Record<string, unknown>) => {
    if (typeof body.name === "string") run.name = body.name;
    if (typeof body.details_url === "string") run.detailsUrl = body.details_url;
    if (typeof body.external_id === "string") run.externalId = body.external_id;
    if (typeof body.started_at === "string") run.startedAt = body.started_at;
    if (body.status !== undefined) {
      if (typeof body.status !== "string" || !CHECK_STATUSES.includes(body.status))
        throw validationFailed("Validation Failed", [
          { resource: "CheckRun", field: "status", code: "invalid" },
        ]);
      run.status = body.status as CheckRun["status"];
    }
    if (body.conclusion !== undefined) {
      if (typeof body.conclusion !== "string" || !CONCLUSIONS.includes(body.conclusion))
        throw validationFailed("Validation Failed", [
          { resource: "CheckRun", field: "conclusion", code: "invalid" },
        ]);
      run.conclusion = body.conclusion;
      run.status = "completed";
    }
    if (run.status === "completed") {
      if (!run.conclusion) throw validationFailed('Invalid request.\n\n"conclusion" wasn\'t supplied.');
      run.completedAt =
        typeof body.completed_at === "string" ? body.completed_at : (run.completedAt ?? emu.now());
    }
    const output = body.output as
      { title?: string; summary?: string; text?: string; annotations?: unknown[] } | undefined;
    if (output) {
      if (typeof output.title !== "string" || typeof output.summary !== "string")
        throw validationFailed(
          'Invalid request.\n\nFor \'properties/output\', "title" and "summary" are required.',
        );
      checkOutputLength("summary", output.summary);
      if (typeof output.text === "string") checkOutputLength("text", output.text);
      const annotations = output.annotations ?? [];
      if (annotations.length > 50)
        throw validationFailed("Invalid request.\n\nOnly 50 annotations are allowed per request.");
      run.output = {
        title: output.title,
        summary: output.summary,
        text: output.text ?? null,
        annotations: [...run.output.annotations, ...annotations],
      };
    }
  };

  r.add("POST", "/repos/:owner/:repo/check-runs", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "checks", "write", "write");
    const appId = requireAppActor(ctx);
    const login = emu.actingLogin(ctx.actor);
    requireString(ctx.body, "name", "CheckRun");
    const headSha = await resolveSha(repo, requireString(ctx.body, "head_sha", "CheckRun"));
    const branch = (await repo.git.listRefs("refs/heads/")).find((x) => x.sha === headSha);
    const suite = checkSuiteFor(emu, repo, appId, headSha, branch ? branch.ref.slice(11) : null);
    const id = emu.id();
    const run: CheckRun = {
      id,
      nodeId: shape.nodeIdFor("CR", id),
      suiteId: suite.id,
      appId,
      name: "",
      headSha,
      status: "queued",
      conclusion: null,
      startedAt: emu.now(),
      completedAt: null,
      externalId: "",
      detailsUrl: `${emu.webUrl}/${repo.owner}/${repo.name}/runs/${id}`,
      output: { title: null, summary: null, text: null, annotations: [] },
    };
    applyRunFields(run, ctx.body);
    repo.checkRuns.set(id, run);
    await emitCheckRun(emu, repo, run, "created", login);
    if (run.status === "completed") await emitCheckRun(emu, repo, run, "completed", login);
    return { status: 201, body: runShape(repo, run) };
  });

  r.add("PATCH", "/repos/:owner/:repo/check-runs/:id", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "checks", "write", "write");
    const appId = requireAppActor(ctx);
    const login = emu.actingLogin(ctx.actor);
    const run = repo.checkRuns.get(Number(ctx.params.id));
    if (!run) throw notFound();
    if (run.appId !== appId)
      throw new ApiError(
        403,
        "Invalid app_id `" + appId + "` - check run can only be modified by the GitHub App that created it.",
      );
    const wasCompleted = run.status === "completed";
    applyRunFields(run, ctx.body);
    if (!wasCompleted && run.status === "completed") await emitCheckRun(emu, repo, run, "completed", login);
    else refreshSuite(emu, repo, repo.checkSuites.get(run.suiteId)!);
    return { body: runShape(repo, run) };
  });

  r.add("GET", "/repos/:owner/:repo/check-runs/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "checks", "read", "read");
    const run = repo.checkRuns.get(Number(ctx.params.id));
    if (!run) throw notFound();
    return { body: runShape(repo, run) };
  });

  r.add("GET", "/repos/:owner/:repo/check-runs/:id/annotations", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "checks", "read", "read");
    const run = repo.checkRuns.get(Number(ctx.params.id));
    if (!run) throw notFound();
    const blobBase = `${emu.webUrl}/${repo.owner}/${repo.name}/blob/${run.headSha}`;
    return paginate(
      ctx,
      run.output.annotations.map((raw) => {
        const a = raw as Record<string, unknown>;
        return {
          path: a.path,
          start_line: a.start_line,
          end_line: a.end_line,
          start_column: a.start_column ?? null,
          end_column: a.end_column ?? null,
          annotation_level: a.annotation_level,
          title: a.title ?? null,
          message: a.message,
          raw_details: a.raw_details ?? null,
          blob_href: `${blobBase}/${String(a.path)}`,
        };
      }),
    );
  });

  r.add("GET", "/repos/:owner/:repo/commits/:ref/check-runs", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "checks", "read", "read");
    const sha = await repo.git.resolveCommit(ctx.params.ref!);
    if (!sha) throw notFound();
    let runs = [...repo.checkRuns.values()].filter((x) => x.headSha === sha);
    const name = ctx.query.get("check_name");
    const status = ctx.query.get("status");
    if (name) runs = runs.filter((x) => x.name === name);
    if (status) runs = runs.filter((x) => x.status === status);
    if ((ctx.query.get("filter") ?? "latest") === "latest") {
      const latest = new Map<string, CheckRun>();
      for (const run of runs) latest.set(`${run.appId}:${run.name}`, run);
      runs = [...latest.values()];
    }
    runs.reverse();
    return paginate(ctx, runs, (page) => ({
      total_count: runs.length,
      check_runs: page.map((run) => runShape(repo, run)),
    }));
  });

  r.add("GET", "/repos/:owner/:repo/commits/:ref/check-suites", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "checks", "read", "read");
    const sha = await repo.git.resolveCommit(ctx.params.ref!);
    if (!sha) throw notFound();
    const suites = [...repo.checkSuites.values()].filter((x) => x.headSha === sha);
    const page = paginate(ctx, suites);
    const shapes = [];
    for (const suite of page.body as typeof suites) shapes.push(await suiteShape(emu, repo, suite));
    return { headers: page.headers, body: { total_count: suites.length, check_suites: shapes } };
  });

  r.add("GET", "/repos/:owner/:repo/check-suites/:id", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "checks", "read", "read");
    const suite = repo.checkSuites.get(Number(ctx.params.id));
    if (!suite) throw notFound();
    return { body: await suiteShape(emu, repo, suite) };
  });

  // ------------------------------------------------------------------ statuses

  r.add("POST", "/repos/:owner/:repo/statuses/:sha", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "statuses", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const sha = ctx.params.sha!;
    if ((await repo.git.objectType(sha)) !== "commit")
      throw validationFailed(`No commit found for SHA: ${sha}`);
    const status = createStatus(emu, repo, sha, login, {
      state: requireString(ctx.body, "state", "Status"),
      ...(typeof ctx.body.context === "string" ? { context: ctx.body.context } : {}),
      ...(typeof ctx.body.description === "string" ? { description: ctx.body.description } : {}),
      ...(typeof ctx.body.target_url === "string" ? { targetUrl: ctx.body.target_url } : {}),
    });
    return { status: 201, body: shape.commitStatus(c(), repo, status) };
  });

  r.add("GET", "/repos/:owner/:repo/commits/:ref/status", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "statuses", "read", "read");
    const sha = await repo.git.resolveCommit(ctx.params.ref!);
    if (!sha) throw notFound();
    const latest = latestPerContext(repo.statuses.filter((s) => s.sha === sha));
    const page = paginate(ctx, latest);
    return {
      headers: page.headers,
      body: {
        state: combinedState(latest),
        sha,
        total_count: latest.length,
        statuses: (page.body as CommitStatus[]).map((s) => shape.commitStatus(c(), repo, s)),
        repository: shape.repository(c(), repo),
        commit_url: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/commits/${sha}`,
        url: `${emu.apiUrl}/repos/${repo.owner}/${repo.name}/commits/${sha}/status`,
      },
    };
  });

  r.add("GET", "/repos/:owner/:repo/commits/:ref/statuses", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "statuses", "read", "read");
    const sha = await repo.git.resolveCommit(ctx.params.ref!);
    if (!sha) throw notFound();
    return paginate(
      ctx,
      repo.statuses
        .filter((s) => s.sha === sha)
        .reverse()
        .map((s) => shape.commitStatus(c(), repo, s)),
    );
  });

  // ------------------------------------------------------------------ deployments

  r.add("POST", "/repos/:owner/:repo/deployments", async (ctx) => {
    const repo = authorizeRepo(emu, ctx, "deployments", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const ref = requireString(ctx.body, "ref", "Deployment");
    const sha = await repo.git.resolveCommit(ref);
    if (!sha) throw validationFailed(`No ref found for: ${ref}`);
    // GitHub verifies the commit's statuses first: every required context (default: all of them) must be green.
    const required = Array.isArray(ctx.body.required_contexts)
      ? (ctx.body.required_contexts as string[])
      : undefined;
    const contexts = required ?? [
      ...new Set([...repo.statuses.filter((s) => s.sha === sha).map((s) => s.context)]),
    ];
    const failing = contexts.filter((context) => contextState(repo, sha, context) !== "success");
    if (failing.length > 0) {
      throw new ApiError(
        409,
        `Conflict: Commit status checks failed for ${ref}.`,
        failing.map((context) => ({
          contexts: [{ context, state: contextState(repo, sha, context) }],
          resource: "Deployment",
          field: "required_contexts",
          code: "invalid",
        })),
      );
    }
    const id = emu.id();
    const now = emu.now();
    const environment = typeof ctx.body.environment === "string" ? ctx.body.environment : "production";
    const deployment: Deployment = {
      id,
      nodeId: shape.nodeIdFor("DE", id),
      sha,
      ref,
      task: typeof ctx.body.task === "string" ? ctx.body.task : "deploy",
      environment,
      description: typeof ctx.body.description === "string" ? ctx.body.description : null,
      payload: typeof ctx.body.payload === "string" ? safeJson(ctx.body.payload) : (ctx.body.payload ?? {}),
      creator: login,
      productionEnvironment:
        typeof ctx.body.production_environment === "boolean"
          ? ctx.body.production_environment
          : environment === "production",
      transientEnvironment: ctx.body.transient_environment === true,
      createdAt: now,
      updatedAt: now,
    };
    const appId = emu.actingAppId(ctx.actor);
    if (appId !== undefined) deployment.appId = appId;
    repo.deployments.set(id, deployment);
    emit(
      emu,
      repo,
      "deployment",
      {
        action: "created",
        deployment: shape.deployment(c(), repo, deployment),
        workflow: null,
        workflow_run: null,
      },
      login,
    );
    return { status: 201, body: shape.deployment(c(), repo, deployment) };
  });

  r.add("GET", "/repos/:owner/:repo/deployments", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "deployments", "read", "read");
    let list = [...repo.deployments.values()].reverse();
    for (const [field, key] of [
      ["sha", "sha"],
      ["ref", "ref"],
      ["task", "task"],
      ["environment", "environment"],
    ] as const) {
      const wanted = ctx.query.get(field);
      if (wanted) list = list.filter((d) => d[key] === wanted);
    }
    return paginate(
      ctx,
      list.map((d) => shape.deployment(c(), repo, d)),
    );
  });

  r.add("GET", "/repos/:owner/:repo/deployments/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "deployments", "read", "read");
    const deployment = repo.deployments.get(Number(ctx.params.id));
    if (!deployment) throw notFound();
    return { body: shape.deployment(c(), repo, deployment) };
  });

  r.add("POST", "/repos/:owner/:repo/deployments/:id/statuses", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "deployments", "write", "write");
    const login = emu.actingLogin(ctx.actor);
    const deployment = repo.deployments.get(Number(ctx.params.id));
    if (!deployment) throw notFound();
    const state = requireString(ctx.body, "state", "DeploymentStatus");
    if (!["error", "failure", "inactive", "in_progress", "queued", "pending", "success"].includes(state)) {
      throw validationFailed("Validation Failed", [
        { resource: "DeploymentStatus", field: "state", code: "invalid" },
      ]);
    }
    const text = (field: string) => (typeof ctx.body[field] === "string" ? (ctx.body[field] as string) : "");
    const environment = text("environment") || deployment.environment;
    const status = newDeploymentStatus(emu, deployment, login, state, environment, {
      description: text("description").slice(0, 140),
      targetUrl: text("target_url") || text("log_url"),
      logUrl: text("log_url") || text("target_url"),
      environmentUrl: text("environment_url"),
    });
    const appId = emu.actingAppId(ctx.actor);
    if (appId !== undefined) status.appId = appId;
    repo.deploymentStatuses.push(status);
    // auto_inactive (default true): an earlier successful deployment to the environment becomes inactive.
    if (state === "success" && ctx.body.auto_inactive !== false) {
      for (const other of repo.deployments.values()) {
        if (other.id === deployment.id || other.environment !== environment || other.transientEnvironment)
          continue;
        const latest = repo.deploymentStatuses.filter((s) => s.deploymentId === other.id).at(-1);
        if (latest?.state === "success")
          repo.deploymentStatuses.push(
            newDeploymentStatus(emu, other, login, "inactive", environment, {
              description: "",
              targetUrl: "",
              logUrl: "",
              environmentUrl: "",
            }),
          );
      }
    }
    deployment.updatedAt = status.createdAt;
    emit(
      emu,
      repo,
      "deployment_status",
      {
        action: "created",
        deployment_status: shape.deploymentStatus(c(), repo, status),
        deployment: shape.deployment(c(), repo, deployment),
      },
      login,
    );
    return { status: 201, body: shape.deploymentStatus(c(), repo, status) };
  });

  r.add("GET", "/repos/:owner/:repo/deployments/:id/statuses", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "deployments", "read", "read");
    const deployment = repo.deployments.get(Number(ctx.params.id));
    if (!deployment) throw notFound();
    const statuses = repo.deploymentStatuses.filter((s) => s.deploymentId === deployment.id).reverse();
    return paginate(
      ctx,
      statuses.map((s) => shape.deploymentStatus(c(), repo, s)),
    );
  });
}

function newDeploymentStatus(
  emu: GitHubEmulator,
  deployment: Deployment,
  login: string,
  state: string,
  environment: string,
  urls: { description: string; targetUrl: string; logUrl: string; environmentUrl: string },
): DeploymentStatus {
  const id = emu.id();
  const now = emu.now();
  return {
    id,
    nodeId: shape.nodeIdFor("DES", id),
    deploymentId: deployment.id,
    state,
    environment,
    creator: login,
    createdAt: now,
    updatedAt: now,
    ...urls,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A check run's `output.summary` and `output.text`: "Maximum length: 65535 characters"
 * (https://docs.github.com/en/rest/checks/runs#create-a-check-run). Over it in characters GitHub
 * answers 422 "Invalid request.\n\nOnly 65535 characters are allowed; N were supplied."
 * (https://github.com/zyborg/dotnet-tests-report/issues/9); within it but over 65,535 bytes of
 * UTF-8, 422 "summary exceeds a maximum bytesize of 65535" (https://github.com/github/docs/issues/35252).
 */
const MAX_OUTPUT_CHARS = 65_535;

function checkOutputLength(field: "summary" | "text", value: string): void {
  if (value.length > MAX_OUTPUT_CHARS)
    throw validationFailed(
      `Invalid request.\n\nOnly ${MAX_OUTPUT_CHARS} characters are allowed; ${value.length} were supplied.`,
    );
  if (Buffer.byteLength(value, "utf8") > MAX_OUTPUT_CHARS)
    throw validationFailed("Validation Failed", [
      {
        resource: "CheckRun",
        code: "custom",
        field,
        message: `${field} exceeds a maximum bytesize of ${MAX_OUTPUT_CHARS}`,
      },
    ]);
}
