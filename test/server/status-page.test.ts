/**
 * The page at `GET /`, in a real headless browser (Debian's chromium driven by playwright-core)
 * against the sandbox's running parts: it loads with no console errors, shows the sandbox's two
 * environments, and says what `/status` says — version, sync, health, drift, held, why a tag was
 * not proposed, and the last changes — after a release, a manual scale, a hold and an unlabelled tag.
 */
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandboxWorld, type SandboxWorld } from "../../packages/sandbox/src/story/sandbox-world.js";
import { renderStatusPage } from "../../src/server/status-page.js";
import { startStatusListener } from "../../src/server/status-route.js";
import { createStatusPageRoute } from "../../src/server/status-page.js";
import { CHROMIUM_BINARY } from "../support/prerequisites.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { CONFIG_REPO, IMAGE_PATH, OWNER } from "../../packages/sandbox/src/story/story-repos.js";
import { done, notYet, waitUntil } from "../../packages/sandbox/src/story/wait-until.js";

type Deployment = { sync: string; health: string; drift?: string };
type Change = { image: string; kind: string; to: string; from?: string; pull?: number; by?: string };
type RepoStatus = {
  environments: { name: string }[];
  images: string[];
  running: Record<string, Record<string, { tag?: string; digest?: string }>>;
  pulls: Record<string, { number: number; title: string } | undefined>;
  holds: Record<string, { by: string; reason: string; at: string }>;
  deployments?: Record<string, Deployment>;
  notices?: { environment: string; image: string; message: string }[];
  changes?: Record<string, Change[]>;
};
type Status = Record<string, RepoStatus>;

let world: SandboxWorld;
let browser: Browser;

beforeAll(async () => {
  world = await startSandboxWorld({ log: () => undefined, statusTtlMs: 200 });
  browser = await chromium.launch({ executablePath: CHROMIUM_BINARY, args: ["--no-sandbox"] });
});
afterAll(async () => {
  await browser?.close();
  await world?.close();
});

async function readStatus(): Promise<RepoStatus> {
  const status = (await (await fetch(world.ferry.statusUrl!)).json()) as Status;
  return status[`${OWNER}/${CONFIG_REPO}`]!;
}

/** Polls `/status` until `ready` holds (bounded by the test's timeout), returning that answer. */
async function statusWhen(what: string, ready: (status: RepoStatus) => boolean): Promise<RepoStatus> {
  return waitUntil(
    what,
    async () => {
      const status = await readStatus();
      return ready(status) ? done(status) : notYet(JSON.stringify(status.deployments ?? {}));
    },
    { intervalMs: 250, timeoutMs: 60_000 },
  );
}

