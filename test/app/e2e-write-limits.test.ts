/**
 * GitHub's secondary rate limits on content-creating requests: "No more than 80 content-generating
 * requests per minute and no more than 500 content-generating requests per hour are allowed", and
 * over them github.com answers 403 with "You have exceeded a secondary rate limit" and a
 * `retry-after` header that clients must wait out before retrying (GitHub REST docs, "Rate limits
 * for the REST API" → "About secondary rate limits",
 * https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits;
 * "Best practices for using the REST API" → "Avoid concurrent requests" and "Pause between
 * mutative requests"). The emulator enforces them per installation when asked. A periodic scan
 * that finds many environments behind in many config repositories must stay under them, by
 * delaying its writes, and still open every promotion.
 */
import { Probot } from "probot";
import { afterEach, describe, expect, it } from "vitest";
import { UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import { startGitHubEmulator, accounts, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import {
  GITHUB_CONTENT_LIMITS,
  SECONDARY_LIMIT_MESSAGE,
} from "../../packages/sandbox/src/github/content-limits.js";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { shopOverlay } from "../support/app-fakes.js";
import { within } from "../support/deadline.js";
import { testClock } from "../support/test-clock.js";

const REPOSITORIES = 5;
const ENVIRONMENTS = ["dev", "qa", "staging"];

function repoConfig(registryHost: string): string {
  return `images:
  shop:
    repository: ${registryHost}/acme/shop
    policy: { range: "^1.0.0" }
environments:
${ENVIRONMENTS.map((env) => `  ${env}:\n    paths: [overlays/${env}]\n    update: auto\n    merge: review\n`).join("")}`;
}

describe("GitHub's secondary limits on content-creating requests", { timeout: 600_000 }, () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it("the emulator refuses an installation's 81st content-creating request in a minute as github.com does: 403, the documented message, retry-after", async () => {
    const emu = await startGitHubEmulator();
    try {
      accounts.createOrg(emu, "acme");
      await repos.createRepo(emu, "acme", "config", { files: { "README.md": "x\n" } });
      const app = accounts.createApp(emu, {
        slug: "ferry",
        permissions: { issues: "write", metadata: "read" },
      });
      const installation = accounts.installApp(emu, app.id, "acme");
      const probot = new Probot({
        appId: app.id,
        privateKey: app.privateKey,
        baseUrl: emu.apiUrl,
        // Without the write budget or the throttling plugin: what reaches GitHub is what was asked.
        Octokit: UnthrottledOctokit,
        logLevel: "fatal",
      });
      const octokit = await probot.auth(installation.id);
      emu.faults.contentLimits.enforce();
      const create = (title: string) => octokit.rest.issues.create({ owner: "acme", repo: "config", title });
      for (let i = 0; i < GITHUB_CONTENT_LIMITS.perMinute; i++) await create(`issue ${i}`);
      // Reads are not content-creating.
      await octokit.rest.issues.listForRepo({ owner: "acme", repo: "config" });
      const refused = await create("one too many").then(
        () => undefined,
        (error: {
          status: number;
          response: { data: { message: string }; headers: Record<string, string> };
        }) => error,
      );
      expect(refused?.status).toBe(403);
      expect(refused?.response.data.message).toBe(SECONDARY_LIMIT_MESSAGE);
      const retryAfter = Number(refused?.response.headers["retry-after"]);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(emu.faults.contentLimits.refused).toBe(1);
    } finally {
      await emu.close();
    }
  });

  it(`a scan that finds ${ENVIRONMENTS.length} environments behind in each of ${REPOSITORIES} config repositories opens every promotion without one request refused: the writes wait for their slot`, async () => {
    let registryHost = "";
    // The write budget and the emulator's limits share one clock that moves only when a write
    // waits for its slot: no real minute is waited out, and however slowly this machine runs the
    // scan, its writes come faster than 80 a minute on that clock and must be paced.
    const clock = testClock();
    const w = (world = await startWorld({
      ci: false,
      server: (host) => {
        registryHost = host;
        return { githubWrites: { now: clock.now, sleep: clock.sleep } };
      },
    }));
    // 1.8.0 is in the registry before the repositories exist: the scan, not a webhook, finds them behind.
    await w.push("1.8.0");
    w.emu.faults.contentLimits.enforce(GITHUB_CONTENT_LIMITS, clock.now);
    for (let i = 0; i < REPOSITORIES; i++) {
      const files: Record<string, string> = { ".github/ferry.yml": repoConfig(registryHost) };
      for (const env of ENVIRONMENTS) {
        files[`overlays/${env}/kustomization.yaml`] = shopOverlay(registryHost, "1.7.0");
        files[`overlays/${env}/deployment.yaml`] = "kind: Deployment\n";
      }
      await repos.createRepo(w.emu, "acme", `service-${i}`, { files, collaborators: { mona: "maintain" } });
    }
    const start = w.emu.requests().length;
    await within(
      300_000,
      `the scan's ${REPOSITORIES * ENVIRONMENTS.length} promotions and the work they queued`,
      w.server.scanNow().then(() => w.settle()),
    );

    const writes = world
      .appRequests(start)
      .filter((request) => request.method !== "GET" && !request.path.startsWith("/app/"));
    const refused = w.appRequests(start).filter((request) => request.status === 403);
    console.log(
      `scan of ${REPOSITORIES} repos × ${ENVIRONMENTS.length} environments: ${writes.length} writes, ${refused.length} refused, ` +
        `${clock.advancedMs} ms waited on the shared clock`,
    );
    // More than a minute's worth: without pacing, GitHub would have refused some of them.
    expect(writes.length).toBeGreaterThan(GITHUB_CONTENT_LIMITS.perMinute);
    // And the writes did wait for their slots: on the shared clock, not the wall clock.
    expect(clock.advancedMs).toBeGreaterThan(0);
    expect(refused).toEqual([]);
    expect(w.emu.faults.contentLimits.refused).toBe(0);
    // Nothing dropped: every environment of every repository has its promotion PR.
    for (let i = 0; i < REPOSITORIES; i++) {
      const heads = (await inspect.listPulls(w.emu, "acme", `service-${i}`, { state: "open" }))
        .map((pull) => pull.head.ref)
        .sort();
      expect(heads, `acme/service-${i}`).toEqual(ENVIRONMENTS.map((env) => `ferry/${env}`).sort());
    }
  });
});
