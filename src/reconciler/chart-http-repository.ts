/**
 * Pulls a chart from a Helm HTTP repository (`https://host/path` serving `index.yaml`, the
 * layout `helm repo index` writes), outside the render process: through Ferry's registry client
 * (its address guard, size caps and host-bound credentials, docs/security.md), never helm's.
 * The index is read within its byte limit with YAML aliases refused; the version is exact or a
 * semver range over the chart's entries; the archive (its `urls[0]`, relative to the repository)
 * within the archive limit, checked against the index's `digest` when it gives one, and
 * unpacked by chart-archive.ts. The pin is the archive's sha256.
 */
import { createHash } from "node:crypto";
import { parseUnique } from "../core/yaml/unique-keys.js";
import { UserError } from "../core/errors.js";
import {
  DEFAULT_CHART_ARCHIVE_LIMITS,
  unpackChartArchive,
  type ChartArchiveLimits,
} from "./chart-archive.js";
import { pickVersion, type ChartDependencyPin } from "./chart-version.js";
import type { ChartRegistry } from "./ports.js";

interface IndexEntry {
  version: string;
  urls: string[];
  digest?: string;
}

/** Whether a repository string names a Helm HTTP repository. */
export const isHttpRepository = (repository: string): boolean => /^https?:\/\//i.test(repository);

/** The repository URL as pinned and joined: no trailing slash. */
export const repositoryUrl = (repository: string): string => repository.replace(/\/+$/, "");

function invalid(where: string, reason: string): never {
  throw new UserError("chart-repository-invalid", `${where}/index.yaml: ${reason}`);
}

function entriesOf(text: string, chart: string, where: string): IndexEntry[] {
  let doc: unknown;
  try {
    doc = parseUnique(text, { maxAliasCount: 0 });
  } catch (error) {
    invalid(where, (error as Error).message.split("\n")[0]!);
  }
  const entries = (doc as { entries?: unknown } | null)?.entries;
  if (typeof entries !== "object" || entries === null || Array.isArray(entries))
    invalid(where, "no entries map (not a Helm repository index)");
  const list = (entries as Record<string, unknown>)[chart];
  if (list === undefined)
    throw new UserError("chart-dependency-not-found", `chart repository ${where} has no chart ${chart}`);
  if (!Array.isArray(list)) invalid(where, `entries.${chart} is not a list`);
  return list.flatMap((item: unknown) => {
    const entry = item as { version?: unknown; urls?: unknown; digest?: unknown } | null;
    if (typeof entry?.version !== "string" || !Array.isArray(entry.urls)) return [];
    const urls = entry.urls.filter((url): url is string => typeof url === "string");
    if (urls.length === 0) return [];
    if (entry.digest !== undefined && typeof entry.digest !== "string")
      invalid(where, `${chart} ${entry.version}: digest is not a string`);
    return [
      {
        version: entry.version,
        urls,
        ...(typeof entry.digest === "string" ? { digest: entry.digest } : {}),
      },
    ];
  });
}

/**
 * Pulls `chart` at `constraint` from the repository at `repository` into `destination` (the
 * chart's files, without the archive's top folder); `label` names it in the pin.
 */
export async function pullHttpChart(
  registry: ChartRegistry,
  repository: string,
  chart: string,
  constraint: string,
  destination: string,
  label: string,
  limits: ChartArchiveLimits = DEFAULT_CHART_ARCHIVE_LIMITS,
): Promise<ChartDependencyPin> {
  const where = repositoryUrl(repository);
  const maxIndexBytes = limits.maxIndexBytes ?? DEFAULT_CHART_ARCHIVE_LIMITS.maxIndexBytes!;
  const index = await registry.download(`${where}/index.yaml`, maxIndexBytes);
  const entries = entriesOf(index.toString("utf8"), chart, where);
  const version = pickVersion(
    entries.map((entry) => entry.version),
    constraint,
    label,
    `${chart} in ${where}`,
  );
  const entry = entries.find((candidate) => candidate.version === version)!;
  let url: URL;
  try {
    url = new URL(entry.urls[0]!, `${where}/`);
  } catch {
    invalid(where, `${chart} ${version}: its url is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    invalid(where, `${chart} ${version}: its url is not http(s)`);
  const archive = await registry.download(url.href, limits.maxArchiveBytes);
  const sha = createHash("sha256").update(archive).digest("hex");
  if (entry.digest !== undefined && entry.digest.toLowerCase() !== sha)
    throw new UserError(
      "chart-archive-refused",
      `${url.origin}${url.pathname}: sha256 ${sha} is not the digest index.yaml names for ${chart} ${version}; refused before rendering`,
    );
  await unpackChartArchive(archive, destination, `${chart} ${version} from ${where}`, limits);
  return { name: label, repository: where, constraint, version, digest: `sha256:${sha}` };
}