describe("the status page", () => {
  it("loads in a browser with no console errors and shows what /status says: version, sync, health, drift, held, why not and the last changes", async () => {
    const statusUrl = world.ferry.statusUrl!;
    const pageUrl = statusUrl.replace(/\/status$/, "/");
    const repo = { owner: OWNER, repo: CONFIG_REPO };
    // A release reaches staging through its PR; prod is scaled by hand (drift the reconciler undoes);
    // prod is held; a tag pushed without a revision label waits for CI gating.
    await world.release("1.8.0");
    await statusWhen(
      "staging to run 1.8.0, Synced and Healthy",
      (status) =>
        status.running.staging?.shop?.tag === "1.8.0" &&
        status.deployments?.staging?.sync === "Synced" &&
        status.deployments.staging.health === "Healthy" &&
        (status.changes?.staging ?? []).some((change) => change.to === "1.8.0"),
    );
    world.cluster.scale("Deployment", "prod", "shop", 1);
    await statusWhen("prod's drift on /status", (status) => status.deployments?.prod?.drift !== undefined);
    const { data: issue } = await world.as.mona.rest.issues.create({ ...repo, title: "Freeze", body: "" });
    await world.as.mona.rest.issues.createComment({
      ...repo,
      issue_number: issue.number,
      body: "/hold prod",
    });
    await statusWhen("prod held", (status) => status.holds.prod !== undefined);
    await pushImage(world.registry.url, IMAGE_PATH, "1.9.0", { content: "1.9.0 unlabelled" });
    await world.ferry.scanNow();
    const status = await statusWhen("the why-not notice", (found) => (found.notices ?? []).length > 0);

    // What the story did is there, in /status's own words.
    expect(status.deployments?.prod?.drift).toBe("1 manual change undone in the last 24 h");
    expect(status.holds.prod?.by).toBe("mona");
    expect(status.notices).toContainEqual({
      environment: "staging",
      image: "shop",
      message: "1.9.0 waits for CI gating: no revision label and no tag 1.9.0 in acme/shop",
    });
    expect(status.changes?.staging?.[0]).toMatchObject({
      image: "shop",
      kind: "promotion",
      from: "1.7.3",
      to: "1.8.0",
    });

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    const response = await page.goto(pageUrl);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-type"]).toMatch(/^text\/html/);
    const shown = await readStatus();

    const rows = await page.$$eval("tr[data-environment]", (elements) =>
      elements.map((row) => {
        const cell = (name: string) => row.querySelector(`.${name}`)!.textContent;
        return {
          repository: row.closest("section")!.getAttribute("data-repository"),
          environment: row.getAttribute("data-environment"),
          image: row.getAttribute("data-image"),
          tag: cell("tag"),
          digest: cell("digest"),
          sync: cell("sync"),
          health: cell("health"),
          drift: cell("drift"),
          held: cell("held"),
          pull: cell("pull"),
          notices: cell("notices"),
          changes: cell("changes"),
        };
      }),
    );
    const expected = shown.environments.flatMap(({ name }) =>
      shown.images.map((image) => {
        const hold = shown.holds[name];
        const deployment = shown.deployments?.[name];
        return {
          repository: `${OWNER}/${CONFIG_REPO}`,
          environment: name,
          image,
          tag: shown.running[name]?.[image]?.tag ?? "not referenced",
          digest: shown.running[name]?.[image]?.digest ?? "",
          sync: deployment?.sync ?? "unknown",
          health: deployment?.health ?? "unknown",
          drift: deployment === undefined ? "unknown" : (deployment.drift ?? "none"),
          held: hold ? `held by ${hold.by} (${hold.reason}) since ${hold.at}` : "no",
          pull: shown.pulls[name] ? `#${shown.pulls[name].number} ${shown.pulls[name].title}` : "none",
          notices: (shown.notices ?? [])
            .filter((notice) => notice.environment === name && notice.image === image)
            .map((notice) => notice.message)
            .join("; "),
          changes: expect.stringContaining(
            (shown.changes?.[name] ?? []).find((change) => change.image === image)?.to ?? "",
          ),
        };
      }),
    );
    expect(rows).toEqual(expected);
    expect(rows.map((row) => row.environment)).toEqual(["staging", "prod"]);
    const prod = rows.find((row) => row.environment === "prod")!;
    expect(prod).toMatchObject({
      sync: "Synced",
      health: "Healthy",
      drift: "1 manual change undone in the last 24 h",
    });
    expect(prod.held).toMatch(/^held by mona \(/);
    const staging = rows.find((row) => row.environment === "staging")!;
    expect(staging.notices).toBe(
      "1.9.0 waits for CI gating: no revision label and no tag 1.9.0 in acme/shop",
    );
    expect(staging.changes).toMatch(/^1\.8\.0 ← 1\.7\.3, promotion #\d+ by /);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe("the status page's rule and escaping", () => {
  it("is refused without the bearer token on a public listener, as /status is", async () => {
    const listener = await startStatusListener(
      createStatusPageRoute(async () => ({}), { token: "page-token" }),
      { host: "127.0.0.1", port: 0 },
      () => undefined,
    );
    try {
      const root = listener.url.replace(/\/status$/, "/");
      expect((await fetch(root)).status).toBe(401);
      expect((await fetch(root, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
      const allowed = await fetch(root, { headers: { authorization: "Bearer page-token" } });
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get("content-security-policy")).toContain("default-src 'none'");
    } finally {
      await listener.close();
    }
  });

  it("escapes every value it shows", () => {
    const html = renderStatusPage({
      "acme/<b>config</b>": {
        environments: [{ name: "<img src=x onerror=alert(1)>" }],
        images: ['shop"><script>alert(1)</script>'],
        running: {},
        pulls: { "<img src=x onerror=alert(1)>": { number: 1, title: "<script>alert(2)</script>" } },
        holds: {},
      },
    });
    expect(html).not.toMatch(/<script|<img|<b>/);
    expect(html).toContain("&lt;script&gt;alert(2)&lt;/script&gt;");
  });
});
