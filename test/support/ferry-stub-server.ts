/**
 * Ferry's real server (`startFerryServer`: Probot webhooks + registry receivers) in front of a
 * GitHub API stub that only counts calls. Every call after start-up is a side effect of some
 * request: a refused webhook must cause none. Every credential carries the canary.
 */
import { generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { startFerryServer, type FerryServer } from "../../src/server/ferry-server.js";
import type { CanaryWatch } from "./canary.js";
import type { RouteSecrets } from "./webhook-attacks.js";

export interface StubbedFerry {
  ferry: FerryServer;
  secrets: RouteSecrets;
  /** GitHub API calls made by Ferry, in order (`METHOD path`). */
  githubCalls: string[];
  /** GitHub API calls whose answer the stub has not sent yet. */
  githubCallsInFlight(): number;
  /** Registry hints that reached Ferry after coalescing (Ferry's own `ferry_registry_hints_total`). */
  hints(): Promise<number>;
  logs: string[];
  close(): Promise<void>;
}

export async function startStubbedFerry(
  canary: CanaryWatch,
  options: { installationsDelayMs?: number } = {},
): Promise<StubbedFerry> {
  const githubCalls: string[] = [];
  let inFlight = 0;
  const stub: Server = createServer(async (req, res) => {
    githubCalls.push(`${req.method} ${req.url}`);
    req.resume();
    inFlight++;
    // A slow installations listing stands in for a slow GitHub.
    if (req.url?.startsWith("/app/installations") && options.installationsDelayMs)
      await new Promise((resolve) => setTimeout(resolve, options.installationsDelayMs));
    // Empty but well-formed answers: installations list, app, tokens.
    const url = req.url ?? "";
    const body =
      url.startsWith("/app/installations") && req.method === "GET"
        ? "[]"
        : url === "/app"
          ? '{"slug":"ferry","id":1}'
          : "{}";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
    inFlight--;
  });
  await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve));
  const stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;

  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  canary.plant(pem, "app private key");
  const secrets: RouteSecrets = {
    distribution: canary.secret("distribution-auth"),
    harbor: canary.secret("harbor-auth"),
    dockerhub: canary.secret("dockerhubtoken"),
    quay: canary.secret("quaytoken"),
    generic: canary.secret("generic-hmac"),
    github: canary.secret("github-webhook-secret"),
  };
  const logs: string[] = [];
  const ferry = await startFerryServer({
    appId: 1,
    privateKey: pem,
    webhookSecret: secrets.github,
    baseUrl: stubUrl,
    registrySecrets: {
      distribution: secrets.distribution,
      harbor: secrets.harbor,
      dockerhub: secrets.dockerhub,
      quay: secrets.quay,
      generic: secrets.generic,
    },
    registryCoalesceMs: 0,
    scanIntervalMs: false,
    production: true,
    // Debug level: the most a misconfigured deployment would log.
    log: pino({ level: "debug" }, canary.sink("probot log", logs)),
    ferry: {
      registryFor: () => ({
        listTags: async () => [],
        resolveDigest: async () => "",
        describe: async () => {
          throw new Error("unused");
        },
      }),
    },
  });
  // Start-up calls (the app looking up its own slug) are not side effects of any webhook.
  await ferry.idle();
  return {
    ferry,
    secrets,
    githubCalls,
    githubCallsInFlight: () => inFlight,
    async hints() {
      const metric = await ferry.metrics.getSingleMetric("ferry_registry_hints_total")?.get();
      return metric?.values[0]?.value ?? 0;
    },
    logs,
    async close() {
      await ferry.close();
      await new Promise<void>((resolve) => {
        stub.close(() => resolve());
        stub.closeAllConnections();
      });
    },
  };
}
