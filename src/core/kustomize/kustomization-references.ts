/**
 * What a kustomization loads besides itself: resources, bases, components, patches, generator
 * inputs, Helm chart repositories… each with the field it came from and whether it is remote.
 * Pure: a parsed kustomization in, references out.
 *
 * Remote forms follow kustomize's remote targets
 * (https://github.com/kubernetes-sigs/kustomize/blob/master/examples/remoteBuild.md): HTTPS and SSH
 * git URLs (`https://…`, `ssh://…`, `git@host:owner/repo`), `file:///` clones, `//` subdirectories
 * and `?ref=` parameters, hosts written without a scheme (`github.com/owner/repo`), and plain
 * HTTP(S) file URLs, which kustomize's file loader fetches for any path field.
 */
import { parseDocument } from "yaml";

export const KUSTOMIZATION_FILE_NAMES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

export interface KustomizationReference {
  /** Where it was found, e.g. `resources`, `patches[2].path`, `helmCharts[0].repo`. */
  field: string;
  value: string;
  /** A kustomization directory (resources, bases, components) rather than a single file. */
  mayBeDirectory: boolean;
  remote: boolean;
}

/** Whether kustomize would fetch `value` from outside the checkout instead of reading a local path. */
export function isRemoteReference(value: string): boolean {
  const text = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return true; // https://, ssh://, file://, s3://, …
  if (/^(git::|gh:)/i.test(text)) return true;
  if (/^[\w.-]+@[\w.-]+:/.test(text)) return true; // scp-like git@github.com:owner/repo
  if (/[?&](ref|version|timeout|submodules)=/.test(text)) return true;
  // A host without a scheme: github.com/owner/repo, example.com:8443/x.
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?\//i.test(text);
}

/** Whether `value` could be read as a local path that happens to look like a host (`config.d/x`). */
export function isAmbiguousHostPath(value: string): boolean {
  return (
    /^[a-z0-9-]+(\.[a-z0-9-]+)+\//i.test(value.trim()) &&
    !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) &&
    !/[?&](ref|version|timeout|submodules)=/.test(value)
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/** Inline YAML (patches, generator configs) is text, not a path. */
function isInline(value: string): boolean {
  return value.includes("\n") || /^\s*[{[]/.test(value) || /^\s*\w+:\s/.test(value);
}

/** Every path or URL a parsed kustomization refers to. */
export function kustomizationReferences(kustomization: unknown): KustomizationReference[] {
  if (!isRecord(kustomization)) return [];
  const found: KustomizationReference[] = [];
  const add = (field: string, value: string, mayBeDirectory: boolean) => {
    if (value.trim() === "" || isInline(value)) return;
    found.push({ field, value, mayBeDirectory, remote: isRemoteReference(value) });
  };
  for (const field of ["resources", "bases", "components"])
    for (const value of strings(kustomization[field])) add(field, value, true);
  for (const field of ["generators", "transformers", "validators"])
    for (const value of strings(kustomization[field])) add(field, value, true);
  for (const field of ["crds", "configurations", "patchesStrategicMerge"])
    for (const value of strings(kustomization[field])) add(field, value, false);
  for (const field of ["patches", "patchesJson6902", "replacements"]) {
    const list = kustomization[field];
    if (!Array.isArray(list)) continue;
    list.forEach((item, index) => {
      if (isRecord(item) && typeof item.path === "string") add(`${field}[${index}].path`, item.path, false);
    });
  }
  for (const field of ["configMapGenerator", "secretGenerator"]) {
    const list = kustomization[field];
    if (!Array.isArray(list)) continue;
    list.forEach((item, index) => {
      if (!isRecord(item)) return;
      for (const file of strings(item.files)) {
        // `key=path` names the key; the path follows the first `=`.
        const equals = file.indexOf("=");
        add(`${field}[${index}].files`, equals === -1 ? file : file.slice(equals + 1), false);
      }
      for (const env of [...strings(item.envs), ...strings(item.env)])
        add(`${field}[${index}].envs`, env, false);
    });
  }
  if (isRecord(kustomization.openapi) && typeof kustomization.openapi.path === "string")
    add("openapi.path", kustomization.openapi.path, false);
  const charts = kustomization.helmCharts;
  if (Array.isArray(charts)) {
    charts.forEach((chart, index) => {
      if (!isRecord(chart)) return;
      // A chart repository is always fetched over the network when set.
      if (typeof chart.repo === "string" && chart.repo.trim() !== "")
        found.push({
          field: `helmCharts[${index}].repo`,
          value: chart.repo,
          mayBeDirectory: false,
          remote: true,
        });
      if (typeof chart.valuesFile === "string")
        add(`helmCharts[${index}].valuesFile`, chart.valuesFile, false);
      for (const file of strings(chart.additionalValuesFiles))
        add(`helmCharts[${index}].additionalValuesFiles`, file, false);
    });
  }
  const inflators = kustomization.helmChartInflationGenerator;
  if (Array.isArray(inflators)) {
    inflators.forEach((chart, index) => {
      if (isRecord(chart) && typeof chart.chartRepoUrl === "string" && chart.chartRepoUrl.trim() !== "")
        found.push({
          field: `helmChartInflationGenerator[${index}].chartRepoUrl`,
          value: chart.chartRepoUrl,
          mayBeDirectory: false,
          remote: true,
        });
    });
  }
  if (isRecord(kustomization.helmGlobals) && typeof kustomization.helmGlobals.chartHome === "string")
    add("helmGlobals.chartHome", kustomization.helmGlobals.chartHome, true);
  return found;
}

/** Whether `value` is allowed by one of the `--allow-remote-base` prefixes. */
export function remoteAllowed(value: string, allowedPrefixes: readonly string[]): boolean {
  return allowedPrefixes.some((prefix) => prefix !== "" && value.trim().startsWith(prefix));
}

/**
 * The remote references of a kustomization file's text; an unreadable file has none (its syntax
 * is reported elsewhere). Aliases are not expanded beyond a small budget.
 */
export function remoteReferencesIn(text: string): KustomizationReference[] {
  try {
    const document = parseDocument(text, { prettyErrors: false });
    if (document.errors.length > 0) return [];
    return kustomizationReferences(document.toJS({ maxAliasCount: 100 })).filter(
      (reference) => reference.remote,
    );
  } catch {
    return [];
  }
}

/** Whether a repo path names a kustomization file. */
export function isKustomizationFile(path: string): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1);
  return KUSTOMIZATION_FILE_NAMES.includes(base);
}
