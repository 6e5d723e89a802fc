/**
 * A stateful GitHub emulator on 127.0.0.1: REST (and the GraphQL auto-merge mutations), git
 * smart HTTP, apps and installations, and signed webhook deliveries — enough that the real
 * `@octokit/rest` and a Probot app run against it unchanged through `baseUrl`.
 *
 * Git objects and refs live in real bare repositories (git-store.ts); everything else is in
 * memory (model.ts). Responses follow api.github.com's OpenAPI description (shapes.ts).
 */
import { createPublicKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateAppKeyPair, looksLikeJwt, newToken, verifyAppJwt } from "./auth.js";
import { Faults } from "./faults.js";
import { GitRepo, ZERO_SHA, type GitIdentity } from "./git-store.js";
import { handleGitHttp } from "./git-http.js";
import { handleGraphql } from "./graphql.js";
import {
  actorName,
  roleAtLeast,
  type Account,
  type Actor,
  type App,
  type BranchProtection,
  type CheckRun,
  type CheckSuite,
  type Installation,
  type InstallationToken,
  type Issue,
  type Permissions,
  type Repo,
  type RepoRole,
  type Team,
} from "./model.js";
import { computePull, evaluateAutoMerge, type PullView } from "./pull-logic.js";
import { createStatus, registerCheckRoutes } from "./routes-checks.js";
import { createComment, editComment as editCommentOp, registerIssueRoutes } from "./routes-issues.js";
import { openPull, registerPullRoutes, submitReview } from "./routes-pulls.js";
import { registerRepoRoutes, writeFilesCommit } from "./routes-repos.js";
import { ApiError, Router, type RequestContext } from "./router.js";
import { registerAppRoutes } from "./routes-apps.js";
import * as shape from "./shapes.js";
import { toWebhookPayload } from "./webhook-shapes.js";
import { WebhookDispatcher, type Delivery } from "./webhooks.js";

export type { Delivery } from "./webhooks.js";
export type { RepoRole } from "./model.js";

export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
  actor: string;
}

export interface CreateRepoOptions {
  files?: Record<string, string>;
  defaultBranch?: string;
  private?: boolean;
  description?: string;
  collaborators?: Record<string, RepoRole>;
  allowAutoMerge?: boolean;
  deleteBranchOnMerge?: boolean;
}

export interface ProtectBranchOptions {
  requiredChecks?: string[];
  requiredApprovals?: number;
  strict?: boolean;
  /** Whether admins are held to the rules too (default true, so protection means what tests say). */
  enforceAdmins?: boolean;
}

export interface CreateAppOptions {
  slug: string;
  name?: string;
  owner?: string;
  permissions?: Permissions;
  /** Events the app subscribes to (default: every event the emulator sends). */
  events?: string[];
  webhookUrl?: string;
  webhookSecret?: string;
}

export const ALL_EVENTS = [
  "push",
  "pull_request",
  "pull_request_review",
  "issue_comment",
  "issues",
  "check_suite",
  "check_run",
  "status",
  "workflow_run",
  "registry_package",
  "deployment",
  "deployment_status",
  "label",
];

const ACTIONS_APP_SLUG = "github-actions";

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
  check_run: ["checks"],
  check_suite: ["checks"],
  status: ["statuses"],
  workflow_run: ["actions"],
  registry_package: ["packages"],
  deployment: ["deployments"],
  deployment_status: ["deployments"],
};

/**
 * The emulator: an HTTP server plus the state behind it. Set-up methods (users, repos, apps,
 * protection) and helpers that act as a given user (comment, review, commit, CI) change the
 * same state the REST routes do and fire the same webhooks.
 */
export class GitHubEmulator {
  readonly faults = new Faults();
  readonly router = new Router();
  readonly webhooks = new WebhookDispatcher();
  readonly accounts = new Map<string, Account>();
  readonly teams = new Map<string, Team>();
  readonly repos = new Map<string, Repo>();
  readonly apps = new Map<number, App>();
  readonly installations = new Map<number, Installation>();
  readonly installationTokens = new Map<string, InstallationToken>();
  private readonly recorded: RecordedRequest[] = [];
  private readonly rateUsage = new Map<string, number>();
  private readonly background = new Set<Promise<unknown>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private nextId = 1000;
  private server!: Server;
  private origin = "";
  private closed = false;
  /** Serialises merges per repository, like GitHub's merge queue of one. */
  readonly mergeLocks = new Map<string, Promise<unknown>>();
  actionsAppId = 0;

  private constructor(
    readonly dataDir: string,
    private readonly ownsDataDir: boolean,
  ) {
    registerAppRoutes(this);
    registerRepoRoutes(this);
    registerPullRoutes(this);
    registerIssueRoutes(this);
    registerCheckRoutes(this);
  }

