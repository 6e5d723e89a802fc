/**
 * An environment applied by Argo CD: its Application (or an ApplicationSet's template) renders
 * `spec.source`/`spec.sources[].path` of the repository with the source's own overrides. What
 * Ferry's diff applies of them, the way Argo CD's repo server does: `kustomize.images` (as
 * `kustomize edit set image`), `helm.valueFiles` inside the repository, `helm.values` or
 * `helm.valuesObject` (the object wins when both are set, as in Argo CD) and `helm.parameters`
 * (as `--set`, highest precedence); `spec.destination.namespace` as the release namespace. Every
 * other override is listed by name as not applied. docs/diff.md "Argo CD Applications". Pure.
 */
import { parseUnique } from "../yaml/unique-keys.js";
import type { KubeObject } from "../kube-object.js";
import { podSpecOf, splitImage } from "./images.js";

export interface ArgoSourcePlan {
  /** Repo-relative folder the source renders. */
  path: string;
  kustomizeImages: string[];
  /** Repo-relative values files (Argo CD's `valueFiles` are relative to the source's path). */
  helmValueFiles: string[];
  /** Values from `helm.values`/`valuesObject` and `helm.parameters`, merged; undefined when none. */
  helmValues?: Record<string, unknown>;
  namespace?: string;
}

export interface ArgoRenderPlan {
  sources: ArgoSourcePlan[];
  /** `Application shop: source 0: kustomize.namePrefix not applied`. */
  notApplied: string[];
}

const KUSTOMIZE_APPLIED = new Set(["images"]);
const HELM_APPLIED = new Set(["valueFiles", "values", "valuesObject", "parameters"]);

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An Argo CD Application or ApplicationSet: its application spec, else undefined. */
export function argoApplicationSpec(object: KubeObject): Json | undefined {
  if (!object.apiVersion.startsWith("argoproj.io/")) return undefined;
  const spec = object.spec;
  if (!isRecord(spec)) return undefined;
  if (object.kind === "Application") return spec;
  if (object.kind === "ApplicationSet" && isRecord(spec.template) && isRecord(spec.template.spec))
    return spec.template.spec;
  return undefined;
}

