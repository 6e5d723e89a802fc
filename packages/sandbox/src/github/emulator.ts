/**
 * A stateful GitHub emulator on 127.0.0.1: REST (and the GraphQL auto-merge mutations), git
 * smart HTTP, apps and installations, and signed webhook deliveries — enough that the real
 * `@octokit/rest` and a Probot app run against it unchanged through `baseUrl`.
 *
 * Git objects and refs live in real bare repositories (git-store.ts); everything else is in
 * memory (model.ts). Responses follow api.github.com's OpenAPI description (shapes.ts).
 *
 * This class holds the state and the server's lifecycle; the work is in plain functions by
 * responsibility, taking the emulator first. The routes, the tests and the sandbox story call
 * those functions directly (`index.ts` re-exports the set-up, act-as and inspect modules):
 * - emulator-accounts.ts: accounts, apps, installations, token authentication
 * - emulator-repos.ts: repositories, collaborators, teams, settings, branch protection, access checks
 * - emulator-events.ts: webhook emission (who receives what; push and pull_request payloads)
 * - emulator-pull-effects.ts: what follows a ref or check change: synchronize, CI, check suites, auto-merge
 * - emulator-http.ts: the HTTP front (authentication, rate-limit headers, routing, request log)
 * - emulator-act-as.ts: test helpers that act as a user, CI or a rival writer
 * - emulator-inspect.ts: read-only test helpers
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as accounts from "./emulator-accounts.js";
import { ACTIONS_APP_SLUG } from "./emulator-accounts.js";
import { handleRequest, type RecordedRequest, type RequestLog } from "./emulator-http.js";
import { Faults } from "./faults.js";
import type { GitIdentity } from "./git-store.js";
import { registerCheckRoutes } from "./routes-checks.js";
import { registerIssueRoutes } from "./routes-issues.js";
import { registerPullRoutes } from "./routes-pulls.js";
import { registerRepoRoutes } from "./routes-repos.js";
import { registerRulesetRoutes } from "./routes-rulesets.js";
import { registerRepoSettingsRoutes } from "./routes-repo-settings.js";
import { registerUpdateBranchRoute } from "./routes-update-branch.js";
import {
  type Account,
  type Actor,
  type App,
  type Installation,
  type InstallationToken,
  type Repo,
  type Team,
} from "./model.js";
import { ApiError, Router } from "./router.js";
import { registerAppRoutes } from "./routes-apps.js";
import { registerForkRoutes } from "./forks.js";
import type * as shape from "./shapes.js";
import { WebhookDispatcher } from "./webhooks.js";

export type { Delivery } from "./webhooks.js";
export type { RepoRole } from "./model.js";
export { ALL_EVENTS } from "./emulator-accounts.js";
export type { CreateAppOptions } from "./emulator-accounts.js";
export type { CreateRepoOptions, ProtectBranchOptions } from "./emulator-repos.js";
export type { RecordedRequest } from "./emulator-http.js";

/**
 * The emulator: an HTTP server plus the state behind it. The set-up functions (users, repos,
 * apps, protection) and those that act as a given user (comment, review, commit, CI) change the
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
  private readonly requestLog: RequestLog = { recorded: [], rateUsage: new Map() };
  private readonly background = new Set<Promise<unknown>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private nextId = 1000;
  private server!: Server;
  private origin = "";
  private closed = false;
  /** Serialises merges per repository, like GitHub's merge queue of one. */
  readonly mergeLocks = new Map<string, Promise<unknown>>();
  actionsAppId = 0;
  /** Every ref update that was not a fast-forward, in order, so a test can prove nothing was force-pushed. */
  readonly forcedRefUpdates: { repo: string; ref: string }[] = [];

  private constructor(
    readonly dataDir: string,
    private readonly ownsDataDir: boolean,
  ) {
    registerAppRoutes(this);
    registerRepoRoutes(this);
    registerForkRoutes(this);
    registerRulesetRoutes(this);
    registerRepoSettingsRoutes(this);
    registerUpdateBranchRoute(this);
    registerPullRoutes(this);
    registerIssueRoutes(this);
    registerCheckRoutes(this);
  }

  static async start(options: { dataDir?: string } = {}): Promise<GitHubEmulator> {
    const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "ferry-github-")));
    await mkdir(join(dataDir, "repos"), { recursive: true });
    const emulator = new GitHubEmulator(dataDir, options.dataDir === undefined);
    emulator.server = createServer((req, res) => void handleRequest(emulator, emulator.requestLog, req, res));
    emulator.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => emulator.server.listen(0, "127.0.0.1", resolve));
    const { port } = emulator.server.address() as AddressInfo;
    emulator.origin = `http://127.0.0.1:${port}`;
    accounts.createOrg(emulator, "github");
    const actions = accounts.createApp(emulator, {
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

  /** Added to the wall clock for every time the emulator stamps (commits, statuses, comments). */
  private clockOffsetMs = 0;

  now(): string {
    return new Date(Date.now() + this.clockOffsetMs).toISOString().replace(/\.\d{3}Z$/, "Z");
  }

  /**
   * Moves the emulator's clock forward (never back): what happens next is stamped `ms` later, so
   * a test can put a known gap between two events (a merge and its rollout) without waiting for it.
   */
  advanceClock(ms: number): void {
    if (!(ms >= 0)) throw new Error(`advanceClock needs a non-negative duration, got ${ms}`);
    this.clockOffsetMs += ms;
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

  repo(owner: string, name: string): Repo {
    const repo = this.repos.get(`${owner}/${name}`.toLowerCase());
    if (!repo) throw new Error(`no repository ${owner}/${name}`);
    return repo;
  }

  findRepo(owner: string, name: string): Repo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  appById(appId: number): App {
    const app = this.apps.get(appId);
    if (!app) throw new Error(`no app ${appId}`);
    return app;
  }

  // ---------------------------------------------------------------- access control

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

  // ---------------------------------------------------------------- HTTP

  requests(): RecordedRequest[] {
    return [...this.requestLog.recorded];
  }

  resetRequests(): void {
    this.requestLog.recorded.length = 0;
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

  // ---------------------------------------------------------------- numbering

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
