/**
 * The kustomize renderer as a bounded child process: `kubectl kustomize DIR`, or `kustomize build
 * DIR` when kubectl is absent, with the load restrictor kustomize defaults to spelled out (files
 * outside a kustomization's root are refused), a kill timeout, an output cap and, on Linux, an
 * data limit (`ulimit -d`, RLIMIT_DATA, in a `/bin/sh` wrapper: no root needed). Elsewhere the memory
 * limit is not enforced and `memoryLimitEnforced()` says so (the reconciler logs it at start).
 * Every render, kustomize's or helm's, runs here, with Ferry's filtering proxy as its only network
 * (render-environment.ts; docs/security.md, "Render network").
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startFilteringProxy } from "../egress/filtering-proxy.js";
import { UserError } from "../../core/errors.js";
import {
  confinementScript,
  confinementVariables,
  rendererEnv,
  scrubbedExec,
} from "../../reconciler/render-environment.js";

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
  /** What failures are reported as (default `kustomize build`). */
  failureName?: string;
}

/** The Helm release `.ci/run` builds and the container image ships (`helm template` only). */
export const PINNED_HELM = "v3.22.0";

export const MISSING_HELM_HELP =
  `helm is not on PATH: install helm ${PINNED_HELM} (https://helm.sh/docs/intro/install/, ` +
  `or go install helm.sh/helm/v3/cmd/helm@${PINNED_HELM})`;

/** The sops release the reconciler decrypts with (sops-decrypt.ts), built from its Go module like helm. */
export const PINNED_SOPS = "v3.13.3";

export const MISSING_SOPS_HELP =
  `sops is not on PATH: install sops ${PINNED_SOPS} (https://github.com/getsops/sops/releases, ` +
  `or go install github.com/getsops/sops/v3/cmd/sops@${PINNED_SOPS})`;

/** The age release whose `age-keygen` the tests make keys with (provision.sh builds it). */
export const PINNED_AGE = "v1.3.2";

export const MISSING_AGE_KEYGEN_HELP = `age-keygen is not on PATH: the SOPS tests make their keys with it (go install filippo.io/age/cmd/age-keygen@${PINNED_AGE})`;

export interface HelmTemplateOptions {
  /** The release name (`.Release.Name`). */
  release: string;
  /** `.Release.Namespace`; helm's default when absent. */
  namespace?: string;
  /** Absolute paths of values files, applied in order after the chart's own values.yaml. */
  valuesFiles: readonly string[];
}

/**
 * `helm template` on a chart folder, offline: dependencies come from the chart's `charts/` folder
 * as committed (no `--dependency-update`, so nothing is downloaded; see
 * https://helm.sh/docs/helm/helm_template/), and API versions are not looked up in a cluster.
 */
export function helmRenderer(command: string, options: HelmTemplateOptions): Renderer {
  return {
    name: "helm template",
    failureName: "helm template",
    command,
    args: (folder) => [
      "template",
      options.release,
      folder,
      ...(options.namespace !== undefined ? ["--namespace", options.namespace] : []),
      ...options.valuesFiles.flatMap((file) => ["--values", file]),
    ],
  };
}

/**
 * With `helm`, a kustomization's `helmCharts` are inflated by that binary (`--enable-helm`); their
 * remote `repo`s are refused by the input check (also under an allowed prefix), and local charts come from
 * `helmGlobals.chartHome` (default `charts/`) inside the repo.
 */
function helmFlags(helm: string | undefined): string[] {
  return helm !== undefined ? ["--enable-helm", "--helm-command", helm] : [];
}

export function kubectlRenderer(command = "kubectl", helm?: string): Renderer {
  return {
    name: "kubectl kustomize",
    command,
    args: (folder) => [
      "kustomize",
      "--load-restrictor",
      "LoadRestrictionsRootOnly",
      ...helmFlags(helm),
      folder,
    ],
  };
}

