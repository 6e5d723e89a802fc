/**
 * N `ferry serve` replicas as real child processes sharing one GitHub emulator with many
 * installations, each holding its Lease in a Kubernetes API server (the real one, or the
 * simulator). Every replica talks to GitHub through its own recording proxy, so a test can tell
 * exactly which replica read which installation in which scan round; and to the API server
 * through its own TCP proxy, so a test can cut one replica off.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  startGitHubEmulator,
  type GitHubEmulator,
  accounts,
} from "../../packages/sandbox/src/github/index.js";
import { startTcpProxy, type TcpProxy } from "../cluster/contract/tcp-proxy.js";
import { startHttpRecordingProxy, type HttpRecordingProxy } from "./http-recording-proxy.js";

const ROOT = join(import.meta.dirname, "..", "..");

export interface FleetOptions {
  installations: number;
  /** The API server every replica holds its Lease in (through its own TCP proxy). */
  apiServerUrl: string;
  /** Kubeconfig YAML for a server URL (the replicas' identity: a ServiceAccount token). */
  kubeconfigFor: (serverUrl: string) => string;
  namespace: string;
  scanInterval: string;
  leaseDuration: string;
  /** Extra environment for every replica. */
  env?: Record<string, string>;
}

export interface Replica {
  name: string;
  url: string;
  process: ChildProcess;
  github: HttpRecordingProxy;
  apiServer: TcpProxy;
  /** What it printed (Probot logs to stdout, membership to stderr), the last 20 kB of each. */
  output: () => string;
  exited: Promise<void>;
}

/** One scan round of one replica, as seen at GitHub: the installations it read, in order. */
export interface ObservedRound {
  replica: string;
  startedAt: number;
  /** When the next round of the same replica started; undefined while it may still be running. */
  endedAt: number | undefined;
  installations: number[];
}

export interface ScanFleet {
  emu: GitHubEmulator;
  installationIds: number[];
  replicas: Map<string, Replica>;
  start(name: string): Promise<Replica>;
  /** SIGKILL: no goodbye, its Lease is left to expire. */
  kill(name: string): Promise<void>;
  /** Rounds of one replica (also those of earlier processes under the same name). */
  rounds(name: string): ObservedRound[];
  /** Installation reads of one replica since `at` (epoch ms). */
  readsSince(name: string, at: number): { installation: number; at: number }[];
  metric(name: string, metric: string): Promise<number | undefined>;
  close(): Promise<void>;
}

export async function startScanFleet(options: FleetOptions): Promise<ScanFleet> {
  const emu = await startGitHubEmulator();
  const app = accounts.createApp(emu, {
    slug: "ferry",
    permissions: { contents: "write", pull_requests: "write" },
  });
  const installationIds: number[] = [];
  for (let i = 0; i < options.installations; i++) {
    const org = `org-${String(i).padStart(4, "0")}`;
    accounts.createOrg(emu, org);
    installationIds.push(accounts.installApp(emu, app.id, org).id);
  }
  const dir = mkdtempSync(join(tmpdir(), "ferry-fleet-"));
  const replicas = new Map<string, Replica>();
  // Every process that ever ran under a name keeps its log: a restart continues the name's record.
  const logs = new Map<string, HttpRecordingProxy[]>();

  const installationOf = (authorization: string | undefined): number | undefined => {
    const token = authorization?.replace(/^(token|bearer)\s+/i, "");
    return token ? emu.installationTokens.get(token)?.installationId : undefined;
  };

  const start = async (name: string): Promise<Replica> => {
    const github = await startHttpRecordingProxy(emu.apiUrl);
    logs.set(name, [...(logs.get(name) ?? []), github]);
    const apiServer = await startTcpProxy(new URL(options.apiServerUrl));
    const kubeconfig = join(dir, `${name}.kubeconfig`);
    writeFileSync(kubeconfig, options.kubeconfigFor(apiServer.url), { mode: 0o600 });
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "src/cli.ts",
        "serve",
        "--kubeconfig",
        kubeconfig,
        "--port",
        "0",
        "--host",
        "127.0.0.1",
      ],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          APP_ID: String(app.id),
          PRIVATE_KEY: app.privateKey,
          WEBHOOK_SECRET: "fleet-test-secret",
          GITHUB_API_URL: github.url,
          FERRY_SCAN_INTERVAL: options.scanInterval,
          FERRY_LEASE_DURATION: options.leaseDuration,
          FERRY_LEASE_NAMESPACE: options.namespace,
          FERRY_MEMBER_NAME: name,
          LOG_LEVEL: "warn",
          ...options.env,
        },
      },
    );
    let stderr = "";
    let stdout = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
    child.stdout!.on("data", (chunk: Buffer) => (stdout = (stdout + chunk.toString()).slice(-20_000)));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on("data", () => {
        const match = /ferry serving on (\S+)/.exec(stdout);
        if (match) resolve(match[1]!);
      });
      void exited.then(() => reject(new Error(`replica ${name} exited at start:\n${stderr}`)));
    });
    const output = () => `${stdout}\n${stderr}`;
    const replica: Replica = { name, url, process: child, github, apiServer, output, exited };
    replicas.set(name, replica);
    return replica;
  };

  const rounds = (name: string): ObservedRound[] => {
    const result: ObservedRound[] = [];
    for (const proxy of logs.get(name) ?? []) {
      let current: ObservedRound | undefined;
      for (const exchange of proxy.recorded) {
        const path = exchange.path.replace(/^\/api\/v3/, "");
        // A round starts with the first page of the installation list.
        if (
          exchange.method === "GET" &&
          path.startsWith("/app/installations?") &&
          !/[?&]page=(?!1\b)/.test(path)
        ) {
          if (current) current.endedAt = exchange.at;
          current = { replica: name, startedAt: exchange.at, endedAt: undefined, installations: [] };
          result.push(current);
        } else if (exchange.method === "GET" && path.startsWith("/installation/repositories")) {
          const installation = installationOf(exchange.authorization);
          if (current && installation !== undefined) current.installations.push(installation);
        }
      }
    }
    return result;
  };

  return {
    emu,
    installationIds,
    replicas,
    start,
    async kill(name) {
      const replica = replicas.get(name)!;
      replica.process.kill("SIGKILL");
      await replica.exited;
      replicas.delete(name);
      await replica.apiServer.close();
    },
    rounds,
    readsSince(name, at) {
      return (logs.get(name) ?? []).flatMap((proxy) =>
        proxy.recorded
          .filter((e) => e.at >= at && e.method === "GET" && /\/installation\/repositories/.test(e.path))
          .map((e) => ({ installation: installationOf(e.authorization)!, at: e.at }))
          .filter((read) => read.installation !== undefined),
      );
    },
    async metric(name, metric) {
      const replica = replicas.get(name);
      if (!replica) return undefined;
      try {
        const text = await (await fetch(`${replica.url}/metrics`)).text();
        const line = text.split("\n").find((l) => l.startsWith(`${metric} `));
        return line ? Number(line.split(" ")[1]) : undefined;
      } catch {
        return undefined;
      }
    },
    async close() {
      for (const replica of replicas.values()) {
        replica.process.kill("SIGTERM");
        await replica.exited;
        await replica.apiServer.close();
      }
      for (const proxies of logs.values()) for (const proxy of proxies) await proxy.close();
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` (external processes: there is no event to wait on) until it holds or `timeoutMs` passes. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
