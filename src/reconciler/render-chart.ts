/**
 * The chart branch of the render step (render.ts): a folder with a `Chart.yaml` has its inputs
 * checked (chart-inputs.ts); when it depends on charts in OCI repositories and a chart registry
 * is given, the folder is copied into a private temporary directory, the dependencies downloaded
 * into the copy's `charts/` (chart-dependencies.ts, outside the render process), and `helm
 * template` runs on the copy, which is removed afterwards. The config repo checkout is never
 * written to. A folder with a `ferry-chart.yaml` (CHART_SOURCE_FILE) names a chart in an OCI
 * registry instead: it is pulled the same way into a private directory and rendered with the
 * folder's values files.
 */
import { cp, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseUnique } from "../core/yaml/unique-keys.js";
import { z } from "zod";
import { UserError } from "../core/errors.js";
import type { ChartArchiveLimits } from "./chart-archive.js";
import {
  downloadChartDependencies,
  hasOciDependencies,
  pullChart,
  type ChartDependencyPin,
} from "./chart-dependencies.js";
import { checkChartInputs } from "./chart-inputs.js";
import type { InputLimits } from "./kustomize-inputs.js";
import { parseManifests, type RenderBudget, type RenderedObject } from "./parse-manifests.js";
import type { ChartRegistry } from "./ports.js";
import { helmRenderer, MISSING_HELM_HELP, runRenderer, type RendererLimits } from "./renderer.js";

export interface ChartRenderOptions {
  helmValues?: readonly string[];
  helmNamespace?: string;
  helm?: string;
  env?: NodeJS.ProcessEnv;
  inputLimits?: Partial<InputLimits>;
  chartRegistry?: ChartRegistry;
  chartArchiveLimits?: ChartArchiveLimits;
  /**
   * Runs once the chart's inputs are checked, before helm (render.ts: decrypting the files it reads);
   * returns values files applied last (Ferry's own, outside the repo, so never checked as inputs).
   */
  afterInputCheck?: (valuesFiles: readonly string[]) => Promise<string[]>;
}

export async function renderChart(
  root: string,
  folder: string,
  relative: string,
  valuesFiles: string[],
  options: ChartRenderOptions,
  rendererLimits: RendererLimits,
  budget: RenderBudget,
): Promise<{ objects: RenderedObject[]; charts: ChartDependencyPin[] }> {
  await checkChartInputs(root, folder, valuesFiles, {
    ...(options.inputLimits ? { limits: options.inputLimits } : {}),
  });
  valuesFiles = [...valuesFiles, ...((await options.afterInputCheck?.(valuesFiles)) ?? [])];
  let chart = folder;
  let scratch: string | undefined;
  let charts: ChartDependencyPin[] = [];
  try {
    if (options.chartRegistry && (await hasOciDependencies(folder))) {
      scratch = await mkdtemp(path.join(tmpdir(), "ferry-chart-"));
      chart = path.join(scratch, path.basename(folder));
      // Links were checked to stay inside the repo: the copy holds what they point at.
      await cp(folder, chart, { recursive: true, dereference: true });
      charts = await downloadChartDependencies(chart, options.chartRegistry, options.chartArchiveLimits);
    }
    // `helm` is looked up on the renderer's PATH; a missing one is reported with how to install it.
    const helm = helmRenderer(options.helm ?? "helm", {
      release: path.basename(folder),
      ...(options.helmNamespace !== undefined ? { namespace: options.helmNamespace } : {}),
      valuesFiles,
    });
    const output = await runRenderer(
      [helm],
      chart,
      rendererLimits,
      {
        ...(options.env ? { env: options.env } : {}),
        // A chart never needs the network: its dependencies are in its charts/ folder by now.
        allowedPrefixes: [],
      },
      `cannot render ${relative}: ${MISSING_HELM_HELP}`,
    );
    return { objects: parseManifests(output, `helm template ${relative}`, budget), charts };
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

/** The file of an environment folder that names its chart in an OCI registry. */
export const CHART_SOURCE_FILE = "ferry-chart.yaml";
const MAX_CHART_SOURCE_BYTES = 64 * 1024;

const chartSourceSchema = z
  .object({
    repoURL: z.string().regex(/^oci:\/\/[^\s]+$/, "must be oci://host/path"),
    chart: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "must be a chart name"),
    version: z.string().min(1).max(128),
    valuesFiles: z.array(z.string().min(1).max(1024)).max(64).default([]),
  })
  .strict();

async function readChartSource(folder: string, relative: string): Promise<z.infer<typeof chartSourceSchema>> {
  const file = path.join(folder, CHART_SOURCE_FILE);
  const where = `${relative}/${CHART_SOURCE_FILE}`;
  if ((await stat(file)).size > MAX_CHART_SOURCE_BYTES)
    throw new UserError("chart-source-invalid", `${where}: over ${MAX_CHART_SOURCE_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = parseUnique(await readFile(file, "utf8"), { maxAliasCount: 0 });
  } catch (error) {
    throw new UserError("chart-source-invalid", `${where}: ${(error as Error).message.split("\n")[0]}`);
  }
  const parsed = chartSourceSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(
      "chart-source-invalid",
      `${where}: ${issue.path.join(".") || "file"}: ${issue.message}`,
    );
  }
  return parsed.data;
}

/**
 * Renders a folder whose `ferry-chart.yaml` names a chart in an OCI registry: the chart pulled
 * into a private directory (pinned by digest), its values files (relative to the folder, inside
 * the repo) after `--helm-values`' ones.
 */
export async function renderChartSource(
  root: string,
  folder: string,
  relative: string,
  valuesFiles: string[],
  options: ChartRenderOptions,
  rendererLimits: RendererLimits,
  budget: RenderBudget,
  resolveInside: (root: string, relative: string) => Promise<string>,
): Promise<{ objects: RenderedObject[]; charts: ChartDependencyPin[] }> {
  const source = await readChartSource(folder, relative);
  if (!options.chartRegistry)
    throw new UserError(
      "chart-source-unsupported",
      `${relative}: no chart registry to pull ${source.chart} from`,
    );
  const values = [...valuesFiles];
  for (const file of source.valuesFiles) values.push(await resolveInside(root, path.join(relative, file)));
  await checkChartInputs(root, folder, values, {
    ...(options.inputLimits ? { limits: options.inputLimits } : {}),
  });
  values.push(...((await options.afterInputCheck?.(values)) ?? []));
  const scratch = await mkdtemp(path.join(tmpdir(), "ferry-chart-"));
  try {
    const chart = path.join(scratch, source.chart);
    const name = `${source.repoURL.slice("oci://".length).replace(/\/+$/, "")}/${source.chart}`;
    const pin = await pullChart(
      options.chartRegistry,
      name,
      source.version,
      chart,
      source.chart,
      options.chartArchiveLimits,
    );
    const helm = helmRenderer(options.helm ?? "helm", {
      release: path.basename(folder),
      ...(options.helmNamespace !== undefined ? { namespace: options.helmNamespace } : {}),
      valuesFiles: values,
    });
    const output = await runRenderer(
      [helm],
      chart,
      rendererLimits,
      { ...(options.env ? { env: options.env } : {}), allowedPrefixes: [] },
      `cannot render ${relative}: ${MISSING_HELM_HELP}`,
    );
    return { objects: parseManifests(output, `helm template ${relative}`, budget), charts: [pin] };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
