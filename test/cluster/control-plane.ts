/**
 * A real Kubernetes control plane for the cluster tier: etcd and kube-apiserver (built by
 * `build-control-plane.sh`) on 127.0.0.1, free ports and a temp dir, the way controller-runtime's
 * envtest runs them. The flags follow envtest's defaults
 * (kubernetes-sigs/controller-runtime `pkg/internal/testing/controlplane/apiserver.go`
 * `defaultArgs`, `etcd.go` `defaultArgs` with `--unsafe-no-fsync`), with two differences:
 * the admin identity is a static token (`--token-auth-file`, group `system:masters`) instead of
 * envtest's client-certificate authenticator, and the serving certificate is the one
 * kube-apiserver generates itself in `--cert-dir` when given none (a CA and a serving certificate
 * for the bind address), so no certificate tool is needed. The service-account signing key pair
 * comes from node:crypto.
 *
 * Stopping is SIGTERM then SIGKILL after a grace period (envtest's `process.Stop`). Children run in
 * their own process group and a watchdog shell kills both groups and removes the temp dir when the
 * test process dies without stopping them (SIGKILL, a crashed worker).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { stringify as stringifyYaml } from "yaml";

export const KUBE_VERSION = process.env.FERRY_KUBE_VERSION ?? "v1.34.4";
export const ETCD_VERSION = process.env.FERRY_ETCD_VERSION ?? "v3.6.16";

/** Where `build-control-plane.sh` puts the binaries (same defaults as the script). */
export function controlPlaneDir(): string {
  const root =
    process.env.FERRY_CONTROL_PLANE_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), ".cache"), "ferry", "control-plane");
  return path.join(root, `kube-${KUBE_VERSION}-etcd-${ETCD_VERSION}`);
}

/** Why the tier cannot run here, or undefined when both binaries are present. */
export function controlPlaneMissingMessage(): string | undefined {
  const dir = controlPlaneDir();
  const missing = ["kube-apiserver", "etcd"].filter((binary) => !existsSync(path.join(dir, binary)));
  if (missing.length === 0) return undefined;
  return `${missing.join(" and ")} missing in ${dir}: run \`npm run cluster:build\` (needs Go; about 10 min and 1.7 GB on 2 cores the first time)`;
}

/** What a test needs to reach the control plane; plain data so vitest's globalSetup can provide it. */
export interface ControlPlaneInfo {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  /** Bearer token of the admin (group system:masters). */
  adminToken: string;
}

export interface ControlPlane extends ControlPlaneInfo {
  dir: string;
  stop(): Promise<void>;
}

