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
import { parseDocumentUnique, parseUnique } from "../yaml/unique-keys.js";
import { foldedFields, isRecord } from "./folded-fields.js";

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

/**
 * A scalar as kustomize's decoder sees it: text, or a `!!binary` value (YAML's base64), which
 * kustomize's decoder turns into the text it encodes.
 */
function asText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  return value instanceof Uint8Array ? new TextDecoder().decode(value) : undefined;
}

function strings(value: unknown): string[] {
  const one = asText(value);
  if (one !== undefined) return [one];
  return Array.isArray(value) ? value.flatMap((item) => asText(item) ?? []) : [];
}

/** Inline YAML (patches, generator configs) is text, not a path. */
export function isInline(value: string): boolean {
  return value.includes("\n") || /^\s*[{[]/.test(value) || /^\s*\w+:\s/.test(value);
}

type Add = (field: string, value: string, mayBeDirectory: boolean) => void;

/** The items of a list field, each a mapping read with folded keys (`where` names the item in errors). */
function items(list: unknown, name: string, each: (field: (key: string) => unknown, at: string) => void) {
  if (!Array.isArray(list)) return;
  list.forEach((item, index) => {
    if (isRecord(item)) each(foldedFields(item, `${name}[${index}]`), `${name}[${index}]`);
  });
}

/** `files`/`envs`/`env` of a ConfigMap or Secret generator (`key=path` names the key; the path follows the first `=`). */
function generatorFiles(field: (key: string) => unknown, at: string, add: Add): void {
  for (const file of strings(field("files"))) {
    const equals = file.indexOf("=");
    add(`${at}.files`, equals === -1 ? file : file.slice(equals + 1), false);
  }
  for (const env of [...strings(field("envs")), ...strings(field("env"))]) add(`${at}.envs`, env, false);
}

/** A Helm chart's repository (always fetched when set), chart home and values files. */
function chartFields(field: (key: string) => unknown, at: string, add: Add, remote: Add): void {
  for (const key of ["repo", "chartRepoUrl"]) {
    const repo = asText(field(key));
    if (repo !== undefined && repo.trim() !== "") remote(`${at}.${key}`, repo, false);
  }
  const chartHome = asText(field("chartHome"));
  if (chartHome !== undefined) add(`${at}.chartHome`, chartHome, true);
  // `values` is the older generator's values file.
  for (const key of ["valuesFile", "values"]) {
    const file = asText(field(key));
    if (file !== undefined) add(`${at}.${key}`, file, false);
  }
  for (const file of strings(field("additionalValuesFiles"))) add(`${at}.additionalValuesFiles`, file, false);
}

/**
 * The paths and URLs of a built-in generator or transformer's configuration (an entry of
 * `generators`/`transformers`/`validators`, inline or in a file), by its `kind`.
 */
export function pluginConfigReferences(config: unknown, where = "generator"): KustomizationReference[] {
  if (!isRecord(config)) return [];
  const field = foldedFields(config, where);
  const found: KustomizationReference[] = [];
  const add: Add = (name, value, mayBeDirectory) => {
    if (value.trim() === "" || isInline(value)) return;
    found.push({ field: name, value, mayBeDirectory, remote: isRemoteReference(value) });
  };
  const remote: Add = (name, value) =>
    found.push({ field: name, value, mayBeDirectory: false, remote: true });
  const kind = field("kind");
  if (kind === "ConfigMapGenerator" || kind === "SecretGenerator") generatorFiles(field, where, add);
  if (kind === "HelmChartInflationGenerator") chartFields(field, where, add, remote);
  if (kind === "PatchTransformer" || kind === "PatchJson6902Transformer") {
    const path = asText(field("path"));
    if (path !== undefined) add(`${where}.path`, path, false);
  }
  if (kind === "PatchStrategicMergeTransformer")
    for (const path of strings(field("paths"))) add(`${where}.paths`, path, false);
  if (kind === "ReplacementTransformer")
    items(field("replacements"), `${where}.replacements`, (item, at) => {
      const path = asText(item("path"));
      if (path !== undefined) add(`${at}.path`, path, false);
    });
  return found;
}

/**
 * Every path or URL a parsed kustomization refers to, its keys read as kustomize reads them
 * (folded-fields.ts). Inline generator, transformer and validator configurations are read too.
 */
export function kustomizationReferences(kustomization: unknown): KustomizationReference[] {
  if (!isRecord(kustomization)) return [];
  const field = foldedFields(kustomization, "kustomization");
  const found: KustomizationReference[] = [];
  const add: Add = (name, value, mayBeDirectory) => {
    if (value.trim() === "" || isInline(value)) return;
    found.push({ field: name, value, mayBeDirectory, remote: isRemoteReference(value) });
  };
  const remote: Add = (name, value) =>
    found.push({ field: name, value, mayBeDirectory: false, remote: true });
  for (const name of ["resources", "bases", "components"])
    for (const value of strings(field(name))) add(name, value, true);
  for (const name of ["generators", "transformers", "validators"])
    strings(field(name)).forEach((value, index) => {
      if (!isInline(value)) return add(name, value, true);
      let inline: unknown;
      try {
        inline = parseUnique(value, { merge: true, maxAliasCount: 100 });
      } catch {
        return; // kustomize reports an unreadable configuration itself
      }
      found.push(...pluginConfigReferences(inline, `${name}[${index}]`));
    });
  for (const name of ["crds", "configurations", "patchesStrategicMerge"])
    for (const value of strings(field(name))) add(name, value, false);
  for (const name of ["patches", "patchesJson6902", "replacements"])
    items(field(name), name, (item, at) => {
      const path = asText(item("path"));
      if (path !== undefined) add(`${at}.path`, path, false);
    });
  for (const name of ["configMapGenerator", "secretGenerator"])
    items(field(name), name, (item, at) => generatorFiles(item, at, add));
  const openapi = field("openapi");
  if (isRecord(openapi)) {
    const path = asText(foldedFields(openapi, "openapi")("path"));
    if (path !== undefined) add("openapi.path", path, false);
  }
  items(field("helmCharts"), "helmCharts", (item, at) => chartFields(item, at, add, remote));
  items(field("helmChartInflationGenerator"), "helmChartInflationGenerator", (item, at) =>
    chartFields(item, at, add, remote),
  );
  const globals = field("helmGlobals");
  if (isRecord(globals)) {
    const global = foldedFields(globals, "helmGlobals");
    for (const key of ["chartHome", "configHome"]) {
      const home = asText(global(key));
      if (home !== undefined) add(`helmGlobals.${key}`, home, true);
    }
  }
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
    const document = parseDocumentUnique(text, { prettyErrors: false, merge: true });
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
