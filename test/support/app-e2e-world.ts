/**
 * A world for end-to-end runs (tests and the bench): the GitHub emulator with acme/config, the
 * embedded registry with shop:1.7.0, and the real Ferry server wired to both.
 */
import { Octokit } from "@octokit/rest";
import {
  startFerryServer,
  type FerryServer,
  type FerryServerOptions,
} from "../../src/server/ferry-server.js";
import {
  startGitHubEmulator,
  type GitHubEmulator,
  ALL_EVENTS,
  accounts,
  actAs,
  repos,
} from "../../packages/sandbox/src/github/index.js";
import {
  startEmbeddedRegistry,
  type EmbeddedRegistry,
  type EmbeddedRegistryOptions,
} from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { ferryAppManifest, UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import { shopConfig, shopOverlay } from "./app-fakes.js";

export const SECRET = "e2e-webhook-secret";
export const REGISTRY_SECRET = "e2e-registry-secret";

export interface World {
  emu: GitHubEmulator;
  appId: number;
  registry: EmbeddedRegistry;
  server: FerryServer;
  as: Record<"mona" | "hubot" | "eve", Octokit>;
  settle(): Promise<void>;
  close(): Promise<void>;
  /** Pushes shop:<tag> to the registry (with OCI labels, e.g. the revision it was built from) and settles. */
  push(tag: string, labels?: Record<string, string>): Promise<string>;
  /** An open issue to comment on (commands on the merged staging PR are refused, docs/reliability.md row 12). */
  openIssue(): Promise<number>;
  pulls(state?: "open" | "closed" | "all"): Promise<
    {
      number: number;
      title: string;
      head: { ref: string; sha: string };
      body: string | null;
      merged_at: string | null;
      state: string;
    }[]
  >;
  /** Requests Ferry (the app or its installation) sent to the emulator since `from` (an index into `emu.requests()`). */
  appRequests(from: number): { method: string; path: string; status: number }[];
  /** Delivers only these webhook events to Ferry (all again with undefined): isolates one flow's requests. */
  onlyEvents(events: string[] | undefined): void;
  /**
   * Another Ferry server for the same app (a second replica, its own process state, no shared
   * lock). Webhooks still go to `server` unless the test routes them; closed with the world.
   */
  replica(): Promise<FerryServer>;
}

function config(registryHost: string, source: boolean, registries?: string, reporters?: string[]): string {
  return (
    shopConfig({ registry: registryHost, source, teams: false, ...(reporters ? { reporters } : {}) }) +
    (registries ? `registries:\n${registries}` : "")
  );
}

export async function startWorld(options: {
  ci: boolean;
  /** The image names its source repo acme/shop (created here): CI gating applies. */
  source?: boolean;
  /** Server options, or a function of the registry host (e.g. to name it the GitHub's registry). */
  server?: Partial<FerryServerOptions> | ((registryHost: string) => Partial<FerryServerOptions>);
  /** The registry's options (auth, the GHCR model), given the emulator that issues tokens. */
  registry?: (emu: GitHubEmulator) => EmbeddedRegistryOptions;
  /** Credentials for the test's own pushes when the registry needs them. */
  pushAuth?: { username: string; password: string };
  /** Lines of the config's `registries:` block, given the registry host. */
  registries?: (registryHost: string) => string;
  /** The logins whose Deployment statuses are staging's and prod's health (`health.reporters`). */
  reporters?: string[];
  /** Files of acme/config added to (or replacing) the default ones, given the registry host. */
  files?: (registryHost: string) => Record<string, string>;
}): Promise<World> {
  const emu = await startGitHubEmulator();
  const registry = await startEmbeddedRegistry(options.registry?.(emu));
  const pushAuth = options.pushAuth ? { auth: options.pushAuth } : {};
  const users = {
    mona: accounts.createUser(emu, "mona"),
    hubot: accounts.createUser(emu, "hubot"),
    eve: accounts.createUser(emu, "eve"),
  };
  accounts.createOrg(emu, "acme");
  await pushImage(registry.url, "acme/shop", "1.7.0", { content: "1.7.0", ...pushAuth });
  await repos.createRepo(emu, "acme", "config", {
    files: {
      ".github/ferry.yml": config(
        registry.host,
        options.source ?? false,
        options.registries?.(registry.host),
        options.reporters,
      ),
      "overlays/staging/kustomization.yaml": shopOverlay(registry.host, "1.7.0"),
      "overlays/staging/deployment.yaml": "kind: Deployment\n",
      "overlays/prod/kustomization.yaml": shopOverlay(registry.host, "1.7.0"),
      "overlays/prod/deployment.yaml": "kind: Deployment\n",
      ...options.files?.(registry.host),
    },
    collaborators: { mona: "maintain", hubot: "write" },
    allowAutoMerge: true,
  });
  repos.protectBranch(emu, "acme", "config", "main", { requiredChecks: ["ci"] });
  if (options.source)
    await repos.createRepo(emu, "acme", "shop", {
      files: { "main.go": "package main\n" },
      collaborators: { mona: "maintain" },
    });
  if (options.ci) actAs.setCi(emu, "acme", "config", { context: "ci", conclusion: "success" });
  const app = accounts.createApp(emu, {
    slug: "ferry",
    // As app.yml asks (actions: read brings workflow_run events from source repos).
    permissions: ferryAppManifest().permissions,
    // repository_ruleset (not in @octokit/webhooks-schemas yet) and merge_group too, as app.yml subscribes to them.
    events: [...ALL_EVENTS, "repository_ruleset", "merge_group"],
    webhookSecret: SECRET,
  });
  accounts.installApp(emu, app.id, "acme");
  const serverOptions: FerryServerOptions = {
    appId: app.id,
    privateKey: app.privateKey,
    webhookSecret: SECRET,
    baseUrl: emu.apiUrl,
    webUrl: emu.webUrl,
    Octokit: UnthrottledOctokit,
    scanIntervalMs: false,
    registrySecrets: { distribution: REGISTRY_SECRET },
    registryCoalesceMs: 20,
    logLevel: "fatal",
    ...(typeof options.server === "function" ? options.server(registry.host) : options.server),
  };
  const server = await startFerryServer(serverOptions);
  const replicas: FerryServer[] = [];
  accounts.setWebhook(emu, app.id, `${server.url}/api/github/webhooks`, SECRET);
  registry.addNotificationEndpoint({
    url: `${server.url}/registry/distribution`,
    headers: { Authorization: REGISTRY_SECRET },
  });
  const octokit = (token: string) =>
    new Octokit({ baseUrl: emu.apiUrl, auth: token, request: { retries: 0 } });
  const as = {
    mona: octokit(users.mona.token),
    hubot: octokit(users.hubot.token),
    eve: octokit(users.eve.token),
  };

  /** Until the emulator, the registry notifications and Ferry's queue are all quiet. */
  const settle = async (): Promise<void> => {
    for (let round = 0; round < 6; round++) {
      await new Promise((resolve) => setTimeout(resolve, 60));
      await emu.idle();
      await server.idle();
      for (const replica of replicas) await replica.idle();
    }
  };
  const allEvents = [...emu.appById(app.id).events];
  return {
    emu,
    appId: app.id,
    registry,
    server,
    as,
    settle,
    async close() {
      for (const replica of replicas) await replica.close();
      await server.close();
      await registry.close();
      await emu.close();
    },
    async push(tag, labels) {
      const { digest } = await pushImage(registry.url, "acme/shop", tag, {
        content: tag,
        ...pushAuth,
        ...(labels ? { labels } : {}),
      });
      await settle();
      return digest;
    },
    async openIssue() {
      const { data } = await as.mona.rest.issues.create({
        owner: "acme",
        repo: "config",
        title: "Release shop",
      });
      return data.number;
    },
    appRequests(from) {
      return emu
        .requests()
        .slice(from)
        .filter((request) => request.actor === app.botLogin || request.actor.startsWith("app:"));
    },
    async replica() {
      const replica = await startFerryServer(serverOptions);
      replicas.push(replica);
      return replica;
    },
    onlyEvents(events) {
      emu.appById(app.id).events = events ?? [...allEvents];
    },
    async pulls(state = "all") {
      const { data } = await as.mona.rest.pulls.list({ owner: "acme", repo: "config", state, per_page: 100 });
      return data;
    },
  };
}

/** Comments `body` on issue or PR `issue` as `who`, waits for Ferry, and returns the comment's reactions, sorted. */
export async function commandReactions(
  world: World,
  issue: number,
  body: string,
  who: "mona" | "hubot" | "eve" = "mona",
): Promise<string[]> {
  const { data: comment } = await world.as[who].rest.issues.createComment({
    owner: "acme",
    repo: "config",
    issue_number: issue,
    body,
  });
  await world.settle();
  const { data: reactions } = await world.as.mona.rest.reactions.listForIssueComment({
    owner: "acme",
    repo: "config",
    comment_id: comment.id,
  });
  return reactions.map((reaction) => reaction.content).sort();
}

/** The dashboard issues of acme/config, every page read. */
export async function dashboards(world: World) {
  const all = await world.as.mona.paginate(world.as.mona.rest.issues.listForRepo, {
    owner: "acme",
    repo: "config",
    state: "all",
    per_page: 100,
  });
  return all.filter((issue) => !issue.pull_request && issue.title === "Ferry dashboard");
}

/** The one ferry/staging PR, whatever its state. */
export async function stagingPull(world: World) {
  const pulls = (await world.pulls("all")).filter((pull) => pull.head.ref === "ferry/staging");
  // A plain throw, not vitest's expect: the bench imports this world too, outside any test.
  if (pulls.length !== 1) throw new Error(`expected one ferry/staging PR, found ${pulls.length}`);
  return pulls[0]!;
}

/** The bodies of the comments on issue or PR `number`. */
export async function commentsOn(world: World, number: number): Promise<string[]> {
  const { data } = await world.as.mona.rest.issues.listComments({
    owner: "acme",
    repo: "config",
    issue_number: number,
  });
  return data.map((comment) => comment.body ?? "");
}

/** Comments `body` on issue `issue` as mona, waits for Ferry, and returns the last comment on it: Ferry's reply. */
export async function commandReply(world: World, issue: number, body: string): Promise<string> {
  await world.as.mona.rest.issues.createComment({ owner: "acme", repo: "config", issue_number: issue, body });
  await world.settle();
  return (await commentsOn(world, issue)).at(-1)!;
}

/**
 * Posts the `ci` status on each PR's head and waits for Ferry: `failure` on the one whose branch
 * ends with `failing`, `success` on the others (one group's red CI beside the others' green).
 */
export async function ciFailsOnly(
  world: World,
  pulls: { head: { ref: string; sha: string } }[],
  failing: string,
): Promise<void> {
  for (const pull of pulls)
    actAs.setStatus(world.emu, "acme", "config", pull.head.sha, {
      context: "ci",
      state: pull.head.ref.endsWith(failing) ? "failure" : "success",
    });
  await world.settle();
}
