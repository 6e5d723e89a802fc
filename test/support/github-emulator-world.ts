/** Shared set-up for the emulator tests: an org with a config repo, users of every role, and Octokit clients. */
import { sign } from "node:crypto";
import { Octokit } from "@octokit/rest";
import {
  startGitHubEmulator,
  type GitHubEmulator,
  accounts,
  actAs,
  inspect,
  repos,
} from "../../packages/sandbox/src/github/index.js";

export interface World {
  emu: GitHubEmulator;
  tokens: Record<"mona" | "hubot" | "eve" | "tri", string>;
  as(login: "mona" | "hubot" | "eve" | "tri"): Octokit;
  anonymous: Octokit;
}

export function octokitFor(emu: GitHubEmulator, token?: string): Octokit {
  return new Octokit({
    baseUrl: emu.apiUrl,
    ...(token ? { auth: token } : {}),
    request: { retries: 0 },
    log: { debug() {}, info() {}, warn() {}, error() {} },
  });
}

/** acme/config (public) with mona as maintainer (admin), hubot with write, tri with triage, eve with nothing. */
export async function startWorld(
  options: { private?: boolean; files?: Record<string, string>; allowAutoMerge?: boolean } = {},
): Promise<World> {
  const emu = await startGitHubEmulator();
  const mona = accounts.createUser(emu, "mona", { name: "Mona Lisa" });
  const hubot = accounts.createUser(emu, "hubot");
  const eve = accounts.createUser(emu, "eve");
  const tri = accounts.createUser(emu, "tri");
  accounts.createOrg(emu, "acme");
  await repos.createRepo(emu, "acme", "config", {
    files: options.files ?? {
      "overlays/staging/kustomization.yaml": "images:\n  - name: shop\n    newTag: 1.7.0\n",
      "README.md": "config\n",
    },
    private: options.private ?? false,
    collaborators: { mona: "admin", hubot: "write", tri: "triage" },
    allowAutoMerge: options.allowAutoMerge ?? true,
  });
  const tokens = { mona: mona.token, hubot: hubot.token, eve: eve.token, tri: tri.token };
  return { emu, tokens, as: (login) => octokitFor(emu, tokens[login]), anonymous: octokitFor(emu) };
}

export async function expectStatus(
  promise: Promise<unknown>,
  status: number,
): Promise<{ message: string; headers: Record<string, string> }> {
  try {
    await promise;
  } catch (error) {
    const e = error as {
      status?: number;
      response?: { data?: { message?: string }; headers?: Record<string, string> };
    };
    if (e.status !== status)
      throw new Error(`expected HTTP ${status}, got ${e.status}: ${JSON.stringify(e.response?.data)}`);
    return { message: e.response?.data?.message ?? "", headers: e.response?.headers ?? {} };
  }
  throw new Error(`expected HTTP ${status}, but the call succeeded`);
}

/** An app JWT as GitHub documents it (RS256, iat 60 s in the past, exp 10 minutes after iat), signed with node:crypto. */
export function appJwt(
  appId: number | string,
  privateKeyPem: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${encode({ alg: "RS256", typ: "JWT" })}.${encode({ iat: nowSeconds - 60, exp: nowSeconds + 540, iss: appId })}`;
  const signature = sign("RSA-SHA256", Buffer.from(unsigned), privateKeyPem).toString("base64url");
  return `${unsigned}.${signature}`;
}

/** Installs a fresh app on acme with the given permissions; returns JWT and installation clients. */
export async function installApp(
  world: World,
  options: {
    permissions?: Record<string, "read" | "write">;
    webhookUrl?: string;
    webhookSecret?: string;
    slug?: string;
  } = {},
): Promise<{
  appId: number;
  installationId: number;
  privateKey: string;
  botLogin: string;
  app: Octokit;
  installation: Octokit;
  token: string;
}> {
  const created = accounts.createApp(world.emu, {
    slug: options.slug ?? "ferry",
    permissions: options.permissions ?? {
      contents: "write",
      pull_requests: "write",
      issues: "write",
      checks: "write",
      statuses: "write",
      deployments: "write",
      members: "read",
      administration: "read",
      actions: "read",
      packages: "read",
    },
    ...(options.webhookUrl ? { webhookUrl: options.webhookUrl } : {}),
    ...(options.webhookSecret ? { webhookSecret: options.webhookSecret } : {}),
  });
  const { id: installationId } = accounts.installApp(world.emu, created.id, "acme");
  const app = octokitFor(world.emu, appJwt(created.id, created.privateKey));
  const { data } = await app.rest.apps.createInstallationAccessToken({ installation_id: installationId });
  return {
    appId: created.id,
    installationId,
    privateKey: created.privateKey,
    botLogin: created.botLogin,
    app,
    installation: octokitFor(world.emu, data.token),
    token: data.token,
  };
}

/** An environment's tag set by a person on acme/config's main (`overlays/<env>/kustomization.yaml`). */
export async function setTagOnMain(emu: GitHubEmulator, environment: string, tag: string): Promise<void> {
  const path = `overlays/${environment}/kustomization.yaml`;
  const text = (await inspect.readFile(emu, "acme", "config", "main", path))!;
  await actAs.commit(
    emu,
    "acme",
    "config",
    "main",
    { [path]: text.replace(/newTag: "[^"]+"/, `newTag: "${tag}"`) },
    `${environment}: ${tag} by hand`,
  );
}
