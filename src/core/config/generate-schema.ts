import * as z from "zod";
import { segmentPatternProblem } from "../generate/segment-pattern.js";
import { templateProblem } from "../generate/template.js";

/**
 * `imageRules` and `environmentSets` (docs/config.md "Generated images and environments"): entries
 * Ferry generates from a pattern, expanded into ordinary `images` / `environments` entries by the
 * loader before anything else reads the config (src/core/generate/expand-config.ts).
 */

/** At most this many rules and sets, each a list Ferry walks on every load. */
export const MAX_IMAGE_RULES = 50;
export const MAX_ENVIRONMENT_SETS = 50;

const IMAGE_PLACEHOLDERS = ["name", "last", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
const ENVIRONMENT_PLACEHOLDERS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

const pattern = (what: string) =>
  z.string().superRefine((value, ctx) => {
    const problem = segmentPatternProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: `${what}: ${problem}` });
  });

const template = (placeholders: string[]) =>
  z.string().superRefine((value, ctx) => {
    const problem = templateProblem(value, placeholders);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** Templated strings of a generated entry: the same field, checked for known placeholders. */
function withTemplates<T extends z.ZodObject>(entry: T, fields: Record<string, z.ZodType>) {
  return entry.extend(fields);
}

/**
 * The two generator keys of the config, built over the config's own image and environment entry
 * schemas so that every field another part adds to an entry is accepted in a template too.
 */
export function generateFields<I extends z.ZodObject, E extends z.ZodObject>(image: I, environment: E) {
  const imagePart = withTemplates(image.omit({ repository: true } as never).partial(), {
    source: template(IMAGE_PLACEHOLDERS)
      .optional()
      .describe("The app repo (owner/repo), a template: acme/{name}."),
    group: template(IMAGE_PLACEHOLDERS)
      .optional()
      .describe(
        "The image's PR group, a template: {1} (the first wildcard segment, e.g. the team's namespace).",
      ),
  });
  const environmentPart = withTemplates(environment.partial(), {
    paths: z
      .array(template(ENVIRONMENT_PLACEHOLDERS))
      .min(1)
      .optional()
      .describe("Default: the matched folder. Templates: {0} the folder, {1}… its wildcard segments."),
    from: template(ENVIRONMENT_PLACEHOLDERS).optional().describe("Upstream, a template: {1}-staging."),
  });
  const imageRule = z.strictObject({
    match: pattern("match").describe(
      "Images (registry/repository, as Docker normalises them) found in the environments' files: ghcr.io/acme/*. One wildcard segment per path segment.",
    ),
    name: template(IMAGE_PLACEHOLDERS)
      .optional()
      .describe(
        "Each image's name: {last} (default) the repository's last segment, {1}… the match's wildcard segments.",
      ),
    exclude: z
      .array(pattern("exclude"))
      .max(100)
      .optional()
      .describe("Images the rule leaves alone, same syntax as match."),
    template: imagePart.optional().describe("The rest of each generated image entry."),
    overrides: z
      .record(z.string(), imagePart)
      .optional()
      .describe("Per generated image (by name): fields that replace the template's."),
  });
  const environmentSet = z.strictObject({
    over: pattern("over").describe(
      "Folders of the repository, one environment each: apps/*/overlays/staging. One wildcard segment per path segment.",
    ),
    name: template(ENVIRONMENT_PLACEHOLDERS).describe("Each environment's name: {1}-staging."),
    template: environmentPart.optional().describe("The rest of each generated environment."),
    overrides: z
      .record(z.string(), environmentPart)
      .optional()
      .describe("Per generated environment (by name): fields that replace the template's."),
  });
  return {
    imageRules: z
      .array(imageRule)
      .max(MAX_IMAGE_RULES)
      .optional()
      .describe("Image entries generated from the images the environments' files reference."),
    environmentSets: z
      .array(environmentSet)
      .max(MAX_ENVIRONMENT_SETS)
      .optional()
      .describe("Environments generated, one per folder matching a pattern."),
  };
}

/**
 * A config that generates its images (or environments) need not write any: `images: {}` (or
 * `environments: {}`) is implied by a non-empty `imageRules` (or `environmentSets`).
 */
export function withImpliedEntries(data: unknown): unknown {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return data;
  const config = data as Record<string, unknown>;
  const generates = (key: string): boolean =>
    Array.isArray(config[key]) && (config[key] as unknown[]).length > 0;
  return {
    ...config,
    ...(config.images === undefined && generates("imageRules") ? { images: {} } : {}),
    ...(config.environments === undefined && generates("environmentSets") ? { environments: {} } : {}),
  };
}
