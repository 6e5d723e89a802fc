/**
 * The reconciler's GitHub App credentials (src/reconciler/github-app-tokens.ts) against the
 * emulator, which issues installation tokens as GitHub does (`POST
 * /app/installations/{id}/access_tokens` answers `expires_at` one hour ahead,
 * https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app) and
 * refuses an expired one with 401 "Bad credentials" (test/sandbox/github/access.test.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigRepoFetcher } from "../../src/adapters/git/config-repo-fetcher.js";
import { githubCredentials } from "../../src/cli/reconcile-github.js";
import { UsageError, type CliIo } from "../../src/cli/io.js";
import { InstallationTokens } from "../../src/reconciler/github-app-tokens.js";
import { GitHubDeploymentReporter } from "../../src/adapters/github/deployment-reporter.js";
import {
  accounts,
  repos,
  startGitHubEmulator,
  type GitHubEmulator,
} from "../../packages/sandbox/src/github/index.js";
import { GIT_ENV, TempDirs } from "../support/reconciler-harness.js";

const temp = new TempDirs();
let emu: GitHubEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  temp.cleanup();
});

async function world() {
  emu = await startGitHubEmulator();
  accounts.createOrg(emu, "acme");
  const repo = await repos.createRepo(emu, "acme", "config", {
    private: true,
    files: { "env/staging/web.yaml": "kind: ConfigMap\n" },
  });
  const app = accounts.createApp(emu, {
    slug: "ferry-reconciler",
    permissions: { metadata: "read", contents: "read", deployments: "write" },
  });
  accounts.installApp(emu, app.id, "acme");
  return { emu, repo, app };
}

function minted(emulator: GitHubEmulator): number {
  return emulator
    .requests()
    .filter((request) => request.method === "POST" && /\/access_tokens$/.test(request.path)).length;
}

describe("installation tokens minted from App credentials", () => {
  it("finds the installation, reuses a token until five minutes before expires_at, then mints another", async () => {
    const { emu, app } = await world();
    let now = new Date();
    const tokens = new InstallationTokens({
      credentials: { appId: String(app.id), privateKey: app.privateKey },
      repository: "acme/config",
      baseUrl: emu.apiUrl,
      now: () => now,
    });
    const first = await tokens.token();
    expect(first).toMatch(/^ghs_/);
    expect(await tokens.token()).toBe(first);
    expect(minted(emu)).toBe(1);
    now = new Date(now.getTime() + 54 * 60 * 1000);
    expect(await tokens.token()).toBe(first);
    now = new Date(now.getTime() + 2 * 60 * 1000);
    const second = await tokens.token();
    expect(second).not.toBe(first);
    expect(minted(emu)).toBe(2);
  });

  it("reports Deployment statuses across a token GitHub stopped accepting (401 Bad credentials)", async () => {
    const { emu, repo, app } = await world();
    const tokens = new InstallationTokens({
      credentials: { appId: String(app.id), privateKey: app.privateKey },
      repository: "acme/config",
      baseUrl: emu.apiUrl,
      now: () => new Date(),
    });
    const reporter = new GitHubDeploymentReporter({
      repository: "acme/config",
      environment: "staging",
      token: tokens,
      baseUrl: emu.apiUrl,
      instance: "staging",
    });
    await reporter.report({ revision: repo.headSha, state: "in_progress", description: "syncing" });
    accounts.expireInstallationTokens(emu);
    await reporter.report({ revision: repo.headSha, state: "success", description: "synced" });
    const refused = emu.requests().filter((request) => request.status === 401);
    expect(refused.length).toBe(1);
    expect(minted(emu)).toBe(2);
    const statuses = emu
      .requests()
      .filter((request) => request.method === "POST" && request.path.endsWith("/statuses"));
    // The refused status is sent again with the new token, as the App's bot.
    expect(statuses.map((request) => request.status)).toEqual([201, 401, 201]);
    expect(statuses.filter((request) => request.status === 201).map((request) => request.actor)).toEqual([
      app.botLogin,
      app.botLogin,
    ]);
  });

  it("fetches the private config repo over git with a minted token", async () => {
    const { emu, repo, app } = await world();
    const tokens = new InstallationTokens({
      credentials: { appId: String(app.id), privateKey: app.privateKey },
      repository: "acme/config",
      baseUrl: emu.apiUrl,
      now: () => new Date(),
    });
    const fetcher = new ConfigRepoFetcher({
      repo: emu.gitUrl("acme", "config"),
      token: () => tokens.token(),
      workDir: temp.make(),
      env: GIT_ENV,
    });
    expect((await fetcher.fetch()).revision).toBe(repo.headSha);
  });
});

describe("ferry reconcile's App flags", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ferry-app-key-"));
  afterEach(() => rmSync(path.join(dir, "key.pem"), { force: true }));
  const io = (env: Record<string, string> = {}): CliIo => ({
    stdout: () => {},
    stderr: () => {},
    readStdin: () => Promise.resolve(""),
    cwd: dir,
    env,
    now: () => new Date(),
  });
  const refusal = async (promise: Promise<unknown>): Promise<string> => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message.split("\n")[0]!;
  };

  it("takes FERRY_GITHUB_TOKEN when no App flag is given, and refuses incomplete or conflicting App flags", async () => {
    expect(await githubCredentials({}, io({ FERRY_GITHUB_TOKEN: "t" }), "usage")).toBe("t");
    expect(await refusal(githubCredentials({ "github-app-id": "1" }, io(), "usage"))).toBe(
      "--github-app-id and --github-app-key-file go together",
    );
    expect(
      await refusal(
        githubCredentials({ "github-app-id": "1", "github-app-key-file": "key.pem" }, io(), "usage"),
      ),
    ).toBe("--github-app-id needs --github-repo (the repository it is installed on)");
    const flags = { "github-app-id": "1", "github-app-key-file": "key.pem", "github-repo": "acme/config" };
    expect(await refusal(githubCredentials(flags, io({ FERRY_GITHUB_TOKEN: "t" }), "usage"))).toBe(
      "FERRY_GITHUB_TOKEN and --github-app-id are alternatives: give one",
    );
    expect(await refusal(githubCredentials(flags, io(), "usage"))).toMatch(/cannot read/);
    writeFileSync(path.join(dir, "key.pem"), "not a key\n");
    expect(await refusal(githubCredentials(flags, io(), "usage"))).toMatch(/holds no PEM private key/);
    expect(await refusal(githubCredentials({ ...flags, "github-installation-id": "x" }, io(), "usage"))).toBe(
      '--github-installation-id must be a number, got "x"',
    );
  });
});
