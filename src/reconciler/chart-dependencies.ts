/**
 * Downloads a chart's `Chart.yaml` dependencies on OCI repositories (`repository: oci://host/path`)
 * into its `charts/` folder before `helm template` runs, outside the render process: through
 * Ferry's registry client (its address guard, size limits and host-bound credentials,
 * docs/security.md), never helm's. A version is exact or a semver range resolved against the
 * repository's tags (`semver.maxSatisfying`); the chart layer is fetched by digest, verified, and
 * unpacked by chart-archive.ts. A dependency already in `charts/` (`<name>/` or
 * `<name>-<version>.tgz`) is left as committed. Each download is pinned: its manifest digest.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import semver from "semver";
import { parseUnique } from "../core/yaml/unique-keys.js";
import { UserError } from "../core/errors.js";
import {
  DEFAULT_CHART_ARCHIVE_LIMITS,
  unpackChartArchive,
  type ChartArchiveLimits,
} from "./chart-archive.js";
import type { ChartRegistry } from "./ports.js";

export const HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
export const HELM_CHART_CONFIG = "application/vnd.cncf.helm.config.v1+json";

/** A dependency downloaded for a render, as the status shows it. */
export interface ChartDependencyPin {
  name: string;
  /** `oci://host/path/name`. */
  repository: string;
  /** The version asked for in Chart.yaml (exact or a range). */
  constraint: string;
  version: string;
  /** The chart's manifest digest. */
  digest: string;
}

interface Dependency {
  name: string;
  version: string;
  repository: string;
}

function dependenciesOf(chartYaml: string, display: string): Dependency[] {
  const doc = parseUnique(chartYaml) as { dependencies?: unknown } | null;
  const list = doc?.dependencies;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new UserError("chart-invalid", `${display}: dependencies is not a list`);
  return list.flatMap((item: unknown) => {
    const dep = item as Partial<Record<keyof Dependency, unknown>> | null;
    if (typeof dep?.repository !== "string" || !dep.repository.startsWith("oci://")) return [];
    if (typeof dep.name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(dep.name))
      throw new UserError(
        "chart-invalid",
        `${display}: a dependency on ${dep.repository} without a valid name`,
      );
    if (typeof dep.version !== "string" || dep.version.trim() === "")
      throw new UserError("chart-invalid", `${display}: dependency ${dep.name} has no version`);
    return [{ name: dep.name, version: dep.version.trim(), repository: dep.repository }];
  });
}

/** OCI tags cannot hold `+`: helm pushes `1.0.0+build` as `1.0.0_build`. */
const tagOf = (version: string) => version.replace(/\+/g, "_");
const versionOf = (tag: string) => tag.replace(/_/g, "+");

async function resolveVersion(registry: ChartRegistry, name: string, dep: Dependency): Promise<string> {
  const exact = semver.valid(dep.version);
  if (exact) return exact;
  if (!semver.validRange(dep.version))
    throw new UserError(
      "chart-dependency-version",
      `chart dependency ${dep.name}: version ${JSON.stringify(dep.version.slice(0, 80))} is neither a version nor a semver range`,
    );
  const versions = (await registry.listTags(name)).map(versionOf).filter((tag) => semver.valid(tag));
  const best = semver.maxSatisfying(versions, dep.version);
  if (!best)
    throw new UserError(
      "chart-dependency-not-found",
      `chart dependency ${dep.name}: no version of oci://${name} satisfies ${JSON.stringify(dep.version)}`,
    );
  return best;
}

async function vendored(charts: string, dep: Dependency): Promise<boolean> {
  let names: string[];
  try {
    names = await readdir(charts);
  } catch {
    return false;
  }
  return (
    names.includes(dep.name) ||
    names.some((entry) => entry.startsWith(`${dep.name}-`) && entry.endsWith(".tgz"))
  );
}

/** The chart layer of `name:version`, checked to be a Helm chart within the archive limit. */
async function chartLayer(
  registry: ChartRegistry,
  name: string,
  version: string,
  maxBytes: number,
): Promise<{ digest: string; layer: string }> {
  const manifest = await registry.manifest(name, tagOf(version));
  if (!manifest)
    throw new UserError("chart-dependency-not-found", `chart oci://${name} has no version ${version}`);
  const json = manifest.json as { config?: { mediaType?: unknown }; layers?: unknown };
  const layers = Array.isArray(json.layers)
    ? (json.layers as { mediaType?: unknown; digest?: unknown; size?: unknown }[])
    : [];
  const layer = layers.find((entry) => entry.mediaType === HELM_CHART_LAYER);
  if (json.config?.mediaType !== HELM_CHART_CONFIG || !layer || typeof layer.digest !== "string")
    throw new UserError(
      "chart-dependency-invalid",
      `oci://${name}:${version} is not a Helm chart (no ${HELM_CHART_LAYER} layer)`,
    );
  if (typeof layer.size === "number" && layer.size > maxBytes)
    throw new UserError(
      "chart-archive-refused",
      `oci://${name}:${version}: chart layer of ${layer.size} bytes (limit ${maxBytes}); refused before rendering`,
    );
  return { digest: manifest.digest, layer: layer.digest };
}

/** Whether the chart at `chart` has dependencies on OCI repositories. */
export async function hasOciDependencies(chart: string): Promise<boolean> {
  const text = await readFile(path.join(chart, "Chart.yaml"), "utf8");
  return dependenciesOf(text, `${path.basename(chart)}/Chart.yaml`).length > 0;
}

/**
 * Pulls the chart `oci://<name>` at `constraint` (exact or a range) into `destination` (its
 * files, without the archive's top folder); `label` names it in the pin.
 */
export async function pullChart(
  registry: ChartRegistry,
  name: string,
  constraint: string,
  destination: string,
  label: string,
  limits: ChartArchiveLimits = DEFAULT_CHART_ARCHIVE_LIMITS,
): Promise<ChartDependencyPin> {
  const version = await resolveVersion(registry, name, { name: label, version: constraint, repository: "" });
  const { digest, layer } = await chartLayer(registry, name, version, limits.maxArchiveBytes);
  const archive = await registry.blob(name, layer, limits.maxArchiveBytes);
  await unpackChartArchive(archive, destination, `oci://${name}:${version}`, limits);
  return { name: label, repository: `oci://${name}`, constraint, version, digest };
}

/** Downloads the OCI dependencies of the chart at `chart` (a private copy) into its `charts/`. */
export async function downloadChartDependencies(
  chart: string,
  registry: ChartRegistry,
  limits: ChartArchiveLimits = DEFAULT_CHART_ARCHIVE_LIMITS,
): Promise<ChartDependencyPin[]> {
  const display = `${path.basename(chart)}/Chart.yaml`;
  const pins: ChartDependencyPin[] = [];
  const charts = path.join(chart, "charts");
  for (const dep of dependenciesOf(await readFile(path.join(chart, "Chart.yaml"), "utf8"), display)) {
    if (await vendored(charts, dep)) continue;
    const name = `${dep.repository.slice("oci://".length).replace(/\/+$/, "")}/${dep.name}`;
    pins.push(await pullChart(registry, name, dep.version, path.join(charts, dep.name), dep.name, limits));
  }
  return pins;
}
