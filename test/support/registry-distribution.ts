import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTokenIssuer, type TokenIssuer } from "./registry-token-issuer.js";

/**
 * Starts Debian's CNCF distribution (`docker-registry serve CONFIG`) on 127.0.0.1 with a
 * throw-away config and storage directory — never the packaged /etc/docker/registry config.
 */
export const DISTRIBUTION_BINARY = process.env.FERRY_DISTRIBUTION_BINARY ?? "/usr/bin/docker-registry";

export type DistributionAuth = "none" | "basic" | "token";

export interface RunningDistribution {
  url: string;
  host: string;
  credentials?: { username: string; password: string };
  tokenIssuer?: TokenIssuer;
  close(): Promise<void>;
}

export function distributionMissingMessage(): string | undefined {
  if (existsSync(DISTRIBUTION_BINARY)) return undefined;
  return `${DISTRIBUTION_BINARY} is missing: the registry contract suite needs CNCF distribution. Install it with \`sudo apt-get install docker-registry apache2-utils\` (.ci/run does this on CI).`;
}

export interface DistributionOptions {
  /** Notification endpoints (distribution's `notifications.endpoints`), e.g. `ferry serve`'s /registry/distribution. */
  notifications?: { url: string; headers?: Record<string, string> }[];
  /** `basic` only: extra htpasswd users (e.g. ECR's `AWS` user with a derived password). */
  users?: Record<string, string>;
  /** `token` only: another token service (e.g. a fake ACR's /oauth2/token) instead of the built-in issuer. */
  tokenService?: { realm: string; service: string; issuer: string; rootCertBundlePath: string };
}

export async function startDistribution(
  auth: DistributionAuth,
  options: DistributionOptions = {},
): Promise<RunningDistribution> {
  const missing = distributionMissingMessage();
  if (missing) throw new Error(missing);
  const dir = mkdtempSync(join(tmpdir(), "ferry-distribution-"));
  const credentials = { username: "ferry", password: "s3cret-canary-Pa55" };
  let tokenIssuer: TokenIssuer | undefined;
  let authConfig = "";
  if (auth === "basic") {
    const line = execFileSync("htpasswd", ["-Bbn", credentials.username, credentials.password], {
      encoding: "utf8",
    });
    const extra = Object.entries(options.users ?? {}).map(([user, password]) =>
      execFileSync("htpasswd", ["-Bbn", user, password], { encoding: "utf8" }).trim(),
    );
    writeFileSync(join(dir, "htpasswd"), [line.trim(), ...extra].join("\n") + "\n");
    authConfig = `auth:\n  htpasswd:\n    realm: ferry-test\n    path: ${join(dir, "htpasswd")}\n`;
  } else if (auth === "token") {
    tokenIssuer = options.tokenService
      ? undefined
      : await startTokenIssuer({ dir, users: { [credentials.username]: credentials.password } });
    const service = options.tokenService ?? tokenIssuer!;
    authConfig = `auth:\n  token:\n    realm: ${service.realm}\n    service: ${service.service}\n    issuer: ${service.issuer}\n    rootcertbundle: ${service.rootCertBundlePath}\n`;
  }
  if (options.notifications?.length) {
    authConfig += `notifications:\n  endpoints:\n${options.notifications
      .map(
        (endpoint, index) =>
          `    - name: ferry-${index}\n      url: ${endpoint.url}\n      timeout: 2s\n      threshold: 5\n      backoff: 200ms\n` +
          (endpoint.headers
            ? `      headers:\n${Object.entries(endpoint.headers)
                .map(([key, value]) => `        ${key}: [${JSON.stringify(value)}]\n`)
                .join("")}`
            : ""),
      )
      .join("")}`;
  }
  for (let attempt = 0; ; attempt += 1) {
    const port = await freePort();
    const config = join(dir, "config.yml");
    writeFileSync(
      config,
      `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, "data")}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n  secret: ferry-test-secret\n${authConfig}`,
    );
    const child = spawn(DISTRIBUTION_BINARY, ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const url = `http://127.0.0.1:${port}`;
    if (await waitUntilServing(url, child)) {
      return {
        url,
        host: `127.0.0.1:${port}`,
        ...(auth === "none" ? {} : { credentials }),
        ...(tokenIssuer ? { tokenIssuer } : {}),
        close: async () => {
          await stop(child);
          await tokenIssuer?.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    await stop(child);
    // The port may have been taken between probing and binding: try another a few times.
    if (attempt >= 3) {
      await tokenIssuer?.close();
      throw new Error(`docker-registry did not start: ${stderr.slice(-2000)}`);
    }
  }
}

/** A loopback port free at the time of asking (a listener may still take it before the caller binds). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilServing(url: string, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    try {
      const response = await fetch(`${url}/v2/`);
      await response.arrayBuffer();
      if (response.status === 200 || response.status === 401) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 2000).unref();
  });
}