export function argoRenderPlan(object: KubeObject): ArgoRenderPlan {
  const spec = argoApplicationSpec(object) ?? {};
  const name = `${object.kind} ${object.metadata.name}`;
  const sources = Array.isArray(spec.sources) ? spec.sources : spec.source !== undefined ? [spec.source] : [];
  const destination = isRecord(spec.destination) ? spec.destination : {};
  const namespace = typeof destination.namespace === "string" ? destination.namespace : undefined;
  const plan: ArgoRenderPlan = { sources: [], notApplied: [] };
  sources.forEach((source: unknown, index) => {
    const where = `${name}: source ${index}`;
    if (!isRecord(source)) return;
    if (typeof source.path !== "string") {
      // A `ref:` source only lends its files to `$ref/…` value files; a chart comes from a registry.
      if (typeof source.chart === "string")
        plan.notApplied.push(
          `${where}: chart ${source.chart} from ${String(source.repoURL)} is not rendered (a remote chart)`,
        );
      return;
    }
    if (source.path.includes("{{")) {
      plan.notApplied.push(
        `${where}: path ${source.path} is a template filled in by its generator; not rendered`,
      );
      return;
    }
    const base = source.path.replace(/^\.?\/+/, "").replace(/\/+$/, "") || ".";
    const kustomize = isRecord(source.kustomize) ? source.kustomize : {};
    const helm = isRecord(source.helm) ? source.helm : {};
    for (const key of Object.keys(kustomize))
      if (!KUSTOMIZE_APPLIED.has(key)) plan.notApplied.push(`${where}: kustomize.${key} not applied`);
    for (const key of Object.keys(helm))
      if (!HELM_APPLIED.has(key)) plan.notApplied.push(`${where}: helm.${key} not applied`);
    for (const key of ["directory", "plugin"])
      if (source[key] !== undefined) plan.notApplied.push(`${where}: ${key} not applied`);
    const helmValueFiles: string[] = [];
    for (const file of Array.isArray(helm.valueFiles) ? helm.valueFiles : []) {
      if (typeof file !== "string") continue;
      if (file.startsWith("$") || /^[a-z]+:\/\//i.test(file) || file.startsWith("/"))
        plan.notApplied.push(`${where}: helm.valueFiles ${file} not applied (outside this source)`);
      else helmValueFiles.push(base === "." ? file : `${base}/${file}`);
    }
    const values = helmValuesOf(helm, `${where}`, plan.notApplied);
    plan.sources.push({
      path: base,
      kustomizeImages: (Array.isArray(kustomize.images) ? kustomize.images : []).filter(
        (entry): entry is string => typeof entry === "string",
      ),
      helmValueFiles,
      ...(values ? { helmValues: values } : {}),
      ...(namespace ? { namespace } : {}),
    });
  });
  return plan;
}

function helmValuesOf(helm: Json, where: string, notApplied: string[]): Json | undefined {
  let values: Json | undefined;
  if (isRecord(helm.valuesObject)) values = structuredClone(helm.valuesObject);
  else if (typeof helm.values === "string" && helm.values.trim() !== "") {
    try {
      const parsed: unknown = parseUnique(helm.values, { maxAliasCount: 100 });
      if (isRecord(parsed)) values = parsed;
      else notApplied.push(`${where}: helm.values is not a mapping; not applied`);
    } catch {
      notApplied.push(`${where}: helm.values is not valid YAML; not applied`);
    }
  }
  for (const parameter of Array.isArray(helm.parameters) ? helm.parameters : []) {
    if (!isRecord(parameter) || typeof parameter.name !== "string") continue;
    const text = String(parameter.value ?? "");
    const value = parameter.forceString === true ? text : scalarOf(text);
    values ??= {};
    if (!setPath(values, parameter.name, value))
      notApplied.push(`${where}: helm.parameters ${parameter.name} not applied (a name Ferry cannot read)`);
  }
  return values;
}

/** `--set`'s typing of a value: true/false, integers, null; anything else a string. */
function scalarOf(text: string): unknown {
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null") return null;
  if (/^-?(0|[1-9][0-9]{0,15})$/.test(text)) return Number(text);
  return text;
}

/** `a\.b.c` → `a.b`, `c`: Helm's `--set` escapes a dot in a key with a backslash. */
function splitUnescapedDots(name: string): string[] {
  const parts: string[] = [];
  let part = "";
  for (let i = 0; i < name.length; i += 1) {
    if (name[i] === "\\" && name[i + 1] === ".") {
      part += ".";
      i += 1;
    } else if (name[i] === ".") {
      parts.push(part);
      part = "";
    } else part += name[i];
  }
  parts.push(part);
  return parts;
}

/** Sets `a.b[0].c` (dots escaped as `\.`) in `root`; false for a name outside that grammar. */
function setPath(root: Json, name: string, value: unknown): boolean {
  if (name.length > 256) return false;
  const steps: (string | number)[] = [];
  for (const part of splitUnescapedDots(name)) {
    const match = /^([^[\]]*)((?:\[\d{1,4}\])*)$/.exec(part);
    if (!match || (match[1] === "" && match[2] === "")) return false;
    if (match[1] === "__proto__" || match[1] === "constructor" || match[1] === "prototype") return false;
    if (match[1] !== "") steps.push(match[1]!);
    for (const index of match[2]!.match(/\d+/g) ?? []) steps.push(Number(index));
  }
  let current: Json | unknown[] = root;
  for (let i = 0; i < steps.length; i += 1) {
    const step = steps[i]!;
    const last = i === steps.length - 1;
    const holder = current as Record<string | number, unknown>;
    if (last) holder[step] = value;
    else {
      const nextIsIndex = typeof steps[i + 1] === "number";
      const existing = holder[step];
      if (!(typeof existing === "object" && existing !== null)) holder[step] = nextIsIndex ? [] : {};
      current = holder[step] as Json | unknown[];
    }
  }
  return true;
}

/**
 * `kustomize edit set image` entries applied to rendered objects: `name=newName:tag`,
 * `name:tag`, `name@digest`, `name=newName@digest`, matched on the image name without tag or digest.
 */
export function applyKustomizeImages(
  objects: readonly KubeObject[],
  entries: readonly string[],
): KubeObject[] {
  if (entries.length === 0) return [...objects];
  const rules = entries.map((entry) => {
    const equals = entry.indexOf("=");
    const name = splitImage(equals >= 0 ? entry.slice(0, equals) : entry).name;
    const target = splitImage(equals >= 0 ? entry.slice(equals + 1) : entry);
    return { name, target, renamed: equals >= 0 };
  });
  return objects.map((object) => {
    const copy = structuredClone(object);
    const spec = podSpecOf(copy);
    for (const list of ["initContainers", "containers", "ephemeralContainers"]) {
      const containers = spec?.[list];
      if (!Array.isArray(containers)) continue;
      for (const container of containers as { image?: unknown }[]) {
        if (typeof container?.image !== "string") continue;
        const current = splitImage(container.image);
        const rule = rules.find((candidate) => candidate.name === current.name);
        if (!rule) continue;
        const name = rule.renamed ? rule.target.name : current.name;
        const tag = rule.target.tag ?? (rule.target.digest ? undefined : current.tag);
        const digest = rule.target.digest ?? (rule.target.tag ? undefined : current.digest);
        container.image = `${name}${tag ? `:${tag}` : ""}${digest ? `@${digest}` : ""}`;
      }
    }
    return copy;
  });
}
