/**
 * What the cluster contract suite needs from a backend: an admin kubeconfig and the few things
 * only the backend itself can do. Everything else (drift, reads, kubectl) goes through the same
 * HTTP API on both backends, so one suite proves the simulator behaves like kube-apiserver.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { KubeCluster } from "../../../src/adapters/kubernetes/kube-cluster.js";
import type { KubeObject } from "../../../src/reconciler/types.js";

export interface AdmissionRejection {
  /** API group of the resource ("" for the core group). */
  group: string;
  version: string;
  /** Plural resource name, e.g. `configmaps`. */
  resource: string;
  namespace: string;
  name: string;
  /** The message the API server answers with. */
  message: string;
}

export interface ClusterBackend {
  readonly name: string;
  /** Kubeconfig YAML of an identity that may do anything. */
  kubeconfig(): string;
  /**
   * Makes the API server refuse creates and updates of one object with HTTP 422, as an admission
   * policy does (dry-runs included); resolves once the refusal is in force. Returns its undo.
   */
  rejectWrites(rejection: AdmissionRejection): Promise<() => Promise<void>>;
  /**
   * A kubeconfig for a ServiceAccount the test created, authorized only by RBAC. Undefined when
   * the backend does no authorization (the simulator: every request with the token is allowed).
   */
  serviceAccountKubeconfig?(namespace: string, name: string): Promise<string>;
  close(): Promise<void>;
}

const run = promisify(execFile);

/** kubectl (the machine's, /usr/bin/kubectl) with a throw-away kubeconfig, cache and HOME. */
export class Kubectl {
  private readonly dir = mkdtempSync(path.join(tmpdir(), "ferry-kubectl-"));
  readonly kubeconfigFile = path.join(this.dir, "kubeconfig");

  constructor(kubeconfig: string) {
    writeFileSync(this.kubeconfigFile, kubeconfig, { mode: 0o600 });
  }

  async run(
    args: string[],
    options: { stdin?: string; env?: Record<string, string> } = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const child = run(
        "kubectl",
        ["--kubeconfig", this.kubeconfigFile, "--cache-dir", path.join(this.dir, "cache"), ...args],
        { env: { PATH: process.env.PATH ?? "", HOME: this.dir, ...options.env }, timeout: 60_000 },
      );
      if (options.stdin !== undefined) {
        child.child.stdin!.end(options.stdin);
      }
      const { stdout, stderr } = await child;
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return {
        code: typeof e.code === "number" ? e.code : 1,
        stdout: e.stdout ?? "",
        stderr: e.stderr ?? "",
      };
    }
  }

  /** Runs kubectl and throws with its stderr unless it exits 0. */
  async ok(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<string> {
    const result = await this.run(args, options);
    if (result.code !== 0)
      throw new Error(`kubectl ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Reads an object as the admin; undefined when absent. */
export async function readObject(
  admin: KubeCluster,
  apiVersion: string,
  kind: string,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> {
  const slash = apiVersion.lastIndexOf("/");
  const group = slash === -1 ? "" : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  return admin.get({ group, version, kind, namespace, name });
}

/**
 * Polls `read` until `predicate` holds (the effect of a watch or a timed cycle in another part of
 * the process, which has no event to await here); fails with the last value after `timeoutMs`.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  predicate: (value: T) => boolean,
  timeoutMs = 30_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (predicate(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
}