export function kubeconfigFor(info: ControlPlaneInfo, options: { token?: string; namespace?: string } = {}) {
  return stringifyYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "ferry-test",
        cluster: {
          server: info.url,
          "certificate-authority-data": Buffer.from(info.caPem).toString("base64"),
        },
      },
    ],
    users: [{ name: "ferry-test-user", user: { token: options.token ?? info.adminToken } }],
    contexts: [
      {
        name: "ferry-test",
        context: {
          cluster: "ferry-test",
          user: "ferry-test-user",
          ...(options.namespace ? { namespace: options.namespace } : {}),
        },
      },
    ],
    "current-context": "ferry-test",
    preferences: {},
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One HTTPS request to the API server: status and body text. */
export function apiRequest(
  info: ControlPlaneInfo,
  method: string,
  apiPath: string,
  options: { body?: unknown; token?: string; contentType?: string; timeoutMs?: number } = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(apiPath, info.url);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ca: info.caPem,
        timeout: options.timeoutMs ?? 10_000,
        headers: {
          Authorization: `Bearer ${options.token ?? info.adminToken}`,
          Accept: "application/json",
          ...(payload !== undefined
            ? {
                "Content-Type": options.contentType ?? "application/json",
                "Content-Length": Buffer.byteLength(payload),
              }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${apiPath} timed out`)));
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Mints a token for a ServiceAccount through the TokenRequest API (as `kubectl create token`). */
export async function serviceAccountToken(
  info: ControlPlaneInfo,
  namespace: string,
  name: string,
  expirationSeconds = 3600,
): Promise<string> {
  const response = await apiRequest(
    info,
    "POST",
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds } },
    },
  );
  if (response.status !== 201)
    throw new Error(`TokenRequest for ${namespace}/${name}: HTTP ${response.status} ${response.body}`);
  return (JSON.parse(response.body) as { status: { token: string } }).status.token;
}

interface Child {
  name: string;
  process: ChildProcess;
  log: string;
  exited: Promise<void>;
}

function startChild(name: string, binary: string, args: string[], dir: string): Child {
  const log = path.join(dir, `${name}.log`);
  const out = createWriteStream(log);
  // detached: its own process group, so the watchdog can kill it (and anything it forks) at once.
  const child = spawn(binary, args, { cwd: dir, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { name, process: child, log, exited };
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

async function stopChild(child: Child, graceMs = 15_000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  try {
    process.kill(-child.process.pid!, "SIGTERM");
  } catch {
    return; // already gone
  }
  let timer: NodeJS.Timeout | undefined;
  const killed = await Promise.race([
    child.exited.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs))),
  ]);
  clearTimeout(timer);
  if (killed) {
    try {
      process.kill(-child.process.pid!, "SIGKILL");
    } catch {
      // gone meanwhile
    }
    await child.exited;
  }
}

/** Kills the children's process groups and removes `dir` once `parentPid` is gone. */
function startWatchdog(parentPid: number, children: Child[], dir: string): ChildProcess {
  const groups = children.map((child) => `-${child.process.pid}`).join(" ");
  const script =
    `while kill -0 ${parentPid} 2>/dev/null; do sleep 1; done; ` +
    `kill -TERM ${groups} 2>/dev/null; sleep 5; kill -KILL ${groups} 2>/dev/null; rm -rf '${dir}'`;
  const watchdog = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
  watchdog.unref();
  return watchdog;
}

async function waitReady(info: ControlPlaneInfo, children: Child[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    const dead = children.find(
      (child) => child.process.exitCode !== null || child.process.signalCode !== null,
    );
    if (dead) throw new Error(`${dead.name} exited before the API server was ready:\n${tail(dead.log)}`);
    try {
      const response = await apiRequest(info, "GET", "/readyz", { timeoutMs: 5_000 });
      if (response.status === 200) return;
      last = `HTTP ${response.status}: ${response.body.slice(0, 500)}`;
    } catch (error) {
      last = (error as Error).message;
    }
    // Polling an external process (no event to wait for); 250 ms keeps a 2-core machine free.
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`kube-apiserver not ready after ${timeoutMs} ms (${last}):\n${tail(children[1]!.log)}`);
}

export interface StartControlPlaneOptions {
  /** Folder holding `etcd` and `kube-apiserver`; default `controlPlaneDir()`. */
  binDir?: string;
  readyTimeoutMs?: number;
}

export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const binDir = options.binDir ?? controlPlaneDir();
  const dir = mkdtempSync(path.join(tmpdir(), "ferry-control-plane-"));
  const certDir = path.join(dir, "certs");
  const [etcdClient, etcdPeer, securePort] = [await freePort(), await freePort(), await freePort()];

  const adminToken = randomBytes(24).toString("hex");
  // token,user,uid,"groups"
  writeFileSync(path.join(dir, "tokens.csv"), `${adminToken},ferry-admin,ferry-admin,"system:masters"\n`, {
    mode: 0o600,
  });
  const serviceAccountKeys = generateKeyPairSync("rsa", { modulusLength: 2048 });
  writeFileSync(
    path.join(dir, "sa.key"),
    serviceAccountKeys.privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    { mode: 0o600 },
  );
  writeFileSync(
    path.join(dir, "sa.pub"),
    serviceAccountKeys.publicKey.export({ type: "spki", format: "pem" }),
  );

  const etcdUrl = `http://127.0.0.1:${etcdClient}`;
  const peerUrl = `http://127.0.0.1:${etcdPeer}`;
  const children: Child[] = [];
  const url = `https://127.0.0.1:${securePort}`;
  const stopAll = async () => {
    for (const child of [...children].reverse()) await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  // A test process that exits without stopping (an uncaught error) still takes its children along.
  const onExit = () => {
    for (const child of children) {
      try {
        process.kill(-child.process.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);

  try {
    children.push(
      startChild(
        "etcd",
        path.join(binDir, "etcd"),
        [
          "--name=default",
          `--data-dir=${path.join(dir, "etcd")}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=default=${peerUrl}`,
          "--unsafe-no-fsync=true",
          "--log-level=warn",
        ],
        dir,
      ),
    );
    children.push(
      startChild(
        "kube-apiserver",
        path.join(binDir, "kube-apiserver"),
        [
          `--etcd-servers=${etcdUrl}`,
          `--cert-dir=${certDir}`,
          `--secure-port=${securePort}`,
          "--bind-address=127.0.0.1",
          "--advertise-address=127.0.0.1",
          "--service-cluster-ip-range=10.0.0.0/24",
          "--allow-privileged=true",
          // envtest: no controller-manager creates the `default` ServiceAccount, so the ServiceAccount
          // admission plugin would refuse every Pod.
          "--disable-admission-plugins=ServiceAccount",
          "--authorization-mode=RBAC",
          `--token-auth-file=${path.join(dir, "tokens.csv")}`,
          `--service-account-issuer=${url}`,
          `--service-account-key-file=${path.join(dir, "sa.pub")}`,
          `--service-account-signing-key-file=${path.join(dir, "sa.key")}`,
          "--profiling=false",
        ],
        dir,
      ),
    );
    startWatchdog(process.pid, children, dir);

    // kube-apiserver writes its self-signed CA and serving certificate before it listens.
    // It writes the certificate, then the key: once the key is there the certificate is whole.
    const certFile = path.join(certDir, "apiserver.crt");
    const readyTimeoutMs = options.readyTimeoutMs ?? 180_000;
    const certDeadline = Date.now() + readyTimeoutMs;
    while (!existsSync(path.join(certDir, "apiserver.key"))) {
      const dead = children.find((child) => child.process.exitCode !== null);
      if (dead) throw new Error(`${dead.name} exited at start:\n${tail(dead.log)}`);
      if (Date.now() > certDeadline)
        throw new Error(`kube-apiserver wrote no certificate:\n${tail(children[1]!.log)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const caPem = readFileSync(certFile, "utf8");
    const info: ControlPlaneInfo = { url, caPem, adminToken };
    await waitReady(info, children, readyTimeoutMs);
    return {
      ...info,
      dir,
      async stop() {
        process.removeListener("exit", onExit);
        await stopAll();
      },
    };
  } catch (error) {
    process.removeListener("exit", onExit);
    await stopAll();
    throw error;
  }
}
