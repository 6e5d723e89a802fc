import { sameImage } from "../image-ref.js";
import type { EnvironmentConfig, FerryConfig, ImageConfig } from "../config/schema.js";
import { compileSegmentPattern, type SegmentPattern } from "./segment-pattern.js";
import { capturePlaceholders, fillTemplate, TemplateError } from "./template.js";

/**
 * Expands `imageRules` and `environmentSets` into ordinary `images` / `environments` entries
 * (docs/config.md "Generated images and environments"). Pure: the loader gathers the facts (the
 * tree's folders, the images each environment file references) and validates the result with the
 * one config schema, so every other part of Ferry sees plain entries.
 *
 * Precedence: an entry written under `images:` / `environments:` wins over a generated one of the
 * same name (and a written image wins over a generated one of the same repository); the generated
 * one is dropped and listed as shadowed. Two generated entries of one name are an error.
 */

/** At most this many images and environments are generated (docs/config.md, docs/capacity.md). */
export const MAX_GENERATED_IMAGES = 1000;
export const MAX_GENERATED_ENVIRONMENTS = 500;

export interface GenerationFacts {
  /** Every folder of the tree, repository-relative. */
  folders: readonly string[];
  /** The images (normalised names) each environment file references, by file. */
  references: readonly { path: string; images: readonly string[] }[];
}

export interface GeneratedEntry {
  kind: "image" | "environment";
  name: string;
  /** The rule or set that generated it: `imageRules[0]`, `environmentSets[1]`. */
  by: string;
  /** The image repository or the folder it was generated from. */
  from: string;
}

export interface GenerationProblem {
  path: string[];
  message: string;
}

export interface Expansion {
  /** The written config with the generated entries added and the generator keys removed. */
  config: FerryConfig;
  generated: GeneratedEntry[];
  /** Generated entries dropped because a written entry has the name (or the repository). */
  shadowed: GeneratedEntry[];
  problems: GenerationProblem[];
  warnings: GenerationProblem[];
  /** Where each generated entry's fields come from: `environments.shop-prod` → its set's path. */
  origins: Map<string, string[]>;
}

/** The templated fields of a rule's or set's template (the others are copied as written). */
interface Templated {
  paths?: string[];
  from?: string;
  source?: string;
  group?: string;
}

type Generated<T> = { entries: Record<string, T>; expansion: Omit<Expansion, "config"> };

function emptyExpansion(): Omit<Expansion, "config"> {
  return { generated: [], shadowed: [], problems: [], warnings: [], origins: new Map() };
}

/** The environments `environmentSets` generate over these folders (written ones not included). */
export function expandEnvironmentSets(
  config: FerryConfig,
  folders: readonly string[],
): Generated<EnvironmentConfig> {
  const out = emptyExpansion();
  const entries: Record<string, EnvironmentConfig> = {};
  const sorted = [...folders].sort();
  for (const [index, set] of (config.environmentSets ?? []).entries()) {
    const at = ["environmentSets", String(index)];
    const by = `environmentSets[${index}]`;
    const over = compiled(set.over, [...at, "over"], out.problems);
    if (!over) continue;
    const made = new Set<string>();
    for (const folder of sorted) {
      const captures = over.match(folder);
      if (!captures) continue;
      const values = { ...capturePlaceholders(captures), "0": folder };
      try {
        const name = fillTemplate(set.name, values);
        const template = (set.template ?? {}) as Templated;
        const override = (set.overrides?.[name] ?? {}) as Templated;
        const entry: Record<string, unknown> = { ...template, paths: [folder], ...override };
        const paths = override.paths ?? template.paths;
        if (paths) entry.paths = paths.map((path) => fillTemplate(path, values));
        const from = override.from ?? template.from;
        if (from !== undefined) entry.from = fillTemplate(from, values);
        const generated: GeneratedEntry = { kind: "environment", name, by, from: folder };
        if (name in config.environments) {
          out.shadowed.push(generated);
          continue;
        }
        if (name in entries) {
          const other = out.generated.find((entry) => entry.kind === "environment" && entry.name === name)!;
          out.problems.push({
            path: [...at, "name"],
            message: `${other.by} (${other.from}) and ${by} (${folder}) both generate the environment ${JSON.stringify(name)}: make name use more of the folder`,
          });
          continue;
        }
        if (out.generated.length >= MAX_GENERATED_ENVIRONMENTS) {
          out.problems.push({
            path: at,
            message: `environmentSets generate more than ${MAX_GENERATED_ENVIRONMENTS} environments: narrow over`,
          });
          return { entries, expansion: out };
        }
        entries[name] = entry as EnvironmentConfig;
        made.add(name);
        out.generated.push(generated);
        out.origins.set(
          `environments.${name}`,
          set.overrides?.[name] ? [...at, "overrides", name] : [...at, "template"],
        );
      } catch (error) {
        if (!(error instanceof TemplateError)) throw error;
        out.problems.push({ path: [...at, "name"], message: `${folder}: ${error.message}` });
      }
    }
    for (const name of Object.keys(set.overrides ?? {}))
      if (!made.has(name))
        out.warnings.push({
          path: [...at, "overrides", name],
          message: `no folder matching ${set.over} generates the environment ${JSON.stringify(name)}: this override is unused`,
        });
  }
  return { entries, expansion: out };
}

