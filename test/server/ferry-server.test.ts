import { createHmac, generateKeyPairSync } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/core/errors.js";
import { startFerryServer, WeakWebhookSecretError, type FerryServer } from "../../src/server/ferry-server.js";
import { serverOptionsFromEnv } from "../../src/server/server-options.js";
import { UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const SECRET = "handler-test-secret";
const Octokit = UnthrottledOctokit;

function sign(body: string, secret = SECRET): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

const comment = JSON.stringify({
  action: "created",
  comment: { id: 1, body: "/promote prod", user: { login: "eve", type: "User" } },
  issue: { number: 1, state: "open", title: "Release ✨" },
  repository: { name: "config", full_name: "acme/config", default_branch: "main", owner: { login: "acme" } },
  installation: { id: 1 },
  sender: { login: "eve", type: "User" },
});

describe("ferry serve: webhook intake", () => {
  let server: FerryServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = async () =>
    (server = await startFerryServer({
      appId: 1,
      privateKey,
      webhookSecret: SECRET,
      baseUrl: "http://127.0.0.1:9",
      Octokit,
      scanIntervalMs: false,
      logLevel: "fatal",
    }));

  const post = (url: string, body: string, headers: Record<string, string>) =>
    fetch(`${url}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issue_comment",
        "x-github-delivery": "d1",
        ...headers,
      },
      body,
    });

  it("refuses to start in production with an empty or development secret", async () => {
    for (const webhookSecret of ["", "development"]) {
      await expect(
        startFerryServer({ appId: 1, privateKey, webhookSecret, production: true, scanIntervalMs: false }),
      ).rejects.toBeInstanceOf(WeakWebhookSecretError);
    }
  });

  it("answers an unsigned or wrongly signed webhook with 4xx and queues no work", async () => {
    const { url, ferry } = await start();
    const wrong = sign(comment).replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    const attempts: Record<string, string>[] = [
      {},
      { "x-hub-signature-256": wrong },
      { "x-hub-signature-256": sign(comment, "other") },
      { "x-hub-signature-256": "sha1=abc" },
    ];
    for (const headers of attempts) {
      const response = await post(url, comment, headers);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
    }
    await ferry.idle();
    expect(ferry.queue.completed).toBe(0);
    // The same delivery, correctly signed, does queue work (the control for the refusals above).
    expect((await post(url, comment, { "x-hub-signature-256": sign(comment) })).status).toBeLessThan(300);
    await ferry.idle();
    expect(ferry.queue.completed).toBe(1);
  });

  it("accepts a signature over the raw bytes but not over re-serialized JSON", async () => {
    const { url } = await start();
    const reserialized = JSON.stringify(JSON.parse(comment), null, 2);
    expect(
      (await post(url, reserialized, { "x-hub-signature-256": sign(comment) })).status,
    ).toBeGreaterThanOrEqual(400);
  });

  it("serves /healthz and Prometheus /metrics", async () => {
    const { url } = await start();
    expect(await (await fetch(`${url}/healthz`)).text()).toBe("ok\n");
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain("ferry_pull_requests_total");
    expect(metrics).toContain("ferry_webhook_bodies_in_flight 0");
  });

  it("reads its settings from the environment without echoing the key", () => {
    const options = serverOptionsFromEnv({
      APP_ID: "7",
      PRIVATE_KEY: "-----BEGIN KEY-----\\nabc",
      WEBHOOK_SECRET: "s",
      GHE_HOST: "ghe.example.com",
      FERRY_SCAN_INTERVAL: "10m",
    });
    expect(options.baseUrl).toBe("https://ghe.example.com/api/v3");
    expect(options.privateKey).toBe("-----BEGIN KEY-----\nabc");
    expect(options.scanIntervalMs).toBe(600_000);
    expect(() => serverOptionsFromEnv({ APP_ID: "7" })).toThrow(/PRIVATE_KEY/);
  });

  it("reads FERRY_INTAKE_CONNECTIONS_PER_SOURCE, and refuses one that is not a whole number of connections", () => {
    const base = { APP_ID: "7", PRIVATE_KEY: "k", WEBHOOK_SECRET: "s" };
    expect(serverOptionsFromEnv({ ...base, FERRY_INTAKE_CONNECTIONS_PER_SOURCE: "256" }).intake).toEqual({
      maxConnectionsPerSource: 256,
    });
    expect(serverOptionsFromEnv(base).intake).toBeUndefined();
    for (const text of ["0", "-1", "1.5", "many"])
      expect(() => serverOptionsFromEnv({ ...base, FERRY_INTAKE_CONNECTIONS_PER_SOURCE: text })).toThrow(
        /^FERRY_INTAKE_CONNECTIONS_PER_SOURCE must be a whole number of connections/,
      );
  });

  it("reads GitHub Enterprise Server's write limits, and refuses one that is not a whole number", () => {
    const base = { APP_ID: "7", PRIVATE_KEY: "k", WEBHOOK_SECRET: "s" };
    expect(serverOptionsFromEnv(base).githubWrites).toBeUndefined();
    expect(serverOptionsFromEnv({ ...base, FERRY_GITHUB_WRITES_PER_MINUTE: "300" }).githubWrites).toEqual({
      perMinute: 300,
    });
    expect(
      serverOptionsFromEnv({
        ...base,
        FERRY_GITHUB_WRITES_PER_MINUTE: "300",
        FERRY_GITHUB_WRITES_PER_HOUR: "5000",
      }).githubWrites,
    ).toEqual({ perMinute: 300, perHour: 5000 });
    for (const name of ["FERRY_GITHUB_WRITES_PER_MINUTE", "FERRY_GITHUB_WRITES_PER_HOUR"])
      for (const text of ["0", "2.5", "lots"])
        expect(() => serverOptionsFromEnv({ ...base, [name]: text })).toThrow(
          `${name} must be a whole number of writes, not ${JSON.stringify(text)}`,
        );
  });

  it("refuses a FERRY_SCAN_INTERVAL that would scan in a loop or overflow Node's timer, and takes off", () => {
    const base = { APP_ID: "7", PRIVATE_KEY: "k", WEBHOOK_SECRET: "s" };
    for (const text of ["0s", "500ms", "8d", "30d"]) {
      const read = (): unknown => serverOptionsFromEnv({ ...base, FERRY_SCAN_INTERVAL: text });
      expect(read).toThrow(UserError);
      expect(read).toThrow(`FERRY_SCAN_INTERVAL must be between 1s and 7d, got "${text}"`);
    }
    expect(serverOptionsFromEnv({ ...base, FERRY_SCAN_INTERVAL: "7d" }).scanIntervalMs).toBe(604_800_000);
    expect(serverOptionsFromEnv({ ...base, FERRY_SCAN_INTERVAL: "off" }).scanIntervalMs).toBe(false);
  });

  it("reads FERRY_STATUS_TOKEN and FERRY_STATUS_LISTEN, and refuses a listen address it cannot parse", () => {
    const base = { APP_ID: "7", PRIVATE_KEY: "k", WEBHOOK_SECRET: "s" };
    expect(serverOptionsFromEnv(base).status).toBeUndefined();
    expect(serverOptionsFromEnv({ ...base, FERRY_STATUS_TOKEN: "t" }).status).toEqual({ token: "t" });
    expect(serverOptionsFromEnv({ ...base, FERRY_STATUS_LISTEN: "127.0.0.1:9090" }).status).toEqual({
      listen: { host: "127.0.0.1", port: 9090 },
    });
    expect(() => serverOptionsFromEnv({ ...base, FERRY_STATUS_LISTEN: "nowhere" })).toThrow(UserError);
  });

  it("lets a config's passwordEnv read only FERRY_REGISTRY_* variables and those FERRY_REGISTRY_ENV_ALLOW adds, never the app's own secrets", () => {
    const base = {
      APP_ID: "7",
      PRIVATE_KEY: "-----BEGIN KEY-----\\nabc",
      WEBHOOK_SECRET: "s",
      FERRY_REGISTRY_WEBHOOK_GENERIC: "g",
      FERRY_STATUS_TOKEN: "st",
      FERRY_REGISTRY_PASSWORD: "p",
      GITHUB_TOKEN: "t",
      DATABASE_URL: "postgres://db",
      REGISTRY_PASSWORD: "other-tenant",
    };
    expect(Object.keys(serverOptionsFromEnv(base).ferry!.env!)).toEqual(["FERRY_REGISTRY_PASSWORD"]);
    const allowList = serverOptionsFromEnv({
      ...base,
      HARBOR_TOKEN: "h",
      FERRY_REGISTRY_ENV_ALLOW: "HARBOR_TOKEN, PRIVATE_KEY",
    }).ferry!;
    expect(Object.keys(allowList.env!).sort()).toEqual(["FERRY_REGISTRY_PASSWORD", "HARBOR_TOKEN"]);
    expect(allowList.configContext?.allowedEnv).toEqual(["HARBOR_TOKEN", "PRIVATE_KEY"]);
  });

  it("reads each secret's binding from <NAME>_HOSTS and <NAME>_OWNERS, which are settings: never a config's secret, never redacted", () => {
    const ferry = serverOptionsFromEnv({
      APP_ID: "7",
      PRIVATE_KEY: "k",
      FERRY_REGISTRY_PASSWORD: "p",
      FERRY_REGISTRY_PASSWORD_HOSTS: "registry.example.com",
      FERRY_REGISTRY_PASSWORD_OWNERS: "acme",
    }).ferry!;
    expect(Object.keys(ferry.env!)).toEqual(["FERRY_REGISTRY_PASSWORD"]);
    const bindings = ferry.configContext!.secretBindings;
    expect(bindings.kind === "bound" && bindings.byName.get("FERRY_REGISTRY_PASSWORD")).toEqual({
      hosts: ["registry.example.com"],
      owners: ["acme"],
    });
    expect(() =>
      serverOptionsFromEnv({
        APP_ID: "7",
        PRIVATE_KEY: "k",
        FERRY_REGISTRY_PASSWORD_HOSTS: "https://ghcr.io",
      }),
    ).toThrow(/FERRY_REGISTRY_PASSWORD_HOSTS: "https:\/\/ghcr.io" is not a host\[:port\]/);
  });

  it("reports missing or unreadable credentials and a weak secret as the operator's to fix, not as internal errors", async () => {
    expect(() => serverOptionsFromEnv({ APP_ID: "7" })).toThrow(UserError);
    expect(() => serverOptionsFromEnv({ APP_ID: "7", PRIVATE_KEY_PATH: "/nonexistent/ferry.pem" })).toThrow(
      /PRIVATE_KEY_PATH/,
    );
    expect(() => serverOptionsFromEnv({ APP_ID: "7", PRIVATE_KEY_PATH: "/nonexistent/ferry.pem" })).toThrow(
      UserError,
    );
    await expect(
      startFerryServer({
        appId: 1,
        privateKey: "k",
        webhookSecret: "",
        production: true,
        scanIntervalMs: false,
      }),
    ).rejects.toBeInstanceOf(UserError);
  });
});