export function kustomizeRenderer(command = "kustomize", helm?: string): Renderer {
  return {
    name: "kustomize build",
    command,
    args: (folder) => ["build", "--load-restrictor", "LoadRestrictionsRootOnly", ...helmFlags(helm), folder],
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
  /**
   * The renderer's data limit in bytes (RLIMIT_DATA: heap and private writable mappings). Not an
   * address-space limit: Go reserves far more address space than it uses (kubectl needs ~700 MiB
   * of it to print one ConfigMap, kustomize 1.7 GiB for a render using 140 MiB), so RLIMIT_AS
   * refuses genuine renders while RLIMIT_DATA tracks what is really used.
   */
  memoryLimitBytes: number;
}

export const DEFAULT_RENDERER_LIMITS: RendererLimits = {
  timeoutMs: 60_000,
  maxOutputBytes: 10 * 1024 * 1024,
  memoryLimitBytes: 384 * 1024 * 1024,
};

/** The shell wrapper's exit codes: `ulimit -d` failed; the command is not on PATH (POSIX). */
const ULIMIT_FAILED = 125;
const NOT_FOUND = 127;
const OUT_OF_MEMORY = /out of memory|cannot allocate memory|bad_alloc|failed to reserve|cannot reserve/i;

export interface RendererEnvironment {
  /**
   * Where the renderer's few variables come from (`RENDERER_ENV`: PATH, HOME…); this process's
   * own when absent. Whatever else it holds never reaches the renderer.
   */
  env?: NodeJS.ProcessEnv;
  /** What the render proxy admits; render-folder.ts always gives none (remote bases are fetched by Ferry, remote-bases.ts). */
  allowedPrefixes: readonly string[];
  /** Tests only: the render proxy may reach loopback and private addresses. */
  allowPrivateAddressesForTests?: boolean;
}

/**
 * The `/bin/sh` wrapper: drops the tokens and confines the network (render-environment.ts), sets
 * the data limit (Linux), then execs the renderer.
 */
function wrapperScript(confinement: Record<string, string>): string {
  const lines = confinementScript(confinement);
  if (memoryLimitEnforced()) lines.push(`ulimit -d "$1" || exit ${ULIMIT_FAILED}`);
  lines.push("shift", scrubbedExec(Object.keys(confinement)));
  return lines.join("\n");
}

/**
 * Runs the first of `renderers` that is installed on `folder` and returns its stdout. Killed past
 * the timeout or the output cap; a renderer that runs out of its memory limit is reported as such.
 * The renderer's only network is a filtering proxy started for this render and stopped after it;
 * a failure says what the proxy refused.
 */
export async function runRenderer(
  renderers: Renderer[],
  folder: string,
  limits: RendererLimits,
  environment: RendererEnvironment,
  missingHelp: string = MISSING_RENDERER_HELP,
): Promise<string> {
  const proxy = await startFilteringProxy({
    allowedPrefixes: environment.allowedPrefixes,
    ...(environment.allowPrivateAddressesForTests ? { allowPrivateAddressesForTests: true } : {}),
  });
  const home = await mkdtemp(path.join(tmpdir(), "ferry-render-home-"));
  const confinement = confinementVariables(proxy.url, home, environment.allowedPrefixes);
  try {
    for (const renderer of renderers) {
      // Inherited (then scrubbed by the wrapper) when absent: only entry points read the environment.
      const env = environment.env ? rendererEnv(environment.env) : undefined;
      const output = await runOne(renderer, folder, limits, env, confinement);
      if (output !== undefined) return output;
    }
  } catch (error) {
    const refused = proxy.refusals();
    if (error instanceof UserError && refused.length > 0)
      throw new UserError(error.code, `${error.message}; the render proxy refused ${refused.join("; ")}`, {
        cause: error,
      });
    throw error;
  } finally {
    await proxy.close();
    await rm(home, { recursive: true, force: true });
  }
  throw new UserError("renderer-missing", missingHelp);
}

/** undefined when the renderer is not installed. */
function runOne(
  renderer: Renderer,
  folder: string,
  limits: RendererLimits,
  env: NodeJS.ProcessEnv | undefined,
  confinement: Record<string, string>,
): Promise<string | undefined> {
  const mib = Math.round(limits.memoryLimitBytes / (1024 * 1024));
  const what = renderer.failureName ?? "kustomize build";
  const args = [
    "-c",
    wrapperScript(confinement),
    "ferry-render",
    String(Math.floor(limits.memoryLimitBytes / 1024)),
    renderer.command,
    ...renderer.args(folder),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", args, {
      stdio: ["ignore", "pipe", "pipe"],
      ...(env ? { env } : {}),
    });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let stderr = "";
    let failure: UserError | undefined;
    const stop = (error: UserError) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(
      () => stop(new UserError("render-timeout", `${what} timed out after ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.maxOutputBytes)
        stop(new UserError("render-too-large", `${what} output exceeds ${limits.maxOutputBytes} bytes`));
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
      else if (code === NOT_FOUND && bytes === 0 && /not found|No such file/.test(stderr)) resolve(undefined);
      else if (code === ULIMIT_FAILED)
        reject(new UserError("render-failed", `cannot limit ${renderer.name} to ${mib} MiB: ${tail}`));
      else if (code !== 0 && OUT_OF_MEMORY.test(stderr))
        reject(
          new UserError(
            "render-out-of-memory",
            `${what} ran out of its ${mib} MiB memory limit and was stopped (a YAML alias bomb, or raise --render-memory-limit)`,
          ),
        );
      else if (code !== 0)
        reject(
          new UserError(
            "render-failed",
            `${what} failed${signal ? ` (${signal})` : ""}: ${tail.slice(0, 1000)}`,
          ),
        );
      else resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}
