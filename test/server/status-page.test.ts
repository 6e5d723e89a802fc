/**
 * The page at `GET /`, in a real headless browser (Debian's chromium driven by playwright-core)
 * against the sandbox's running parts: it loads with no console errors, shows the sandbox's two
 * environments, and says what `/status` says.
 */
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startSandboxWorld, type SandboxWorld } from "../../src/sandbox/story/sandbox-world.js";
import { renderStatusPage } from "../../src/server/status-page.js";
import { startStatusListener } from "../../src/server/status-route.js";
import { createStatusPageRoute } from "../../src/server/status-page.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const CHROMIUM = "/usr/bin/chromium";

type Status = Record<
  string,
  {
    environments: { name: string }[];
    images: string[];
    running: Record<string, Record<string, { tag?: string; digest?: string }>>;
    pulls: Record<string, { number: number; title: string } | undefined>;
    holds: Record<string, unknown>;
  }
>;

let world: SandboxWorld;
let browser: Browser;

beforeAll(async () => {
  world = await startSandboxWorld({ log: () => undefined });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});
afterAll(async () => {
  await browser?.close();
  await world?.close();
});

describe("the status page", () => {
  it("loads in a browser with no console errors, shows staging and prod, and matches /status", async () => {
    const statusUrl = world.ferry.statusUrl!;
    const pageUrl = statusUrl.replace(/\/status$/, "/");
    // A release first, so the page has a version that moved and an open or merged promotion.
    await world.release("1.8.0");
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    const response = await page.goto(pageUrl);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-type"]).toMatch(/^text\/html/);
    const status = (await (await fetch(statusUrl)).json()) as Status;

    const rows = await page.$$eval("tr[data-environment]", (elements) =>
      elements.map((row) => ({
        repository: row.closest("section")!.getAttribute("data-repository"),
        environment: row.getAttribute("data-environment"),
        image: row.getAttribute("data-image"),
        tag: row.querySelector(".tag")!.textContent,
        digest: row.querySelector(".digest")!.textContent,
        pull: row.querySelector(".pull")!.textContent,
      })),
    );
    // The page shows repositories; "ferry:scan" is the replica's own scan report in the JSON only.
    const expected = Object.entries(status)
      .filter(([key]) => key !== "ferry:scan")
      .flatMap(([repository, repo]) =>
        repo.environments.flatMap(({ name }) =>
          repo.images.map((image) => ({
            repository,
            environment: name,
            image,
            tag: repo.running[name]?.[image]?.tag ?? "not referenced",
            digest: repo.running[name]?.[image]?.digest ?? "",
            pull: repo.pulls[name] ? `#${repo.pulls[name].number} ${repo.pulls[name].title}` : "none",
          })),
        ),
      );
    expect(rows).toEqual(expected);
    expect([...new Set(rows.map((row) => row.environment))]).toEqual(["staging", "prod"]);
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
