/**
 * The render step: a checked-out folder → validated objects. A folder with a kustomization file
 * has its inputs checked (kustomize-inputs.ts), then goes through kustomize as a bounded child
 * process (renderer.ts); a folder with a `Chart.yaml` (and no kustomization) has its inputs checked
 * (chart-inputs.ts) and goes through `helm template` the same way; any other folder is read as
 * plain manifests, recursively, in sorted order.
 */
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { UserError } from "../core/errors.js";
import { KUSTOMIZATION_FILE_NAMES } from "../core/kustomize/kustomization-references.js";
import { checkKustomizeInputs, type InputLimits } from "./kustomize-inputs.js";
import {
  DEFAULT_RENDER_LIMITS,
  parseManifests,
  RenderBudget,
  type RenderedObject,
  type RenderLimits,
} from "./parse-manifests.js";
import type { ChartArchiveLimits } from "./chart-archive.js";
import type { ChartDependencyPin } from "./chart-dependencies.js";
import type { ChartRegistry } from "./ports.js";
import { CHART_SOURCE_FILE, renderChart, renderChartSource } from "./render-chart.js";
import { rendererEnv } from "./render-environment.js";
import {
  DEFAULT_RENDERER_LIMITS,
  kubectlRenderer,
  kustomizeRenderer,
  runRenderer,
  type Renderer,
} from "./renderer.js";

export const KUSTOMIZATION_FILES = KUSTOMIZATION_FILE_NAMES;
const MANIFEST_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

export interface RenderOptions {
  limits?: Partial<RenderLimits>;
  /** The kubectl binary for `kubectl kustomize`. */
  kubectl?: string;
  /** The renderer to run; kubectl, else kustomize, from PATH when neither this nor `kubectl` is set. */
  renderer?: Renderer;
  kustomizeTimeoutMs?: number;
  /** The renderer's memory (data) limit in bytes (`--render-memory-limit`). */
  memoryLimitBytes?: number;
  /** Limits on what kustomize would read, checked before it runs. */
  inputLimits?: Partial<InputLimits>;
  /** `--allow-remote-base` prefixes; remote resources are refused without one. */
  allowRemoteBases?: readonly string[];
  /** Tests only: the render proxy may reach loopback and private addresses (a local remote base). */
  allowPrivateAddressesForTests?: boolean;
  /** The renderer's environment (PATH, HOME… tokens are dropped); the process's own when absent. */
  env?: NodeJS.ProcessEnv;
  /**
   * A chart folder (with `Chart.yaml`) is rendered by `helm template` with these repo-relative
   * values files after the chart's own values.yaml (`--helm-values`).
   */
  helmValues?: readonly string[];
  /** `.Release.Namespace` for a chart (the reconciler's namespace). */
  helmNamespace?: string;
  /** The helm binary; `helm` from PATH when absent. */
  helm?: string;
  /**
   * Where a chart's `oci://` dependencies are downloaded from (chart-dependencies.ts); without it
   * they must be committed in the chart's `charts/` folder.
   */
  chartRegistry?: ChartRegistry;
  /** Limits on each downloaded chart archive. */
  chartArchiveLimits?: ChartArchiveLimits;
}

/**
 * Resolves `relative` inside `root` and refuses anything that escapes it, including by symlink
 * (Argo CD keeps out-of-bounds symlinks off for the same reason).
 */
export async function resolveInside(root: string, relative: string): Promise<string> {
  const realRoot = await realpath(root);
  const candidate = path.resolve(realRoot, relative);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    throw new UserError(
      "path-not-found",
      `path ${JSON.stringify(relative)} does not exist in the config repo`,
    );
  }
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
    throw new UserError("path-outside-repo", `path ${JSON.stringify(relative)} leaves the config repo`);
  }
  return real;
}

export async function renderPath(
  root: string,
  relative: string,
  options: RenderOptions = {},
): Promise<RenderedObject[]> {
  return (await renderPathWithSources(root, relative, options)).objects;
}

/** What a render produced: the objects, and the chart dependencies it downloaded (pinned by digest). */
export interface RenderResult {
  objects: RenderedObject[];
  charts: ChartDependencyPin[];
}

