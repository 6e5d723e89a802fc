import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appJwt,
  expectStatus,
  installApp,
  octokitFor,
  startWorld,
  type World,
} from "../../support/github-emulator-world.js";
import { accounts, repos } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";

describe("authentication and permissions", () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
    await repos.createRepo(world.emu, "acme", "secret", {
      private: true,
      files: { "a.txt": "a\n" },
      collaborators: { mona: "admin" },
    });
    repos.createTeam(world.emu, "acme", "release", ["mona"], { maintainers: ["hubot"] });
  });
  afterAll(async () => {
    await world.emu.close();
  });

  it("rejects unknown tokens with 401 Bad credentials", async () => {
    const failure = await expectStatus(
      octokitFor(world.emu, "ghp_nottherealtoken").rest.repos.get({ owner, repo }),
      401,
    );
    expect(failure.message).toBe("Bad credentials");
  });

  it("hides private repositories (404) from users without access, and from anonymous callers", async () => {
    await expectStatus(world.as("eve").rest.repos.get({ owner, repo: "secret" }), 404);
    await expectStatus(world.anonymous.rest.repos.get({ owner, repo: "secret" }), 404);
    expect((await world.as("mona").rest.repos.get({ owner, repo: "secret" })).data.private).toBe(true);
  });

  it("lets anyone read a public repository and comment on it, but only writers push", async () => {
    expect((await world.as("eve").rest.repos.get({ owner, repo })).data.full_name).toBe("acme/config");
    await world.as("eve").rest.issues.create({ owner, repo, title: "hello from eve" });
    const { data: blob } = await world.as("hubot").rest.git.createBlob({ owner, repo, content: "x" });
    expect(blob.sha).toMatch(/^[0-9a-f]{40}$/);
    await expectStatus(world.as("eve").rest.git.createBlob({ owner, repo, content: "x" }), 403);
    await expectStatus(world.as("tri").rest.git.createBlob({ owner, repo, content: "x" }), 403);
  });

  it("reports each user's role through the collaborator permission endpoint", async () => {
    const roles: Record<string, [string, string]> = {};
    for (const username of ["mona", "hubot", "tri", "eve"]) {
      const { data } = await world
        .as("hubot")
        .rest.repos.getCollaboratorPermissionLevel({ owner, repo, username });
      roles[username] = [data.permission, data.role_name];
    }
    expect(roles).toEqual({
      mona: ["admin", "admin"],
      hubot: ["write", "write"],
      tri: ["read", "triage"],
      eve: ["read", "read"],
    });
    const { data: secret } = await world
      .as("mona")
      .rest.repos.getCollaboratorPermissionLevel({ owner, repo: "secret", username: "eve" });
    expect(secret.permission).toBe("none");
  });

  it("gives team members the team's role on the org's repositories", async () => {
    accounts.createUser(world.emu, "rel");
    repos.createTeam(world.emu, "acme", "deployers", ["rel"], {
      repositories: { config: "maintain", secret: "read" },
    });
    const role = async (r: string) =>
      (await world.as("mona").rest.repos.getCollaboratorPermissionLevel({ owner, repo: r, username: "rel" }))
        .data.role_name;
    expect([await role("config"), await role("secret")]).toEqual(["maintain", "read"]);
  });

  it("answers team membership for members and 404 for others", async () => {
    const ferry = await installApp(world, {
      slug: "teams-app",
      permissions: { members: "read", contents: "read" },
    });
    const { data } = await ferry.installation.rest.teams.getMembershipForUserInOrg({
      org: "acme",
      team_slug: "release",
      username: "hubot",
    });
    expect(data).toMatchObject({ role: "maintainer", state: "active" });
    await expectStatus(
      ferry.installation.rest.teams.getMembershipForUserInOrg({
        org: "acme",
        team_slug: "release",
        username: "eve",
      }),
      404,
    );
  });

  it("limits an installation token to the installation's permissions", async () => {
    const reader = await installApp(world, {
      slug: "reader",
      permissions: { contents: "read", pull_requests: "read" },
    });
    expect((await reader.installation.rest.git.getRef({ owner, repo, ref: "heads/main" })).data.ref).toBe(
      "refs/heads/main",
    );
    const denied = await expectStatus(
      reader.installation.rest.git.createBlob({ owner, repo, content: "x" }),
      403,
    );
    expect(denied.message).toBe("Resource not accessible by integration");
    await expectStatus(
      reader.installation.rest.issues.createComment({ owner, repo, issue_number: 1, body: "x" }),
      403,
    );
    await expectStatus(
      reader.installation.rest.checks.create({ owner, repo, name: "x", head_sha: "main" }),
      403,
    );
  });

  it("lets an installation see only the repositories it was installed on", async () => {
    const created = accounts.createApp(world.emu, { slug: "narrow", permissions: { contents: "write" } });
    const { id } = accounts.installApp(world.emu, created.id, "acme", { repositories: ["config"] });
    const app = octokitFor(world.emu, appJwt(created.id, created.privateKey));
    const { data: token } = await app.rest.apps.createInstallationAccessToken({ installation_id: id });
    const narrow = octokitFor(world.emu, token.token);
    await narrow.rest.repos.get({ owner, repo });
    await expectStatus(narrow.rest.repos.get({ owner, repo: "secret" }), 404);
    await expectStatus(app.rest.apps.getRepoInstallation({ owner, repo: "secret" }), 404);
    expect((await app.rest.apps.getRepoInstallation({ owner, repo })).data.id).toBe(id);
  });

  it("verifies app JWTs: signature, expiry, and issue time", async () => {
    const created = accounts.createApp(world.emu, { slug: "jwt-check" });
    const other = accounts.createApp(world.emu, { slug: "jwt-other" });
    const now = Math.floor(Date.now() / 1000);
    expect(
      (await octokitFor(world.emu, appJwt(created.id, created.privateKey)).rest.apps.getAuthenticated()).data
        ?.slug,
    ).toBe("jwt-check");
    await expectStatus(
      octokitFor(world.emu, appJwt(created.id, other.privateKey)).rest.apps.getAuthenticated(),
      401,
    );
    await expectStatus(
      octokitFor(world.emu, appJwt(created.id, created.privateKey, now - 3600)).rest.apps.getAuthenticated(),
      401,
    );
    await expectStatus(
      octokitFor(world.emu, appJwt(created.id, created.privateKey, now + 600)).rest.apps.getAuthenticated(),
      401,
    );
    // An app JWT is not an installation token: repository endpoints refuse it.
    await expectStatus(
      octokitFor(world.emu, appJwt(created.id, created.privateKey)).rest.repos.get({ owner, repo }),
      403,
    );
  });

  it("issues installation tokens that expire in an hour with the installation's permissions", async () => {
    const ferry = await installApp(world, {
      slug: "token-app",
      permissions: { contents: "write", issues: "read" },
    });
    const { data } = await ferry.app.rest.apps.createInstallationAccessToken({
      installation_id: ferry.installationId,
    });
    const lifetime = new Date(data.expires_at).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(59 * 60 * 1000);
    expect(lifetime).toBeLessThanOrEqual(60 * 60 * 1000);
    expect(data.permissions).toEqual({ metadata: "read", contents: "write", issues: "read" });
    expect(data.token).toMatch(/^ghs_/);
  });

  it("answers 401 once an installation token has expired, and a fresh token works again", async () => {
    const ferry = await installApp(world, { slug: "expiring", permissions: { contents: "read" } });
    await ferry.installation.rest.repos.get({ owner, repo });
    accounts.expireInstallationTokens(world.emu);
    const expired = await expectStatus(ferry.installation.rest.repos.get({ owner, repo }), 401);
    expect(expired.message).toBe("Bad credentials");
    const { data } = await ferry.app.rest.apps.createInstallationAccessToken({
      installation_id: ferry.installationId,
    });
    await octokitFor(world.emu, data.token).rest.repos.get({ owner, repo });
  });

  it("sends rate-limit headers on every response", async () => {
    const first = await world.as("eve").rest.repos.get({ owner, repo });
    const second = await world.as("eve").rest.repos.get({ owner, repo });
    for (const name of [
      "x-ratelimit-limit",
      "x-ratelimit-remaining",
      "x-ratelimit-reset",
      "x-ratelimit-used",
      "x-ratelimit-resource",
    ]) {
      expect(second.headers[name]).toBeDefined();
    }
    expect(Number(second.headers["x-ratelimit-remaining"])).toBe(
      Number(first.headers["x-ratelimit-remaining"]) - 1,
    );
    expect(second.headers["x-ratelimit-resource"]).toBe("core");
  });
});
