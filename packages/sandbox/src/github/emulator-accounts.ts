/**
 * Accounts, apps and installations of the GitHub emulator, and how a request's credentials
 * (user token, app JWT, installation token) become an actor.
 */
import { createPublicKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { generateAppKeyPair, looksLikeJwt, newToken, verifyAppJwt } from "./auth.js";
import type { GitHubEmulator } from "./emulator.js";
import { deliverTo } from "./emulator-events.js";
import type { Actor, App, Installation, InstallationToken, Permissions, Repo } from "./model.js";
import { ApiError } from "./router.js";
import * as shape from "./shapes.js";

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

export const ACTIONS_APP_SLUG = "github-actions";

export function createUser(
  emu: GitHubEmulator,
  login: string,
  options: { type?: "User" | "Bot"; name?: string; email?: string } = {},
): { login: string; id: number; token: string } {
  if (emu.accounts.has(login.toLowerCase())) throw new Error(`account ${login} exists`);
  const id = emu.id();
  const token = newToken("ghp");
  emu.accounts.set(login.toLowerCase(), {
    id,
    nodeId: shape.nodeIdFor("U", id),
    login,
    type: options.type ?? "User",
    name: options.name ?? login,
    email: options.email ?? `${id}+${login}@users.noreply.localhost`,
    token,
    createdAt: emu.now(),
  });
  return { login, id, token };
}

export function createOrg(emu: GitHubEmulator, login: string): { login: string; id: number } {
  const id = emu.id();
  emu.accounts.set(login.toLowerCase(), {
    id,
    nodeId: shape.nodeIdFor("O", id),
    login,
    type: "Organization",
    name: login,
    email: `${login}@orgs.localhost`,
    createdAt: emu.now(),
  });
  return { login, id };
}

export function createApp(
  emu: GitHubEmulator,
  options: CreateAppOptions,
): {
  id: number;
  slug: string;
  clientId: string;
  privateKey: string;
  botLogin: string;
  webhookSecret: string | null;
} {
  const id = emu.id();
  const { privateKeyPem, publicKey } =
    options.slug === ACTIONS_APP_SLUG && options.owner === "github" ? builtInKey() : generateAppKeyPair();
  const botLogin = `${options.slug}[bot]`;
  const owner = options.owner ?? defaultAppOwner(emu);
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
    createdAt: emu.now(),
  };
  emu.apps.set(id, app);
  const botId = emu.id();
  emu.accounts.set(botLogin.toLowerCase(), {
    id: botId,
    nodeId: shape.nodeIdFor("BOT", botId),
    login: botLogin,
    type: "Bot",
    name: botLogin,
    // GitHub writes `<id>+<slug>[bot]@users.noreply.github.com`; brackets are not valid in an
    // RFC 5322 address (the OpenAPI "email" format), so the emulator drops them.
    email: `${botId}+${options.slug}-bot@users.noreply.localhost`,
    createdAt: emu.now(),
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
export function setWebhook(
  emu: GitHubEmulator,
  appId: number,
  webhookUrl: string | null,
  webhookSecret?: string,
): void {
  const app = emu.appById(appId);
  app.webhookUrl = webhookUrl;
  if (webhookSecret !== undefined) app.webhookSecret = webhookSecret;
}

function defaultAppOwner(emu: GitHubEmulator): string {
  return emu.accounts.has("github") ? "github" : createOrg(emu, "github").login;
}

export function installApp(
  emu: GitHubEmulator,
  appId: number,
  account: string,
  options: { repositories?: string[]; permissions?: Permissions } = {},
): { id: number } {
  const app = emu.appById(appId);
  const id = emu.id();
  const inst: Installation = {
    id,
    appId,
    account: emu.account(account).login,
    repositories: options.repositories?.map((name) => name.toLowerCase()),
    permissions: { ...(options.permissions ?? app.permissions) },
    events: [...app.events],
    createdAt: emu.now(),
  };
  emu.installations.set(id, inst);
  deliverTo(emu, inst, "installation", {
    action: "created",
    installation: shape.installation(emu.shapes, inst, app),
    repositories: installedRepos(emu, inst).map((r) => ({
      id: r.id,
      node_id: r.nodeId,
      name: r.name,
      full_name: `${r.owner}/${r.name}`,
      private: r.private,
    })),
    requester: shape.simpleUser(
      emu.shapes,
      emu.account(inst.account).type === "Organization" ? app.owner : inst.account,
    ),
    sender: shape.simpleUser(
      emu.shapes,
      emu.account(inst.account).type === "Organization" ? app.owner : inst.account,
    ),
  });
  return { id };
}

export function installedRepos(emu: GitHubEmulator, inst: Installation): Repo[] {
  return [...emu.repos.values()].filter((r) => installationCovers(emu, inst, r));
}

export function installationCovers(emu: GitHubEmulator, inst: Installation, repo: Repo): boolean {
  if (inst.account.toLowerCase() !== repo.owner.toLowerCase()) return false;
  return inst.repositories === undefined || inst.repositories.includes(repo.name.toLowerCase());
}

export function authenticate(emu: GitHubEmulator, header: string | undefined): Actor {
  if (!header) return { kind: "anonymous" };
  const match = /^(token|bearer|basic)\s+(.+)$/i.exec(header.trim());
  if (!match) throw new ApiError(401, "Bad credentials");
  let token = match[2]!.trim();
  if (match[1]!.toLowerCase() === "basic") {
    const decoded = Buffer.from(token, "base64").toString("utf8");
    token = decoded.slice(decoded.indexOf(":") + 1);
  }
  if (looksLikeJwt(token)) {
    const issuer = verifyAppJwt(token, (iss) => appByIssuer(emu, iss)?.publicKey, Date.now());
    return { kind: "app", appId: appByIssuer(emu, issuer)!.id };
  }
  return (
    actorForToken(emu, token) ??
    (() => {
      throw new ApiError(401, "Bad credentials");
    })()
  );
}

export function actorForToken(emu: GitHubEmulator, token: string): Actor | undefined {
  const installationToken = emu.installationTokens.get(token);
  if (installationToken) {
    if (installationToken.expiresAt <= Date.now()) return undefined;
    const inst = emu.installations.get(installationToken.installationId);
    if (!inst) return undefined;
    const app = emu.appById(inst.appId);
    return {
      kind: "installation",
      installationId: inst.id,
      appId: inst.appId,
      permissions: installationToken.permissions,
      repositories: installationToken.repositories,
      login: app.botLogin,
    };
  }
  for (const account of emu.accounts.values()) {
    if (account.token === token) return { kind: "user", login: account.login };
  }
  return undefined;
}

function appByIssuer(emu: GitHubEmulator, issuer: string): App | undefined {
  for (const app of emu.apps.values()) {
    if (String(app.id) === issuer || app.clientId === issuer) return app;
  }
  return undefined;
}

export function issueInstallationToken(
  emu: GitHubEmulator,
  inst: Installation,
  request: { repositories?: string[]; permissions?: Permissions } = {},
): InstallationToken {
  const permissions: Permissions = { ...inst.permissions };
  if (request.permissions) {
    for (const [name, level] of Object.entries(request.permissions)) {
      const granted = inst.permissions[name];
      if (!granted || (level !== "read" && granted === "read")) {
        throw new ApiError(422, `The permissions requested are not granted to emu installation.`);
      }
    }
    for (const name of Object.keys(permissions)) if (!(name in request.permissions)) delete permissions[name];
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
  emu.installationTokens.set(token.token, token);
  return token;
}

/** Ends the life of every installation token issued so far (they answer 401 Bad credentials from now on). */
export function expireInstallationTokens(emu: GitHubEmulator): void {
  for (const token of emu.installationTokens.values()) token.expiresAt = Date.now();
}

/**
 * The built-in GitHub Actions app never authenticates, so it skips RSA key generation (the
 * slowest part of starting an emulator) and gets a key that verifies nothing.
 */
function builtInKey(): { privateKeyPem: string; publicKey: ReturnType<typeof createPublicKey> } {
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { privateKeyPem: "", publicKey: createPublicKey(publicKey.export({ type: "spki", format: "pem" })) };
}
