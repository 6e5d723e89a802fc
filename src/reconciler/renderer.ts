/**
 * The kustomize renderer as a bounded child process: `kubectl kustomize DIR`, or `kustomize build
 * DIR` when kubectl is absent, with the load restrictor kustomize defaults to spelled out (files
 * outside a kustomization's root are refused), a kill timeout, an output cap and, on Linux, an
 * address-space limit (`ulimit -v` in a `/bin/sh` wrapper: no root needed). Elsewhere the memory
 * limit is not enforced and `memoryLimitEnforced()` says so.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { UserError } from "../core/errors.js";

/** The kustomize release `.ci/run` installs when neither tool is present. */
export const PINNED_KUSTOMIZE = "v5.8.2";

export const MISSING_RENDERER_HELP =
  "neither kubectl nor kustomize is on PATH: install kubectl (https://kubernetes.io/docs/tasks/tools/) " +
  `or kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/, or go install sigs.k8s.io/kustomize/kustomize/v5@${PINNED_KUSTOMIZE})`;

export interface Renderer {
  /** `kubectl kustomize` or `kustomize build`, for messages. */
  name: string;
  command: string;
  args(folder: string): string[];
}

export function kubectlRenderer(command = "kubectl"): Renderer {
  return {
    name: "kubectl kustomize",
    command,
    args: (folder) => ["kustomize", "--load-restrictor", "LoadRestrictionsRootOnly", folder],
  };
}

export function kustomizeRenderer(command = "kustomize"): Renderer {
  return {
    name: "kustomize build",
    command,
    args: (folder) => ["build", "--load-restrictor", "LoadRestrictionsRootOnly", folder],
  };
}

/** The first executable called `name` on `searchPath`, or undefined. */
export function findExecutable(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** kubectl when it is on PATH, else kustomize, else undefined. */
export function findRenderer(searchPath: string | undefined): Renderer | undefined {
  const kubectl = findExecutable("kubectl", searchPath);
  if (kubectl) return kubectlRenderer(kubectl);
  const kustomize = findExecutable("kustomize", searchPath);
  return kustomize ? kustomizeRenderer(kustomize) : undefined;
}

export function memoryLimitEnforced(): boolean {
  return process.platform === "linux";
}

export interface RendererLimits {
  timeoutMs: number;
  /** Bytes of stdout kept; more kills the renderer. */
  maxOutputBytes: number;
  /** The renderer's address-space limit in bytes (Go's runtime alone reserves ~700 MiB). */
  memoryLimitBytes: number;
}

export const DEFAULT_RENDERER_LIMITS: RendererLimits = {
  timeoutMs: 60_000,
  maxOutputBytes: 10 * 1024 * 1024,
  memoryLimitBytes: 1024 * 1024 * 1024,
};

/** The shell wrapper's exit code when `ulimit -v` itself fails. */
const ULIMIT_FAILED = 125;
const OUT_OF_MEMORY = /out of memory|cannot allocate memory|bad_alloc|failed to reserve|cannot reserve/i;

/**
 * Runs the renderer on `folder` and returns its stdout. Killed past the timeout or the output
 * cap; a renderer that runs out of its memory limit is reported as such.
 */
export function runRenderer(
  renderer: Renderer,
  folder: string,
  limits: RendererLimits,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const mib = Math.round(limits.memoryLimitBytes / (1024 * 1024));
  const [command, args] = memoryLimitEnforced()
    ? [
        "/bin/sh",
        [
          "-c",
          `ulimit -v "$1" || exit ${ULIMIT_FAILED}; shift; exec "$@"`,
          "ferry-render",
          String(Math.floor(limits.memoryLimitBytes / 1024)),
          renderer.command,
          ...renderer.args(folder),
        ],
      ]
    : [renderer.command, renderer.args(folder)];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let stderr = "";
    let failure: UserError | undefined;
    const stop = (error: UserError) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(
      () => stop(new UserError("render-timeout", `kustomize build timed out after ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.maxOutputBytes)
        stop(new UserError("render-too-large", `kustomize output exceeds ${limits.maxOutputBytes} bytes`));
      else chunks.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(
        new UserError("render-failed", `cannot run ${renderer.name}: ${error.message}`, { cause: error }),
      );
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const tail = stderr.trim().split("\n").slice(-3).join(" ");
      if (failure) reject(failure);
      else if (code === ULIMIT_FAILED && memoryLimitEnforced())
        reject(new UserError("render-failed", `cannot limit ${renderer.name} to ${mib} MiB: ${tail}`));
      else if (code !== 0 && OUT_OF_MEMORY.test(stderr))
        reject(
          new UserError(
            "render-out-of-memory",
            `kustomize build ran out of its ${mib} MiB memory limit and was stopped (a YAML alias bomb, or raise --render-memory-limit)`,
          ),
        );
      else if (code === 127 && memoryLimitEnforced())
        reject(new UserError("render-failed", `cannot run ${renderer.name}: ${tail}`));
      else if (code !== 0)
        reject(
          new UserError(
            "render-failed",
            `kustomize build failed${signal ? ` (${signal})` : ""}: ${tail.slice(0, 1000)}`,
          ),
        );
      else resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}