  static async start(options: { dataDir?: string } = {}): Promise<GitHubEmulator> {
    const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "ferry-github-")));
    await mkdir(join(dataDir, "repos"), { recursive: true });
    const emulator = new GitHubEmulator(dataDir, options.dataDir === undefined);
    emulator.server = createServer((req, res) => void emulator.handle(req, res));
    emulator.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => emulator.server.listen(0, "127.0.0.1", resolve));
    const { port } = emulator.server.address() as AddressInfo;
    emulator.origin = `http://127.0.0.1:${port}`;
    emulator.createOrg("github");
    const actions = emulator.createApp({
      slug: ACTIONS_APP_SLUG,
      name: "GitHub Actions",
      owner: "github",
      events: [],
    });
    emulator.actionsAppId = actions.id;
    return emulator;
  }

  /** Octokit's `baseUrl`. */
  get apiUrl(): string {
    return this.origin;
  }

  get webUrl(): string {
    return this.origin;
  }

  gitUrl(owner: string, repo: string): string {
    return `${this.origin}/${owner}/${repo}.git`;
  }

  id(): number {
    return ++this.nextId;
  }

  now(): string {
    return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  }

  get shapes(): shape.ShapeContext {
    return {
      api: this.origin,
      web: this.origin,
      account: (login) => this.account(login),
      app: (id) => {
        const app = this.apps.get(id);
        if (!app) throw new Error(`no app ${id}`);
        return app;
      },
    };
  }

  // ---------------------------------------------------------------- accounts, repos, apps

  account(login: string): Account {
    const account = this.accounts.get(login.toLowerCase());
    if (!account) throw new Error(`no account ${login}`);
    return account;
  }

  findAccount(login: string): Account | undefined {
    return this.accounts.get(login.toLowerCase());
  }

  createUser(
    login: string,
    options: { type?: "User" | "Bot"; name?: string; email?: string } = {},
  ): { login: string; id: number; token: string } {
    if (this.accounts.has(login.toLowerCase())) throw new Error(`account ${login} exists`);
    const id = this.id();
    const token = newToken("ghp");
    this.accounts.set(login.toLowerCase(), {
      id,
      nodeId: shape.nodeIdFor("U", id),
      login,
      type: options.type ?? "User",
      name: options.name ?? login,
      email: options.email ?? `${id}+${login}@users.noreply.localhost`,
      token,
      createdAt: this.now(),
    });
    return { login, id, token };
  }

  createOrg(login: string): { login: string; id: number } {
    const id = this.id();
    this.accounts.set(login.toLowerCase(), {
      id,
      nodeId: shape.nodeIdFor("O", id),
      login,
      type: "Organization",
      name: login,
      email: `${login}@orgs.localhost`,
      createdAt: this.now(),
    });
    return { login, id };
  }

  /** A team of `org`; `repositories` grants its members a role on the org's repositories, as team access does. */
  createTeam(
    org: string,
    slug: string,
    members: string[],
    options: { maintainers?: string[]; repositories?: Record<string, RepoRole> } = {},
  ): { id: number; slug: string } {
    this.account(org);
    const id = this.id();
    const repositories = new Map(
      Object.entries(options.repositories ?? {}).map(([name, role]) => [name.toLowerCase(), role]),
    );
    const team: Team = {
      id,
      nodeId: shape.nodeIdFor("T", id),
      org,
      slug,
      name: slug,
      members: new Map(),
      repositories,
    };
    for (const member of members) team.members.set(member.toLowerCase(), "member");
    for (const member of options.maintainers ?? []) team.members.set(member.toLowerCase(), "maintainer");
    this.teams.set(`${org}/${slug}`.toLowerCase(), team);
    return { id, slug };
  }

  async createRepo(
    owner: string,
    name: string,
    options: CreateRepoOptions = {},
  ): Promise<{ id: number; fullName: string; defaultBranch: string; headSha: string }> {
    const account = this.account(owner);
    const key = `${account.login}/${name}`.toLowerCase();
    if (this.repos.has(key)) throw new Error(`repository ${key} exists`);
    const defaultBranch = options.defaultBranch ?? "main";
    const git = new GitRepo(join(this.dataDir, "repos", account.login, `${name}.git`));
    await git.init(defaultBranch);
    const id = this.id();
    const now = this.now();
    const repo: Repo = {
      id,
      nodeId: shape.nodeIdFor("R", id),
      owner: account.login,
      name,
      description: options.description ?? null,
      private: options.private ?? false,
      defaultBranch,
      git,
      collaborators: new Map(
        Object.entries(options.collaborators ?? {}).map(([login, role]) => [this.account(login).login, role]),
      ),
      allowAutoMerge: options.allowAutoMerge ?? false,
      deleteBranchOnMerge: options.deleteBranchOnMerge ?? false,
      allowMergeCommit: true,
      allowSquashMerge: true,
      allowRebaseMerge: true,
      createdAt: now,
      updatedAt: now,
      pushedAt: now,
      protections: new Map(),
      labels: new Map(),
      issues: new Map(),
      nextNumber: 1,
      comments: new Map(),
      reviews: [],
      checkSuites: new Map(),
      checkRuns: new Map(),
      statuses: [],
      deployments: new Map(),
      deploymentStatuses: [],
      ci: [],
      pinnedIssues: [],
    };
    this.repos.set(key, repo);
    const tree = await git.writeTree(
      undefined,
      Object.entries(options.files ?? {}).map(([path, content]) => ({ path, content })),
    );
    const ident = this.identityOf(account.login);
    const sha = await git.commitTree({ tree, parents: [], message: "Initial commit\n", author: ident });
    await git.compareAndSwapRef(`refs/heads/${defaultBranch}`, sha, ZERO_SHA);
    return { id, fullName: `${account.login}/${name}`, defaultBranch, headSha: sha };
  }

  repo(owner: string, name: string): Repo {
    const repo = this.repos.get(`${owner}/${name}`.toLowerCase());
    if (!repo) throw new Error(`no repository ${owner}/${name}`);
    return repo;
  }

  findRepo(owner: string, name: string): Repo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  setCollaborator(owner: string, repo: string, login: string, role: RepoRole | "none"): void {
    const r = this.repo(owner, repo);
    if (role === "none") r.collaborators.delete(this.account(login).login);
    else r.collaborators.set(this.account(login).login, role);
  }

  setRepoSettings(
    owner: string,
    repo: string,
    settings: Partial<
      Pick<
        Repo,
        | "allowAutoMerge"
        | "deleteBranchOnMerge"
        | "allowMergeCommit"
        | "allowSquashMerge"
        | "allowRebaseMerge"
        | "private"
      >
    >,
  ): void {
    Object.assign(this.repo(owner, repo), settings);
  }

  protectBranch(owner: string, repo: string, branch: string, options: ProtectBranchOptions = {}): void {
    const protection: BranchProtection = {
      requiredChecks: options.requiredChecks ?? [],
      strict: options.strict ?? false,
      requiredApprovals: options.requiredApprovals ?? 0,
      enforceAdmins: options.enforceAdmins ?? true,
    };
    this.repo(owner, repo).protections.set(branch, protection);
  }

  createApp(options: CreateAppOptions): {
    id: number;
    slug: string;
    clientId: string;
    privateKey: string;
    botLogin: string;
    webhookSecret: string | null;
  } {
    const id = this.id();
    const { privateKeyPem, publicKey } =
      options.slug === ACTIONS_APP_SLUG && options.owner === "github" ? builtInKey() : generateAppKeyPair();
    const botLogin = `${options.slug}[bot]`;
    const owner = options.owner ?? this.defaultAppOwner();
    const app: App = {
      id,
      nodeId: shape.nodeIdFor("A", id),
      slug: options.slug,
      name: options.name ?? options.slug,
      clientId: `Iv1.${randomBytes(8).toString("hex")}`,
      owner,
      permissions: { metadata: "read", ...options.permissions },
      events: options.events ?? [...ALL_EVENTS],
      webhookUrl: options.webhookUrl ?? null,
      webhookSecret: options.webhookSecret ?? null,
      publicKey,
      botLogin,
      createdAt: this.now(),
    };
    this.apps.set(id, app);
    const botId = this.id();
    this.accounts.set(botLogin.toLowerCase(), {
      id: botId,
      nodeId: shape.nodeIdFor("BOT", botId),
      login: botLogin,
      type: "Bot",
      name: botLogin,
      // GitHub writes `<id>+<slug>[bot]@users.noreply.github.com`; brackets are not valid in an
      // RFC 5322 address (the OpenAPI "email" format), so the emulator drops them.
      email: `${botId}+${options.slug}-bot@users.noreply.localhost`,
      createdAt: this.now(),
    });
    return {
      id,
      slug: app.slug,
      clientId: app.clientId,
      privateKey: privateKeyPem,
      botLogin,
      webhookSecret: app.webhookSecret,
    };
  }

  /** Points an app's webhooks somewhere else (e.g. once the Probot server knows its port). */
  setWebhook(appId: number, webhookUrl: string | null, webhookSecret?: string): void {
    const app = this.appById(appId);
    app.webhookUrl = webhookUrl;
    if (webhookSecret !== undefined) app.webhookSecret = webhookSecret;
  }

  private defaultAppOwner(): string {
    return this.accounts.has("github") ? "github" : this.createOrg("github").login;
  }

  appById(appId: number): App {
    const app = this.apps.get(appId);
    if (!app) throw new Error(`no app ${appId}`);
    return app;
  }

  installApp(
    appId: number,
    account: string,
    options: { repositories?: string[]; permissions?: Permissions } = {},
  ): { id: number } {
    const app = this.appById(appId);
    const id = this.id();
    const inst: Installation = {
      id,
      appId,
      account: this.account(account).login,
      repositories: options.repositories?.map((name) => name.toLowerCase()),
      permissions: { ...(options.permissions ?? app.permissions) },
      events: [...app.events],
      createdAt: this.now(),
    };
    this.installations.set(id, inst);
    this.deliverTo(inst, "installation", {
      action: "created",
      installation: shape.installation(this.shapes, inst, app),
      repositories: this.installedRepos(inst).map((r) => ({
        id: r.id,
        node_id: r.nodeId,
        name: r.name,
        full_name: `${r.owner}/${r.name}`,
        private: r.private,
      })),
      requester: shape.simpleUser(
        this.shapes,
        this.account(inst.account).type === "Organization" ? app.owner : inst.account,
      ),
      sender: shape.simpleUser(
        this.shapes,
        this.account(inst.account).type === "Organization" ? app.owner : inst.account,
      ),
    });
    return { id };
  }

  installedRepos(inst: Installation): Repo[] {
    return [...this.repos.values()].filter((r) => this.installationCovers(inst, r));
  }

  installationCovers(inst: Installation, repo: Repo): boolean {
    if (inst.account.toLowerCase() !== repo.owner.toLowerCase()) return false;
    return inst.repositories === undefined || inst.repositories.includes(repo.name.toLowerCase());
  }

  // ---------------------------------------------------------------- access control

  /** A user's role on a repository, as `GET /collaborators/{user}/permission` reports it. */
  roleOf(repo: Repo, login: string): RepoRole | "none" {
    const account = this.findAccount(login);
    if (!account) return "none";
    if (account.login === repo.owner) return "admin";
    // The highest of the direct role and every team grant, like GitHub's effective permission.
    const roles: (RepoRole | "none")[] = [repo.collaborators.get(account.login) ?? "none"];
    for (const team of this.teams.values()) {
      if (
        team.org.toLowerCase() !== repo.owner.toLowerCase() ||
        !team.members.has(account.login.toLowerCase())
      )
        continue;
      roles.push(team.repositories.get(repo.name.toLowerCase()) ?? "none");
    }
    const best = roles.reduce((a, b) => (roleAtLeast(a, b) ? a : b));
    if (best !== "none") return best;
    return repo.private ? "none" : "read";
  }

  /**
   * Finds the repository of the request and checks the actor may do this to it: `category` is
   * the GitHub App permission (contents, pull_requests, issues, checks, statuses, deployments,
   * administration, metadata), `userRole` the least repository role a user needs.
   */
  authorizeRepo(
    ctx: RequestContext,
    category: string | string[],
    level: "read" | "write",
    userRole: RepoRole,
  ): Repo {
    const repo = this.findRepo(ctx.params.owner ?? "", ctx.params.repo ?? "");
    if (!repo) throw new ApiError(404, "Not Found");
    this.authorize(ctx.actor, repo, category, level, userRole);
    return repo;
  }

  authorize(
    actor: Actor,
    repo: Repo,
    category: string | string[],
    level: "read" | "write",
    userRole: RepoRole,
  ): void {
    switch (actor.kind) {
      case "anonymous":
        if (repo.private) throw new ApiError(404, "Not Found");
        if (level === "write") throw new ApiError(401, "Requires authentication");
        return;
      case "app":
        throw new ApiError(403, "Resource not accessible by integration");
      case "user": {
        const role = this.roleOf(repo, actor.login);
        if (role === "none") throw new ApiError(404, "Not Found");
        if (!roleAtLeast(role, userRole)) {
          throw new ApiError(
            403,
            level === "write" ? "Resource not accessible by personal access token" : "Not Found",
          );
        }
        return;
      }
      case "installation": {
        const inst = this.installations.get(actor.installationId);
        const covered =
          inst !== undefined &&
          this.installationCovers(inst, repo) &&
          (actor.repositories === undefined || actor.repositories.includes(repo.name.toLowerCase()));
        if (!covered) {
          if (repo.private) throw new ApiError(404, "Not Found");
          if (level === "write") throw new ApiError(403, "Resource not accessible by integration");
          return;
        }
        const categories = typeof category === "string" ? [category] : category;
        if (categories.includes("metadata")) return;
        const ok = categories.some((name) => {
          const granted = actor.permissions[name];
          return granted !== undefined && (level === "read" || granted === "write" || granted === "admin");
        });
        if (!ok) throw new ApiError(403, "Resource not accessible by integration");
        return;
      }
    }
  }

  /** The account login that acts (users and app bots); anonymous callers act as nobody. */
  actingLogin(actor: Actor): string {
    if (actor.kind === "user" || actor.kind === "installation") return actor.login;
    throw new ApiError(401, "Requires authentication");
  }

  actingAppId(actor: Actor): number | undefined {
    return actor.kind === "installation" ? actor.appId : undefined;
  }

  identityOf(login: string): GitIdentity {
    const account = this.account(login);
    return { name: account.name, email: account.email, date: this.now() };
  }

  loginForEmail = (email: string): string | undefined => {
    for (const account of this.accounts.values()) if (account.email === email) return account.login;
    return undefined;
  };

  private authenticate(header: string | undefined): Actor {
    if (!header) return { kind: "anonymous" };
    const match = /^(token|bearer|basic)\s+(.+)$/i.exec(header.trim());
    if (!match) throw new ApiError(401, "Bad credentials");
    let token = match[2]!.trim();
    if (match[1]!.toLowerCase() === "basic") {
      const decoded = Buffer.from(token, "base64").toString("utf8");
      token = decoded.slice(decoded.indexOf(":") + 1);
    }
    if (looksLikeJwt(token)) {
      const issuer = verifyAppJwt(token, (iss) => this.appByIssuer(iss)?.publicKey, Date.now());
      return { kind: "app", appId: this.appByIssuer(issuer)!.id };
    }
    return (
      this.actorForToken(token) ??
      (() => {
        throw new ApiError(401, "Bad credentials");
      })()
    );
  }

  actorForToken(token: string): Actor | undefined {
    const installationToken = this.installationTokens.get(token);
    if (installationToken) {
      if (installationToken.expiresAt <= Date.now()) return undefined;
      const inst = this.installations.get(installationToken.installationId);
      if (!inst) return undefined;
      const app = this.appById(inst.appId);
      return {
        kind: "installation",
        installationId: inst.id,
        appId: inst.appId,
        permissions: installationToken.permissions,
        repositories: installationToken.repositories,
        login: app.botLogin,
      };
    }
    for (const account of this.accounts.values()) {
      if (account.token === token) return { kind: "user", login: account.login };
    }
    return undefined;
  }

  private appByIssuer(issuer: string): App | undefined {
    for (const app of this.apps.values()) {
      if (String(app.id) === issuer || app.clientId === issuer) return app;
    }
    return undefined;
  }

  issueInstallationToken(
    inst: Installation,
    request: { repositories?: string[]; permissions?: Permissions } = {},
  ): InstallationToken {
    const permissions: Permissions = { ...inst.permissions };
    if (request.permissions) {
      for (const [name, level] of Object.entries(request.permissions)) {
        const granted = inst.permissions[name];
        if (!granted || (level !== "read" && granted === "read")) {
          throw new ApiError(422, `The permissions requested are not granted to this installation.`);
        }
      }
      for (const name of Object.keys(permissions))
        if (!(name in request.permissions)) delete permissions[name];
      Object.assign(permissions, request.permissions);
    }
    const repositories = request.repositories?.map((name) => name.toLowerCase());
    const token: InstallationToken = {
      token: newToken("ghs"),
      installationId: inst.id,
      expiresAt: Date.now() + 60 * 60 * 1000,
      permissions,
      repositories: repositories ?? inst.repositories,
    };
    this.installationTokens.set(token.token, token);
    return token;
  }

  /** Ends the life of every installation token issued so far (they answer 401 Bad credentials from now on). */
  expireInstallationTokens(): void {
    for (const token of this.installationTokens.values()) token.expiresAt = Date.now();
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.origin);
    let pathname = url.pathname.replace(/^\/api\/v3(?=\/)/, "");
    if (pathname === "/api/graphql") pathname = "/graphql";
    const method = (req.method ?? "GET").toUpperCase();
    if (this.faults.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.faults.latencyMs));
    if (/^\/[^/]+\/[^/]+\.git\//.test(pathname)) {
      await handleGitHttp(this, req, res, pathname, url).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
      return;
    }
    let status = 500;
    let actor: Actor = { kind: "anonymous" };
    const headers: Record<string, string> = {
      "content-type": "application/json; charset=utf-8",
      "x-github-media-type": "github.v3; format=json",
      "x-github-request-id": randomBytes(8).toString("hex").toUpperCase(),
    };
    let payload: unknown;
    try {
      actor = this.authenticate(req.headers.authorization);
      Object.assign(headers, this.rateLimitHeaders(actor, pathname === "/graphql" ? "graphql" : "core"));
      this.faults.beforeRequest(method, pathname, Date.now());
      const body = await readJsonBody(req);
      const ctx: RequestContext = { method, params: {}, query: url.searchParams, body, actor, url };
      if (pathname === "/graphql" && method === "POST") {
        const reply = await handleGraphql(this, ctx);
        status = reply.status ?? 200;
        payload = reply.body;
      } else {
        const matched = this.router.match(method, pathname);
        // GitHub answers 404 both for unknown paths and for a known path under another method.
        if (matched === undefined || matched === "methodMismatch") throw new ApiError(404, "Not Found");
        ctx.params = matched.params;
        const reply = await matched.handler(ctx);
        status = reply.status ?? 200;
        payload = reply.body;
        Object.assign(headers, reply.headers);
      }
    } catch (error) {
      if (error instanceof ApiError) {
        status = error.status;
        payload = {
          message: error.message,
          documentation_url: "https://docs.github.com/rest",
          status: String(error.status),
          ...(error.errors ? { errors: error.errors } : {}),
        };
        Object.assign(headers, error.headers);
      } else {
        status = 500;
        payload = {
          message: "Internal Server Error",
          documentation_url: "https://docs.github.com/rest",
          status: "500",
        };
        // An emulator bug must be loud in tests.
        console.error("github emulator:", error);
      }
    }
    this.recorded.push({ method, path: pathname + url.search, status, actor: actorName(actor) });
    if (status === 204 || status === 304 || payload === undefined) {
      delete headers["content-type"];
      res.writeHead(status, headers).end();
      return;
    }
    res.writeHead(status, headers).end(JSON.stringify(payload));
  }

  private rateLimitHeaders(actor: Actor, resource: string): Record<string, string> {
    const key = `${actorName(actor)}:${resource}`;
    const used = (this.rateUsage.get(key) ?? 0) + 1;
    this.rateUsage.set(key, used);
    const limit = actor.kind === "anonymous" ? 60 : 5000;
    const resetAt = Math.ceil(Date.now() / 1000 / 3600) * 3600;
    return {
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(Math.max(0, limit - used)),
      "x-ratelimit-reset": String(resetAt),
      "x-ratelimit-used": String(used),
      "x-ratelimit-resource": resource,
    };
  }

  requests(): RecordedRequest[] {
    return [...this.recorded];
  }

  resetRequests(): void {
    this.recorded.length = 0;
  }

  // ---------------------------------------------------------------- events and background work

  /** Runs work after the current API call has answered; `idle()` waits for it. */
  later(work: () => Promise<unknown>, delayMs = 0): void {
    if (this.closed) return;
    const task = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        work()
          .catch((error: unknown) => {
            if (!this.closed) console.error("github emulator background task:", error);
          })
          .finally(resolve);
      }, delayMs);
      this.timers.add(timer);
    });
    this.background.add(task);
    void task.finally(() => this.background.delete(task));
  }

  /** Resolves once background work (CI runs, auto-merges) and webhook deliveries have settled. */
  async idle(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      if (this.background.size === 0) {
        await this.webhooks.idle();
        if (this.background.size === 0) return;
      }
      await Promise.all([...this.background]);
    }
  }

  /** Sends `event` to every app installed on `repo` that subscribes to it. */
  emit(repo: Repo, event: string, payload: Record<string, unknown>, senderLogin: string): void {
    for (const inst of this.installations.values()) {
      if (!this.installationCovers(inst, repo)) continue;
      const app = this.apps.get(inst.appId);
      if (!app) continue;
      const full: Record<string, unknown> = {
        ...payload,
        repository: shape.repository(this.shapes, repo),
        sender: shape.simpleUser(this.shapes, senderLogin),
      };
      const owner = this.account(repo.owner);
      if (owner.type === "Organization") full.organization = shape.organization(this.shapes, owner.login);
      full.installation = { id: inst.id, node_id: shape.nodeIdFor("INST", inst.id) };
      this.deliverTo(inst, event, full);
    }
  }

  /** Whether any installation on `repo` would receive `event` (so costly payloads are built only when needed). */
  hasSubscribers(repo: Repo, event: string): boolean {
    for (const inst of this.installations.values()) {
      if (this.installationCovers(inst, repo) && this.receives(inst, event)) return true;
    }
    return false;
  }

  private receives(inst: Installation, event: string): boolean {
    const app = this.apps.get(inst.appId);
    if (!app?.webhookUrl) return false;
    if (event === "installation") return true;
    if (!app.events.includes(event)) return false;
    const needs = EVENT_PERMISSIONS[event] ?? [];
    return (
      needs.length === 0 || needs.some((name) => name === "metadata" || inst.permissions[name] !== undefined)
    );
  }

  private deliverTo(inst: Installation, event: string, payload: Record<string, unknown>): void {
    const app = this.apps.get(inst.appId);
    if (!app?.webhookUrl || !this.receives(inst, event)) return;
    this.webhooks.enqueue(
      { appId: app.id, url: app.webhookUrl, secret: app.webhookSecret, targetId: app.id },
      event,
      toWebhookPayload(event, payload),
    );
  }

  deliveries(): Delivery[] {
    return this.webhooks.deliveries();
  }

  redeliver(deliveryId: string): Delivery {
    return this.webhooks.redeliver(deliveryId);
  }

  /**
   * Everything that follows a branch moving, wherever it moved (API, merge, git push):
   * open PRs on it get the new head (synchronize), a push event goes out, simulated CI starts,
   * and auto-merge is reconsidered.
   */
  async onRefChanged(
    repo: Repo,
    ref: string,
    before: string,
    after: string,
    pusher: string,
    options: { forced?: boolean } = {},
  ): Promise<void> {
    repo.pushedAt = this.now();
    const branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : undefined;
    await this.emitPush(repo, ref, before, after, pusher, options.forced ?? false);
    if (branch) {
      for (const issue of repo.issues.values()) {
        const p = issue.pull;
        if (!p || issue.state !== "open" || p.headRef !== branch) continue;
        if (after === ZERO_SHA) {
          // GitHub closes a pull request whose head branch is deleted.
          const baseSha = await repo.git.readRef(`refs/heads/${p.baseRef}`);
          p.baseShaAtClose = baseSha ?? null;
          issue.state = "closed";
          issue.closedAt = this.now();
          issue.updatedAt = issue.closedAt;
          p.autoMerge = null;
          await this.emitPull(repo, issue, "closed", pusher);
          continue;
        }
        const previous = p.headSha;
        p.headSha = after;
        issue.updatedAt = this.now();
        // GitHub turns auto-merge off when someone without write access pushes; Ferry's bot has it, so keep it.
        await this.emitPull(repo, issue, "synchronize", pusher, { before: previous, after });
        this.startCi(repo, issue);
      }
    }
    this.scheduleAutoMerge(repo);
  }

  private async emitPush(
    repo: Repo,
    ref: string,
    before: string,
    after: string,
    pusher: string,
    forced: boolean,
  ): Promise<void> {
    if (!this.hasSubscribers(repo, "push")) return;
    const commits: Record<string, unknown>[] = [];
    let headCommit: Record<string, unknown> | null = null;
    if (after !== ZERO_SHA) {
      if (ref.startsWith("refs/tags/")) {
        // A tag push lists no commits; head_commit is the tagged commit.
        const peeled = await repo.git.resolveCommit(after);
        if (peeled) headCommit = await this.pushCommit(repo, peeled);
      } else {
        const shas = before === ZERO_SHA ? [after] : await repo.git.commitsBetween(before, after);
        for (const sha of shas.slice(-20)) commits.push(await this.pushCommit(repo, sha));
        headCommit = commits.at(-1) ?? null;
      }
    }
    const account = this.account(pusher);
    this.emit(
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
        compare: `${this.webUrl}/${repo.owner}/${repo.name}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
        commits,
        head_commit: headCommit,
        pusher: { name: account.login, email: account.email },
      },
      pusher,
    );
  }

  private async pushCommit(repo: Repo, sha: string): Promise<Record<string, unknown>> {
    const commit = await repo.git.readCommit(sha);
    const files = commit.parents[0] ? await repo.git.changedFiles(commit.parents[0], sha) : [];
    const person = (who: GitIdentity) => {
      const login = this.loginForEmail(who.email);
      return { name: who.name, email: who.email, date: who.date, ...(login ? { username: login } : {}) };
    };
    return {
      id: sha,
      tree_id: commit.tree,
      distinct: true,
      message: commit.message.replace(/\n$/, ""),
      timestamp: commit.committer.date,
      url: `${this.webUrl}/${repo.owner}/${repo.name}/commit/${sha}`,
      author: person(commit.author),
      committer: person(commit.committer),
      added: files.filter((f) => f.status === "added").map((f) => f.path),
      removed: files.filter((f) => f.status === "removed").map((f) => f.path),
      modified: files.filter((f) => f.status === "modified" || f.status === "renamed").map((f) => f.path),
    };
  }

  async pullView(repo: Repo, issue: Issue): Promise<PullView> {
    return computePull(this, repo, issue);
  }

  async emitPull(
    repo: Repo,
    issue: Issue,
    action: string,
    sender: string,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    if (!this.hasSubscribers(repo, "pull_request")) return;
    const view = await this.pullView(repo, issue);
    this.emit(
      repo,
      "pull_request",
      { action, number: issue.number, pull_request: view.body, ...extra },
      sender,
    );
  }

  scheduleAutoMerge(repo: Repo): void {
    const pending = [...repo.issues.values()].some((i) => i.state === "open" && i.pull?.autoMerge);
    if (pending) this.later(() => evaluateAutoMerge(this, repo));
  }

  /** Ensures the check suite of `appId` on `sha` exists. */
  checkSuiteFor(repo: Repo, appId: number, sha: string, headBranch: string | null): CheckSuite {
    for (const suite of repo.checkSuites.values()) {
      if (suite.appId === appId && suite.headSha === sha) return suite;
    }
    const id = this.id();
    const suite: CheckSuite = {
      id,
      nodeId: shape.nodeIdFor("CS", id),
      appId,
      headSha: sha,
      headBranch,
      status: "queued",
      conclusion: null,
      createdAt: this.now(),
      updatedAt: this.now(),
    };
    repo.checkSuites.set(id, suite);
    return suite;
  }

  /** Keeps a suite's status/conclusion in step with its runs; returns true when it just completed. */
  refreshSuite(repo: Repo, suite: CheckSuite): boolean {
    const runs = [...repo.checkRuns.values()].filter((r) => r.suiteId === suite.id);
    const wasCompleted = suite.status === "completed";
    if (runs.length === 0) return false;
    if (runs.every((r) => r.status === "completed")) {
      suite.status = "completed";
      const order = [
        "action_required",
        "cancelled",
        "timed_out",
        "failure",
        "neutral",
        "skipped",
        "stale",
        "success",
      ];
      const conclusions = runs.map((r) => r.conclusion ?? "neutral");
      suite.conclusion = order.find((c) => conclusions.includes(c)) ?? "success";
    } else {
      suite.status = "in_progress";
      suite.conclusion = null;
    }
    suite.updatedAt = this.now();
    return !wasCompleted && suite.status === "completed";
  }

  pullsForSha(repo: Repo, sha: string): unknown[] {
    const result: unknown[] = [];
    for (const issue of repo.issues.values()) {
      const p = issue.pull;
      if (!p || issue.state !== "open" || p.headSha !== sha) continue;
      const base = `${this.apiUrl}/repos/${repo.owner}/${repo.name}`;
      result.push({
        id: issue.pullId,
        number: issue.number,
        url: `${base}/pulls/${issue.number}`,
        head: { ref: p.headRef, sha: p.headSha, repo: { id: repo.id, url: base, name: repo.name } },
        base: { ref: p.baseRef, sha: p.headSha, repo: { id: repo.id, url: base, name: repo.name } },
      });
    }
    return result;
  }

  /** Emits check_run (and check_suite when the suite completes) for a run's change. */
  async emitCheckRun(repo: Repo, run: CheckRun, action: string, sender: string): Promise<void> {
    const suite = repo.checkSuites.get(run.suiteId)!;
    const completed = this.refreshSuite(repo, suite);
    if (run.status === "completed") this.scheduleAutoMerge(repo);
    if (!this.hasSubscribers(repo, "check_run") && !this.hasSubscribers(repo, "check_suite")) return;
    const pulls = this.pullsForSha(repo, run.headSha);
    const runShape = {
      ...shape.checkRun(this.shapes, repo, run, pulls),
      check_suite: await this.suiteShape(repo, suite),
    };
    this.emit(repo, "check_run", { action, check_run: runShape }, sender);
    if (completed)
      this.emit(
        repo,
        "check_suite",
        { action: "completed", check_suite: await this.suiteShape(repo, suite) },
        sender,
      );
  }

  async suiteShape(repo: Repo, suite: CheckSuite) {
    const runs = [...repo.checkRuns.values()].filter((r) => r.suiteId === suite.id);
    const headCommit = await repo.git.readCommit(suite.headSha);
    return shape.checkSuite(
      this.shapes,
      repo,
      suite,
      this.pullsForSha(repo, suite.headSha),
      runs.length,
      headCommit,
    );
  }

  /** Simulated CI: a check run per configured context on the PR's head, completed after its delay. */
  startCi(repo: Repo, issue: Issue): void {
    const p = issue.pull;
    if (!p) return;
    for (const ci of repo.ci) {
      const sha = p.headSha;
      const suite = this.checkSuiteFor(repo, this.actionsAppId, sha, p.headRef);
      const id = this.id();
      const run: CheckRun = {
        id,
        nodeId: shape.nodeIdFor("CR", id),
        suiteId: suite.id,
        appId: this.actionsAppId,
        name: ci.context,
        headSha: sha,
        status: "in_progress",
        conclusion: null,
        startedAt: this.now(),
        completedAt: null,
        externalId: "",
        detailsUrl: `${this.webUrl}/${repo.owner}/${repo.name}/actions/runs/${id}`,
        output: { title: null, summary: null, text: null, annotations: [] },
      };
      repo.checkRuns.set(id, run);
      const bot = this.appById(this.actionsAppId).botLogin;
      this.later(() => this.emitCheckRun(repo, run, "created", bot));
      this.later(async () => {
        run.status = "completed";
        run.conclusion = ci.conclusion;
        run.completedAt = this.now();
        await this.emitCheckRun(repo, run, "completed", bot);
      }, ci.delayMs);
    }
  }

  // ---------------------------------------------------------------- test and sandbox helpers

  /** Pushes one commit to `branch` as `as` (creating the branch from the default branch if needed); fires push. */
  async commit(
    owner: string,
    repo: string,
    branch: string,
    files: Record<string, string | null>,
    message: string,
    options: { as?: string } = {},
  ): Promise<string> {
    const r = this.repo(owner, repo);
    const login = options.as ?? r.owner;
    const ref = `refs/heads/${branch}`;
    if (!(await r.git.readRef(ref))) {
      const base = await r.git.readRef(`refs/heads/${r.defaultBranch}`);
      if (base) await r.git.compareAndSwapRef(ref, base, ZERO_SHA);
    }
    const changes = Object.entries(files).map(([path, content]) =>
      content === null ? { path, sha: null } : { path, content },
    );
    return (await writeFilesCommit(this, r, branch, changes, message, login)).sha;
  }

  /** Creates a branch at `from` (a branch or SHA; default: the default branch). */
  async createBranch(
    owner: string,
    repo: string,
    branch: string,
    from?: string,
    options: { as?: string } = {},
  ): Promise<string> {
    const r = this.repo(owner, repo);
    const sha = await r.git.resolveCommit(from ?? r.defaultBranch);
    if (!sha) throw new Error(`unknown revision ${from}`);
    if (!(await r.git.compareAndSwapRef(`refs/heads/${branch}`, sha, ZERO_SHA)))
      throw new Error(`branch ${branch} exists`);
    await this.onRefChanged(r, `refs/heads/${branch}`, ZERO_SHA, sha, options.as ?? r.owner);
    return sha;
  }

  /** Creates tag `name` at `target` (branch or SHA): lightweight, or annotated with a tag object. */
  async tag(
    owner: string,
    repo: string,
    name: string,
    target: string,
    options: { annotated?: boolean; message?: string; as?: string } = {},
  ): Promise<string> {
    const r = this.repo(owner, repo);
    const login = options.as ?? r.owner;
    const commit = await r.git.resolveCommit(target);
    if (!commit) throw new Error(`unknown revision ${target}`);
    const object = options.annotated
      ? await r.git.writeTag({
          object: commit,
          type: "commit",
          tag: name,
          tagger: this.identityOf(login),
          message: options.message ?? name,
        })
      : commit;
    if (!(await r.git.compareAndSwapRef(`refs/tags/${name}`, object, ZERO_SHA)))
      throw new Error(`tag ${name} exists`);
    await this.onRefChanged(r, `refs/tags/${name}`, ZERO_SHA, object, login);
    return object;
  }

  async openPullRequest(
    owner: string,
    repo: string,
    input: { head: string; base?: string; title?: string; body?: string; as?: string },
  ): Promise<number> {
    const r = this.repo(owner, repo);
    const issue = await openPull(this, r, input.as ?? r.owner, {
      head: input.head,
      base: input.base ?? r.defaultBranch,
      title: input.title ?? input.head,
      body: input.body ?? null,
    });
    return issue.number;
  }

  async comment(
    owner: string,
    repo: string,
    number: number,
    body: string,
    options: { as: string },
  ): Promise<{ id: number }> {
    const r = this.repo(owner, repo);
    const issue = r.issues.get(number);
    if (!issue) throw new Error(`no issue #${number}`);
    this.authorize({ kind: "user", login: options.as }, r, "issues", "write", "read");
    const comment = await createComment(this, r, issue, this.account(options.as).login, body);
    return { id: comment.id };
  }

  editComment(owner: string, repo: string, commentId: number, body: string, options: { as: string }): void {
    const r = this.repo(owner, repo);
    const comment = r.comments.get(commentId);
    if (!comment) throw new Error(`no comment ${commentId}`);
    editCommentOp(this, r, comment, this.account(options.as).login, body);
  }

  async review(
    owner: string,
    repo: string,
    number: number,
    options: { as: string; event: "APPROVE" | "REQUEST_CHANGES" | "COMMENT"; body?: string },
  ): Promise<{ id: number }> {
    const r = this.repo(owner, repo);
    const issue = r.issues.get(number);
    if (!issue?.pull) throw new Error(`no pull request #${number}`);
    const review = await submitReview(this, r, issue, this.account(options.as).login, {
      event: options.event,
      body: options.body ?? (options.event === "APPROVE" ? "" : "Review"),
    });
    return { id: review.id };
  }

  /** A commit status, as an external CI would post it. */
  setStatus(
    owner: string,
    repo: string,
    sha: string,
    input: {
      context: string;
      state: "error" | "failure" | "pending" | "success";
      as?: string;
      description?: string;
    },
  ): void {
    const r = this.repo(owner, repo);
    createStatus(this, r, sha, input.as ?? r.owner, {
      state: input.state,
      context: input.context,
      description: input.description ?? null,
    });
  }

  /** Simulated CI: every new PR head SHA gets a `context` check run that concludes after `delayMs`. */
  setCi(
    owner: string,
    repo: string,
    ci: { context: string; conclusion?: string; delayMs?: number } | null,
  ): void {
    const r = this.repo(owner, repo);
    if (ci === null) {
      r.ci = [];
      return;
    }
    r.ci = r.ci.filter((x) => x.context !== ci.context);
    r.ci.push({ context: ci.context, conclusion: ci.conclusion ?? "success", delayMs: ci.delayMs ?? 0 });
  }

  /** A GitHub Actions run finished on `sha`: a completed check suite + run and a `workflow_run` event. */
  async completeWorkflowRun(
    owner: string,
    repo: string,
    sha: string,
    conclusion: string,
    options: { name?: string; branch?: string; event?: string } = {},
  ): Promise<{ id: number }> {
    const r = this.repo(owner, repo);
    const name = options.name ?? "CI";
    const branch =
      options.branch ??
      (await r.git.listRefs("refs/heads/")).find((x) => x.sha === sha)?.ref.slice(11) ??
      r.defaultBranch;
    const suite = this.checkSuiteFor(r, this.actionsAppId, sha, branch);
    const id = this.id();
    const run: CheckRun = {
      id,
      nodeId: shape.nodeIdFor("CR", id),
      suiteId: suite.id,
      appId: this.actionsAppId,
      name,
      headSha: sha,
      status: "completed",
      conclusion,
      startedAt: this.now(),
      completedAt: this.now(),
      externalId: "",
      detailsUrl: `${this.webUrl}/${r.owner}/${r.name}/actions/runs/${id}`,
      output: { title: null, summary: null, text: null, annotations: [] },
    };
    r.checkRuns.set(id, run);
    const bot = this.appById(this.actionsAppId).botLogin;
    await this.emitCheckRun(r, run, "completed", bot);
    const commit = await r.git.readCommit(sha);
    const workflowId = 1000 + (name.length % 100);
    const base = `${this.apiUrl}/repos/${r.owner}/${r.name}`;
    const html = `${this.webUrl}/${r.owner}/${r.name}`;
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
    const repoLite = shape.minimalRepository(this.shapes, r);
    const person = (who: { name: string; email: string }) => ({ name: who.name, email: who.email });
    const actor = shape.simpleUser(this.shapes, this.loginForEmail(commit.author.email) ?? r.owner);
    const workflowRun = {
      actor,
      triggering_actor: actor,
      artifacts_url: `${base}/actions/runs/${id}/artifacts`,
      cancel_url: `${base}/actions/runs/${id}/cancel`,
      check_suite_id: suite.id,
      check_suite_node_id: suite.nodeId,
      check_suite_url: `${base}/check-suites/${suite.id}`,
      conclusion,
      created_at: this.now(),
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
      pull_requests: this.pullsForSha(r, sha),
      referenced_workflows: [],
      repository: repoLite,
      rerun_url: `${base}/actions/runs/${id}/rerun`,
      run_attempt: 1,
      run_number: id,
      run_started_at: this.now(),
      status: "completed",
      updated_at: this.now(),
      url: `${base}/actions/runs/${id}`,
      workflow_id: workflowId,
      workflow_url: `${base}/actions/workflows/${workflowId}`,
      display_title: commit.message.split("\n")[0],
    };
    this.emit(r, "workflow_run", { action: "completed", workflow, workflow_run: workflowRun }, bot);
    return { id };
  }

  /** A container image version was published to GHCR from `repo`: a `registry_package` event. */
  publishPackage(
    owner: string,
    repo: string,
    input: { name: string; tag: string; digest: string; as?: string },
  ): void {
    const r = this.repo(owner, repo);
    const login = input.as ?? r.owner;
    const id = this.id();
    const versionId = this.id();
    const html = `${this.webUrl}/${r.owner}/${r.name}/pkgs/container/${input.name}`;
    const now = this.now();
    this.emit(
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
          owner: shape.simpleUser(this.shapes, r.owner),
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

  /** The file's text at `ref`, or undefined when it does not exist. */
  async readFile(owner: string, repo: string, ref: string, path: string): Promise<string | undefined> {
    const r = this.repo(owner, repo);
    const sha = await r.git.resolveCommit(ref);
    if (!sha) return undefined;
    const entry = await r.git.entryAt((await r.git.readCommit(sha)).tree, path);
    if (entry?.type !== "blob") return undefined;
    return (await r.git.readBlob(entry.sha)).toString("utf8");
  }

  /** Every file path at `ref` (under `dir` when given), sorted. */
  async listFiles(owner: string, repo: string, ref: string, dir = ""): Promise<string[]> {
    const r = this.repo(owner, repo);
    const sha = await r.git.resolveCommit(ref);
    if (!sha) return [];
    const entries = await r.git.listTree((await r.git.readCommit(sha)).tree, true);
    const prefix = dir ? `${dir.replace(/\/+$/, "")}/` : "";
    return entries
      .filter((e) => e.type === "blob" && e.path.startsWith(prefix))
      .map((e) => e.path)
      .sort();
  }

  async branchSha(owner: string, repo: string, branch: string): Promise<string | undefined> {
    return this.repo(owner, repo).git.readRef(`refs/heads/${branch}`);
  }

  /** The pull request as `GET /pulls/{n}` answers it. */
  async getPull(owner: string, repo: string, number: number): Promise<PullView["body"]> {
    const r = this.repo(owner, repo);
    const issue = r.issues.get(number);
    if (!issue?.pull) throw new Error(`no pull request #${number}`);
    return (await computePull(this, r, issue)).body;
  }

  /** Pull requests in `repo` (JSON as `GET /pulls/{n}`), optionally filtered. */
  async listPulls(
    owner: string,
    repo: string,
    filter: { state?: "open" | "closed" | "all"; head?: string } = {},
  ): Promise<PullView["body"][]> {
    const r = this.repo(owner, repo);
    const result = [];
    for (const issue of r.issues.values()) {
      if (!issue.pull) continue;
      if ((filter.state ?? "all") !== "all" && issue.state !== filter.state) continue;
      if (filter.head && issue.pull.headRef !== filter.head) continue;
      result.push((await computePull(this, r, issue)).body);
    }
    return result;
  }

  /** Comments on an issue or PR, oldest first. */
  listComments(
    owner: string,
    repo: string,
    number: number,
  ): { id: number; user: string; body: string; reactions: string[] }[] {
    const r = this.repo(owner, repo);
    return [...r.comments.values()]
      .filter((x) => x.issueNumber === number && !x.deleted)
      .map((x) => ({
        id: x.id,
        user: x.user,
        body: x.body,
        reactions: x.reactions.map((y) => `${y.user}:${y.content}`),
      }));
  }

  /** Another writer moves `ref` by one commit (same tree), so the caller's compare-and-swap loses (faults.refRace). */
  async rivalPush(repo: Repo, ref: string): Promise<void> {
    const current = await repo.git.readRef(ref);
    if (!current) return;
    const tree = (await repo.git.readCommit(current)).tree;
    const ident = { name: "rival", email: "rival@localhost", date: this.now() };
    const sha = await repo.git.commitTree({
      tree,
      parents: [current],
      message: "A concurrent change\n",
      author: ident,
    });
    if (await repo.git.compareAndSwapRef(ref, sha, current))
      await this.onRefChanged(repo, ref, current, sha, repo.owner);
  }

  /** Creates an issue or pull request number. */
  nextNumber(repo: Repo): number {
    return repo.nextNumber++;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.webhooks.idle().catch(() => undefined);
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    if (this.ownsDataDir) await rm(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * The built-in GitHub Actions app never authenticates, so it skips RSA key generation (the
 * slowest part of starting an emulator) and gets a key that verifies nothing.
 */
function builtInKey(): { privateKeyPem: string; publicKey: ReturnType<typeof createPublicKey> } {
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { privateKeyPem: "", publicKey: createPublicKey(publicKey.export({ type: "spki", format: "pem" })) };
}

async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
      throw new Error("not an object");
    return parsed as Record<string, unknown>;
  } catch {
    throw new ApiError(400, "Problems parsing JSON");
  }
}
