/**
 * Private images on GitHub's container registry, end to end. The embedded registry answers as
 * GHCR does (packages/sandbox/src/registry/registry-auth.ts, GhcrModel): an installation token logs in but
 * is denied private packages with 403 `{"errors":[{"code":"DENIED","message":"permission_denied:
 * read_package"}]}` (RightNow-AI/openfang#12 shows that body on tags/list after a token exchange;
 * jikig-ai/soleur#6073 and akuity/kargo#2391 report that a GitHub App installation token can log
 * in to ghcr.io but cannot pull private packages); a personal access token (classic) with
 * read:packages pulls them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { NO_SECRET_BINDINGS } from "../../src/core/config/secret-bindings.js";
import type { GitHubEmulator } from "../../packages/sandbox/src/github/index.js";
import { serverOptionsFromEnv } from "../../src/server/server-options.js";
import { startWorld, type World } from "../support/app-e2e-world.js";

const PAT = { username: "mona", password: "ghp_monaClassicTokenWithReadPackages0001" };

/** GHCR with acme/shop as a private package; mona's classic PAT may push and pull. */
const privateGhcr = (emu: GitHubEmulator) => ({
  auth: {
    kind: "bearer" as const,
    users: { [PAT.username]: PAT.password },
    ghcr: {
      privateRepositories: ["acme/shop"],
      isInstallationToken: (password: string) => emu.installationTokens.has(password),
    },
  },
});

describe("private GHCR images (end to end)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("with auth: github, proposes nothing for a private package and says why, naming the way that works", async () => {
    world = await startWorld({
      ci: true,
      registry: privateGhcr,
      pushAuth: PAT,
      registries: (host) => `  "${host}": { auth: github }\n`,
      // Ferry's GitHub container registry is the embedded one (loopback, plain HTTP).
      server: (host) => ({
        ferry: {
          configContext: {
            githubContainerRegistry: host,
            allowedEnv: [],
            refusePrivateRegistries: false,
            secretBindings: NO_SECRET_BINDINGS,
          },
        },
      }),
    });
    await world.push("1.8.0");
    expect(await world.pulls()).toEqual([]);
    const issue = await world.openIssue();
    await world.as.mona.rest.issues.createComment({
      owner: "acme",
      repo: "config",
      issue_number: issue,
      body: "/promote staging",
    });
    await world.settle();
    const { data: comments } = await world.as.mona.rest.issues.listComments({
      owner: "acme",
      repo: "config",
      issue_number: issue,
    });
    const reply = comments.map((comment) => comment.body ?? "").find((body) => body.startsWith("@mona"));
    expect(reply).toMatch(/HTTP 403 \(DENIED\)/);
    expect(reply).toMatch(/personal access token \(classic\) with read:packages/);
    // The installation token did log in: the token endpoint was asked, the pull was what GHCR refused.
    expect(world.registry.requestCountsByRoute()["GET /token"]).toBeGreaterThan(0);
  });

  it("with a classic PAT in a FERRY_REGISTRY_ variable (username + passwordEnv), follows the private package", async () => {
    world = await startWorld({
      ci: true,
      registry: privateGhcr,
      pushAuth: PAT,
      registries: (registryHost) =>
        `  "${registryHost}": { username: mona, passwordEnv: FERRY_REGISTRY_GHCR_TOKEN }\n`,
      // As an operator sets it: the PAT, and the registry and installation it is for.
      server: (host) => ({
        ferry: serverOptionsFromEnv({
          APP_ID: "1",
          PRIVATE_KEY: "unused",
          FERRY_REGISTRY_GHCR_TOKEN: PAT.password,
          FERRY_REGISTRY_GHCR_TOKEN_HOSTS: host,
          FERRY_REGISTRY_GHCR_TOKEN_OWNERS: "acme",
        }).ferry!,
      }),
    });
    await world.push("1.8.0");
    expect((await world.pulls()).map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
  });
});
