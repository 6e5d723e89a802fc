/**
 * The chart branch of the render step (render.ts): a folder with a `Chart.yaml` has its inputs
 * checked (chart-inputs.ts); when it depends on charts in OCI repositories and a chart registry
 * is given, the folder is copied into a private temporary directory, the dependencies downloaded
 * into the copy's `charts/` (chart-dependencies.ts, outside the render process), and `helm
 * template` runs on the copy, which is removed afterwards. The config repo checkout is never
 * written to.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ChartArchiveLimits } from "./chart-archive.js";
import {
  downloadChartDependencies,
  hasOciDependencies,
  type ChartDependencyPin,
} from "./chart-dependencies.js";
import { checkChartInputs } from "./chart-inputs.js";
import type { InputLimits } from "./kustomize-inputs.js";
import { parseManifests, type RenderBudget, type RenderedObject } from "./parse-manifests.js";
import type { ChartRegistry } from "./ports.js";
import { rendererEnv } from "./render-environment.js";
import { helmRenderer, MISSING_HELM_HELP, runRenderer, type RendererLimits } from "./renderer.js";

export interface ChartRenderOptions {
  helmValues?: readonly string[];
  helmNamespace?: string;
  helm?: string;
  env?: NodeJS.ProcessEnv;
  inputLimits?: Partial<InputLimits>;
  chartRegistry?: ChartRegistry;
  chartArchiveLimits?: ChartArchiveLimits;
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
        ...(options.env ? { env: rendererEnv(options.env) } : {}),
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