/** The images `imageRules` generate from the references found (written ones not included). */
export function expandImageRules(
  config: FerryConfig,
  references: GenerationFacts["references"],
): Generated<ImageConfig> {
  const out = emptyExpansion();
  const entries: Record<string, ImageConfig> = {};
  const rules = (config.imageRules ?? []).map((rule, index) => {
    const at = ["imageRules", String(index)];
    const match = compiled(rule.match, [...at, "match"], out.problems);
    const exclude = (rule.exclude ?? []).map((pattern, position) =>
      compiled(pattern, [...at, "exclude", String(position)], out.problems),
    );
    return { rule, at, by: `imageRules[${index}]`, match, exclude, made: new Set<string>() };
  });
  const written = Object.values(config.images).map((image) => image.repository);
  const seen = new Set<string>();
  const sorted = [...references].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const repository of sorted.flatMap((file) => file.images)) {
    if (seen.has(repository)) continue;
    seen.add(repository);
    for (const { rule, at, by, match, exclude, made } of rules) {
      const captures = match?.match(repository);
      if (!captures || exclude.some((pattern) => pattern?.match(repository))) continue;
      const last = repository.slice(repository.lastIndexOf("/") + 1);
      const values: Record<string, string> = { ...capturePlaceholders(captures), last };
      try {
        const name = fillTemplate(rule.name ?? "{last}", values);
        values.name = name;
        const override = (rule.overrides?.[name] ?? {}) as Templated;
        const template = (rule.template ?? {}) as Templated;
        const entry: Record<string, unknown> = { ...template, ...override, repository };
        const source = override.source ?? template.source;
        if (source !== undefined) entry.source = fillTemplate(source, values);
        const group = override.group ?? template.group;
        if (group !== undefined) entry.group = fillTemplate(group, values);
        const generated: GeneratedEntry = { kind: "image", name, by, from: repository };
        if (name in config.images || written.some((image) => sameImage(image, repository))) {
          out.shadowed.push(generated);
          break;
        }
        if (name in entries) {
          const other = out.generated.find((entry) => entry.kind === "image" && entry.name === name)!;
          out.problems.push({
            path: [...at, "name"],
            message: `${other.from} (${other.by}) and ${repository} (${by}) both give the image name ${JSON.stringify(name)}: set name, e.g. "{1}-{last}", or add an exclude`,
          });
          break;
        }
        if (out.generated.length >= MAX_GENERATED_IMAGES) {
          out.problems.push({
            path: at,
            message: `imageRules generate more than ${MAX_GENERATED_IMAGES} images: narrow match or add exclude`,
          });
          return { entries, expansion: out };
        }
        entries[name] = entry as ImageConfig;
        made.add(name);
        out.generated.push(generated);
        out.origins.set(
          `images.${name}`,
          rule.overrides?.[name] ? [...at, "overrides", name] : [...at, "template"],
        );
      } catch (error) {
        if (!(error instanceof TemplateError)) throw error;
        out.problems.push({ path: [...at, "name"], message: `${repository}: ${error.message}` });
      }
      break;
    }
  }
  for (const { rule, at, made } of rules)
    for (const name of Object.keys(rule.overrides ?? {}))
      if (!made.has(name))
        out.warnings.push({
          path: [...at, "overrides", name],
          message: `no image found matching ${rule.match} gets the name ${JSON.stringify(name)}: this override is unused`,
        });
  return { entries, expansion: out };
}

/** The paths whose files image discovery reads: every environment's, generated ones included. */
export function discoveryPaths(config: FerryConfig, folders: readonly string[]): string[] {
  if ((config.imageRules ?? []).length === 0) return [];
  const generated = expandEnvironmentSets(config, folders).entries;
  const paths = new Set<string>();
  for (const environment of [...Object.values(config.environments), ...Object.values(generated)])
    for (const path of environment.paths) paths.add(path);
  return [...paths].sort();
}

/** The written config with every generated entry added: an ordinary FerryConfig (still to be validated). */
export function expandConfig(config: FerryConfig, facts: GenerationFacts): Expansion {
  const environments = expandEnvironmentSets(config, facts.folders);
  const images = expandImageRules(config, facts.references);
  const { imageRules: _rules, environmentSets: _sets, ...plain } = config;
  const merge = <K extends keyof Omit<Expansion, "config">>(key: K) =>
    key === "origins"
      ? new Map([...environments.expansion.origins, ...images.expansion.origins])
      : [...(environments.expansion[key] as unknown[]), ...(images.expansion[key] as unknown[])];
  return {
    config: {
      ...plain,
      images: { ...images.entries, ...config.images },
      environments: { ...environments.entries, ...config.environments },
    },
    generated: merge("generated") as GeneratedEntry[],
    shadowed: merge("shadowed") as GeneratedEntry[],
    problems: merge("problems") as GenerationProblem[],
    warnings: merge("warnings") as GenerationProblem[],
    origins: merge("origins") as Map<string, string[]>,
  };
}

/** True when the config generates anything (then the loader gathers facts and expands it). */
export function generatesConfig(config: FerryConfig): boolean {
  return (config.imageRules ?? []).length > 0 || (config.environmentSets ?? []).length > 0;
}

function compiled(
  pattern: string,
  path: string[],
  problems: GenerationProblem[],
): SegmentPattern | undefined {
  try {
    return compileSegmentPattern(pattern);
  } catch (error) {
    problems.push({ path, message: (error as Error).message });
    return undefined;
  }
}
