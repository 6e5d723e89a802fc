/**
 * The chart branch of the render step (render-folder.ts), one path for both kinds of chart folder: the
 * chart's inputs are checked (chart-inputs.ts) and handed to `afterInputCheck`, then, when
 * something must be downloaded, a private temporary directory receives the chart (outside the
 * render process, chart-dependencies.ts), `helm template` runs on it, and it is removed
 * afterwards; the config repo checkout is never written to. A folder with a `Chart.yaml` is the
 * chart (its copy gets the remote dependencies in `charts/`); a folder with a `ferry-chart.yaml`
 * (CHART_SOURCE_FILE) names a chart in an OCI registry or a Helm HTTP repository, pulled into the
 * private directory and rendered with the folder's values files.
 */
import { cp, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseUnique } from "../core/yaml/unique-keys.js";
import * as z from "zod";
import { UserError } from "../core/errors.js";
import type { ChartArchiveLimits } from "./chart-archive.js";
import {
  downloadChartDependencies,
  hasRemoteDependencies,
  pullChart,
  type ChartDependencyPin,
} from "./chart-dependencies.js";
import { checkChartInputs } from "./chart-inputs.js";
import type { InputLimits } from "./kustomize-inputs.js";
import { parseManifests, type RenderBudget, type RenderedObject } from "./parse-manifests.js";
import type { ChartRegistry } from "./ports.js";
import {
  helmRenderer,
  MISSING_HELM_HELP,
  runRenderer,
  type RendererLimits,
} from "../adapters/render/render-tools.js";

export interface ChartRenderOptions {
  helmValues?: readonly string[];
  helmNamespace?: string;
  helm?: string;
  env?: NodeJS.ProcessEnv;
  inputLimits?: Partial<InputLimits>;
  chartRegistry?: ChartRegistry;
  chartArchiveLimits?: ChartArchiveLimits;
  /**
   * Runs once the chart's inputs are checked, before helm (render-folder.ts: decrypting the files it reads);
   * returns values files applied last (Ferry's own, outside the repo, so never checked as inputs).
   */
  afterInputCheck?: (valuesFiles: readonly string[]) => Promise<string[]>;
}

type ChartRender = { objects: RenderedObject[]; charts: ChartDependencyPin[] };

/**
 * Checks a chart's inputs (`inputs`: the folder in the repo), runs `afterInputCheck`, lets
 * `download` (when given) place the chart to render in a private directory, and renders it
 * with helm; the private directory is removed afterwards, failed or not.
 */
async function checkAndRender(
  where: { root: string; folder: string; relative: string },
  valuesFiles: readonly string[],
  options: ChartRenderOptions,
  rendererLimits: RendererLimits,
  budget: RenderBudget,
  download?: (scratch: string) => Promise<{ chart: string; charts: ChartDependencyPin[] }>,
): Promise<ChartRender> {
  const { root, folder, relative } = where;
  await checkChartInputs(root, folder, valuesFiles, {
    ...(options.inputLimits ? { limits: options.inputLimits } : {}),
  });
  const values = [...valuesFiles, ...((await options.afterInputCheck?.(valuesFiles)) ?? [])];
  const scratch = download ? await mkdtemp(path.join(tmpdir(), "ferry-chart-")) : undefined;
  try {
    const { chart, charts } = scratch && download ? await download(scratch) : { chart: folder, charts: [] };
    // `helm` is looked up on the renderer's PATH; a missing one is reported with how to install it.
    const helm = helmRenderer(options.helm ?? "helm", {
      release: path.basename(folder),
      ...(options.helmNamespace !== undefined ? { namespace: options.helmNamespace } : {}),
      valuesFiles: values,
    });
    const output = await runRenderer(
      [helm],
      chart,
      rendererLimits,
      {
        ...(options.env ? { env: options.env } : {}),
        // A chart never needs the network: what it needs was downloaded by Ferry by now.
        allowedPrefixes: [],
      },
      `cannot render ${relative}: ${MISSING_HELM_HELP}`,
    );
    return { objects: parseManifests(output, `helm template ${relative}`, budget), charts };
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

/** Renders a chart folder of the repo; its remote dependencies downloaded into a private copy. */
export async function renderChart(
  root: string,
  folder: string,
  relative: string,
  valuesFiles: string[],
  options: ChartRenderOptions,
  rendererLimits: RendererLimits,
  budget: RenderBudget,
): Promise<ChartRender> {
  const registry = options.chartRegistry;
  const download =
    registry && (await hasRemoteDependencies(folder))
      ? async (scratch: string) => {
          const chart = path.join(scratch, path.basename(folder));
          // Links were checked to stay inside the repo: the copy holds what they point at.
          await cp(folder, chart, { recursive: true, dereference: true });
          return {
            chart,
            charts: await downloadChartDependencies(chart, registry, options.chartArchiveLimits),
          };
        }
      : undefined;
  return checkAndRender({ root, folder, relative }, valuesFiles, options, rendererLimits, budget, download);
}

/** The file of an environment folder that names its chart in an OCI registry or a Helm HTTP repository. */
export const CHART_SOURCE_FILE = "ferry-chart.yaml";
const MAX_CHART_SOURCE_BYTES = 64 * 1024;

const chartSourceSchema = z
  .object({
    repoURL: z
      .string()
      .max(2048)
      .regex(/^(oci|https?):\/\/[^\s]+$/, "must be oci://host/path or an http(s):// Helm repository"),
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
 * Renders a folder whose `ferry-chart.yaml` names a chart in an OCI registry or a Helm HTTP
 * repository: the chart pulled into a private directory (pinned by digest), its values files
 * (relative to the folder, inside the repo) after `--helm-values`' ones.
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
): Promise<ChartRender> {
  const source = await readChartSource(folder, relative);
  const registry = options.chartRegistry;
  if (!registry)
    throw new UserError(
      "chart-source-unsupported",
      `${relative}: no chart registry to pull ${source.chart} from`,
    );
  const values = [...valuesFiles];
  for (const file of source.valuesFiles) values.push(await resolveInside(root, path.join(relative, file)));
  return checkAndRender(
    { root, folder, relative },
    values,
    options,
    rendererLimits,
    budget,
    async (scratch) => {
      const chart = path.join(scratch, source.chart);
      const pin = await pullChart(
        registry,
        source.repoURL,
        source.chart,
        source.version,
        chart,
        source.chart,
        options.chartArchiveLimits,
      );
      return { chart, charts: [pin] };
    },
  );
}