export async function renderPathWithSources(
  root: string,
  relative: string,
  options: RenderOptions = {},
): Promise<RenderResult> {
  const limits = { ...DEFAULT_RENDER_LIMITS, ...options.limits };
  const folder = await resolveInside(root, relative);
  const budget = new RenderBudget(limits);
  if (!(await stat(folder)).isDirectory()) {
    return {
      objects: parseManifests(await readCapped(folder, limits.maxBytes), relative, budget),
      charts: [],
    };
  }
  const entries = await readdir(folder);
  const rendererLimits = {
    timeoutMs: options.kustomizeTimeoutMs ?? DEFAULT_RENDERER_LIMITS.timeoutMs,
    maxOutputBytes: limits.maxBytes,
    memoryLimitBytes: options.memoryLimitBytes ?? DEFAULT_RENDERER_LIMITS.memoryLimitBytes,
  };
  if (entries.includes(CHART_SOURCE_FILE) && !entries.includes("Chart.yaml")) {
    const valuesFiles: string[] = [];
    for (const file of options.helmValues ?? []) valuesFiles.push(await resolveInside(root, file));
    return renderChartSource(
      root,
      folder,
      relative,
      valuesFiles,
      options,
      rendererLimits,
      budget,
      resolveInside,
    );
  }
  if (entries.includes("Chart.yaml") && !KUSTOMIZATION_FILES.some((name) => entries.includes(name))) {
    const valuesFiles: string[] = [];
    for (const file of options.helmValues ?? []) valuesFiles.push(await resolveInside(root, file));
    return renderChart(root, folder, relative, valuesFiles, options, rendererLimits, budget);
  }
  if (KUSTOMIZATION_FILES.some((name) => entries.includes(name))) {
    await checkKustomizeInputs(root, folder, {
      ...(options.inputLimits ? { limits: options.inputLimits } : {}),
      ...(options.allowRemoteBases ? { allowRemoteBases: options.allowRemoteBases } : {}),
      ...(options.allowPrivateAddressesForTests ? { allowPrivateAddressesForTests: true } : {}),
    });
    // helmCharts are inflated by helm from the renderer's PATH (kustomize says so when it is missing).
    const helm = options.helm ?? "helm";
    const renderers = options.renderer
      ? [options.renderer]
      : options.kubectl
        ? [kubectlRenderer(options.kubectl, helm)]
        : [kubectlRenderer(undefined, helm), kustomizeRenderer(undefined, helm)];
    const output = await runRenderer(renderers, folder, rendererLimits, {
      ...(options.env ? { env: rendererEnv(options.env) } : {}),
      allowedPrefixes: options.allowRemoteBases ?? [],
      ...(options.allowPrivateAddressesForTests ? { allowPrivateAddressesForTests: true } : {}),
    }).catch((error: unknown) => {
      if (error instanceof UserError && error.code === "renderer-missing")
        throw new UserError("renderer-missing", `cannot render ${relative}: ${error.message}`);
      throw error;
    });
    return { objects: parseManifests(output, `kustomize build ${relative}`, budget), charts: [] };
  }
  const objects: RenderedObject[] = [];
  const realRoot = await realpath(root);
  for (const file of await listManifestFiles(folder)) {
    const display = path.relative(realRoot, file);
    objects.push(...parseManifests(await readCapped(file, limits.maxBytes - budget.bytes), display, budget));
  }
  return { objects, charts: [] };
}

async function readCapped(file: string, remainingBytes: number): Promise<string> {
  const size = (await stat(file)).size;
  // Check before reading, so a huge file is refused without loading it.
  if (size > remainingBytes)
    throw new UserError("render-too-large", `${path.basename(file)}: manifests exceed the size limit`);
  return readFile(file, "utf8");
}

/** Every manifest file under `folder`, sorted by path; hidden entries and symlinks are skipped. */
async function listManifestFiles(folder: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const full = path.join(dir, name);
      const info = await lstat(full);
      if (info.isSymbolicLink()) continue;
      if (info.isDirectory()) await walk(full);
      else if (info.isFile() && MANIFEST_EXTENSIONS.has(path.extname(name).toLowerCase())) found.push(full);
    }
  };
  await walk(folder);
  return found.sort();
}
