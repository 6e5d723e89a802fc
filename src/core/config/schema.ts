import { MERGE_METHODS } from "../pr/merge-method.js";
import { NAME_PATTERN } from "./names.js";
import * as z from "zod";
import { isDuration } from "../duration.js";
import { healthSchema, soakSchema } from "./health-schema.js";
import { windowFields } from "./window-schema.js";
import { imagePromotersSchema, imageReviewersSchema } from "./rights-schema.js";
import { environmentGroupingField, imageGroupField } from "./group-schema.js";
import { notifySchema } from "./notify-schema.js";
import { generateFields } from "./generate-schema.js";
import { InvalidImageRefError, parseImageName } from "../image-ref.js";
import { policyFieldsSchema, policySchema } from "../policy/schema.js";
import { mergedPolicyProblems, needsSource } from "../policy/layered-policy.js";

/**
 * The one schema of `.github/ferry.yml` (docs/config.md). It is the source of the
 * TypeScript types, of runtime validation (`loadConfig`) and of the published JSON Schema
 * (`src/core/config/ferry.schema.json`, kept in sync by a test).
 */

const NAME = NAME_PATTERN;
const REPO_SLUG = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;
const TEAM_SLUG = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;

const duration = z.string().refine(isDuration, { message: "invalid duration: use e.g. 30s, 5m, 1h30m, 2d" });

/** A config path: relative, inside the repo, never under .github/ (docs/reliability.md row 15). */
export const configPath = z.string().superRefine((path, ctx) => {
  const problem = configPathProblem(path);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export function configPathProblem(path: string): string | undefined {
  if (path.length === 0) return "path is empty";
  if (path.includes("\0")) return "path contains a NUL byte";
  if (path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path))
    return `path ${JSON.stringify(path)} must be relative to the repository root`;
  if (path.includes("\\")) return `path ${JSON.stringify(path)} must use forward slashes`;
  if (/%2e|%2f|%5c/i.test(path)) return `path ${JSON.stringify(path)} must not be URL-encoded`;
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.some((segment) => segment === ".."))
    return `path ${JSON.stringify(path)} must not leave the repository (..)`;
  if (segments[0] === ".git" || segments[0] === ".github")
    return `path ${JSON.stringify(path)} must not be under ${segments[0]}/`;
  return undefined;
}

/** Key paths in a Helm values file for charts that don't use `image: {repository, tag}`. */
const helmKeysSchema = z.strictObject({
  tag: z.string().optional().describe("Dotted key path of the tag, e.g. app.image.version."),
  repository: z.string().optional().describe("Dotted key path of the repository."),
  registry: z.string().optional().describe("Dotted key path of the registry."),
  digest: z.string().optional().describe("Dotted key path of the digest."),
});

const imageSchema = z.strictObject({
  repository: z
    .string()
    .superRefine((value, ctx) => {
      try {
        parseImageName(value);
      } catch (error) {
        ctx.addIssue({
          code: "custom",
          message: error instanceof InvalidImageRefError ? error.message : String(error),
        });
      }
    })
    .describe("Where tags are looked up, e.g. ghcr.io/acme/shop."),
  source: z
    .string()
    .regex(REPO_SLUG, "source must be owner/repo")
    .optional()
    .describe("The app repo: enables CI gating and changelog links."),
  policy: policySchema.optional().describe("Default tag policy for every environment."),
  helm: z.array(helmKeysSchema).optional().describe("Extra Helm values key paths that hold this image."),
  promoters: imagePromotersSchema.optional(),
  reviewers: imageReviewersSchema.optional(),
  group: imageGroupField,
});

const PERMISSIONS = ["read", "triage", "write", "maintain", "admin"] as const;
export type Permission = (typeof PERMISSIONS)[number];

const environmentSchema = z.strictObject({
  paths: z
    .array(configPath)
    .min(1, "paths needs at least one file or folder")
    .describe("Files or folders whose image references Ferry edits."),
  update: z
    .enum(["auto", "manual"])
    .default("auto")
    .describe("auto: follow the registry; manual: only by command."),
  merge: z
    .enum(["auto", "review"])
    .default("review")
    .describe("auto: merge when required checks pass; review: wait for a human."),
  mergeMethod: z
    .enum(MERGE_METHODS)
    .optional()
    .describe(
      "How merge: auto merges: squash (default), merge or rebase; a method the repository does not allow falls back to one it does.",
    ),
  from: z
    .string()
    .optional()
    .describe("Upstream environment: this one only gets what that one runs, same digest."),
  soak: soakSchema.optional(),
  health: healthSchema
    .optional()
    .describe("Where this environment's health comes from; statuses from anyone else are ignored."),
  promoters: z
    .strictObject({
      permission: z
        .enum(PERMISSIONS)
        .default("maintain")
        .describe("Least repository permission to run /promote and /rollback."),
      teams: z
        .array(z.string().regex(TEAM_SLUG, "team must be org/team-slug"))
        .default([])
        .describe("Teams whose members may promote."),
    })
    .optional(),
  reviewers: z
    .strictObject({
      users: z.array(z.string()).default([]),
      teams: z.array(z.string()).default([]),
    })
    .optional()
    .describe("Reviewers requested on this environment's PRs."),
  notify: notifySchema.optional(),
  policy: z
    .record(z.string(), policyFieldsSchema)
    .optional()
    .describe("Per-image policy overrides, by image name."),
  grouping: environmentGroupingField,
  ...windowFields,
});

const registrySchema = z.strictObject({
  auth: z
    .enum(["github", "basic", "bearer", "none", "aws", "gcp", "azure", "dockerconfig"])
    .optional()
    .describe(
      "github: the installation token, only for the GitHub's own container registry (ghcr.io), public packages only. aws: Amazon ECR credentials from ecr:GetAuthorizationToken with the AWS credential chain of Ferry's environment (region from the host), refreshed before they expire. gcp: an OAuth access token from Google Application Default Credentials (user oauth2accesstoken), for Artifact Registry and gcr.io. azure: an Entra ID token from the Azure default credential chain of Ferry's environment (environment, workload identity, managed identity), exchanged at the registry's /oauth2/exchange for an ACR refresh token, for *.azurecr.io hosts. dockerconfig: the Docker config.json the operator gives Ferry (FERRY_DOCKER_CONFIG): auths, credHelpers and credsStore.",
    ),
  roleArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/, "roleArn is an IAM role ARN")
    .optional()
    .describe("auth: aws only: a role Ferry assumes through STS before asking ECR for a token."),
  username: z.string().optional(),
  passwordEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, "passwordEnv names an environment variable")
    .optional(),
  tokenEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, "tokenEnv names an environment variable")
    .optional(),
  insecure: z.boolean().optional().describe("Plain HTTP (loopback registries are plain HTTP by default)."),
  requestsPerMinute: z.number().int().positive().optional().describe("Request budget for this registry."),
  concurrency: z.number().int().positive().max(64).optional(),
});

export const configSchema = z
  .strictObject({
    images: z.record(
      z.string().regex(NAME, "image names are lowercase letters, digits, - and _"),
      imageSchema,
    ),
    environments: z.record(
      z.string().regex(NAME, "environment names are lowercase letters, digits, - and _"),
      environmentSchema,
    ),
    registries: z.record(z.string(), registrySchema).optional(),
    ...generateFields(imageSchema, environmentSchema),
    scan: z
      .strictObject({
        interval: duration
          .default("5m")
          .describe("Periodic registry scan (the backstop for missed webhooks)."),
      })
      .optional(),
    history: z
      .strictObject({
        maxCommits: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .default(100)
          .describe("At most this many commits of an environment's files are read for /ferry history."),
      })
      .optional(),
  })
  .superRefine((config, ctx) => {
    for (const problem of crossFieldProblems(config)) ctx.addIssue({ code: "custom", ...problem });
  });

function hasSource(image: unknown): boolean {
  return typeof (image as { source?: unknown } | null)?.source === "string";
}

interface LooseConfig {
  images?: Record<string, unknown>;
  imageRules?: unknown;
  environmentSets?: unknown;
  environments?: Record<
    string,
    { from?: unknown; soak?: unknown; policy?: Record<string, unknown> } | undefined
  >;
  registries?: Record<string, { username?: unknown; passwordEnv?: unknown } | undefined>;
}

/**
 * Checks across fields (unknown environments and images, promotion cycles). Tolerant of data that
 * failed the schema, so that `loadConfig` can report these alongside type errors, all at once.
 */
export function crossFieldProblems(data: unknown): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  if (typeof data !== "object" || data === null) return problems;
  const config = data as LooseConfig;
  const images = typeof config.images === "object" && config.images !== null ? config.images : {};
  const environments =
    typeof config.environments === "object" && config.environments !== null ? config.environments : {};
  const names = Object.keys(environments);
  // Names generated later (src/core/generate) are checked once the config is expanded.
  const imagesGenerated = Array.isArray(config.imageRules) && config.imageRules.length > 0;
  const environmentsGenerated = Array.isArray(config.environmentSets) && config.environmentSets.length > 0;
  for (const [name, image] of Object.entries(images)) {
    if (needsSource((image as { policy?: unknown } | null)?.policy) && !hasSource(image))
      problems.push({
        path: ["images", name, "policy", "verify", "attestations"],
        message: "attestations are checked against the image's source: set source (owner/repo) on the image",
      });
  }
  for (const [name, environment] of Object.entries(environments)) {
    if (typeof environment !== "object" || environment === null) continue;
    if (typeof environment.from === "string" && !names.includes(environment.from) && !environmentsGenerated) {
      problems.push({
        path: ["environments", name, "from"],
        message: `unknown environment ${JSON.stringify(environment.from)}`,
      });
    }
    if (typeof environment.policy === "object" && environment.policy !== null) {
      for (const [image, override] of Object.entries(environment.policy)) {
        const path = ["environments", name, "policy", image];
        if (image in images && needsSource(override) && !hasSource(images[image]))
          problems.push({
            path: [...path, "verify", "attestations"],
            message:
              "attestations are checked against the image's source: set source (owner/repo) on the image",
          });
        if (!(image in images)) {
          if (!imagesGenerated) problems.push({ path, message: `unknown image ${JSON.stringify(image)}` });
        } else
          problems.push(
            ...mergedPolicyProblems((images[image] as { policy?: unknown } | null)?.policy, override).map(
              (problem) => ({ path: [...path, ...problem.path], message: problem.message }),
            ),
          );
      }
    }
    if (environment.soak !== undefined && environment.from === undefined) {
      problems.push({
        path: ["environments", name, "soak"],
        message: "soak needs from (the environment that must soak)",
      });
    }
  }
  for (const name of names) {
    const seen = [name];
    let current = environments[name]?.from;
    while (typeof current === "string" && names.includes(current)) {
      if (seen.includes(current)) {
        problems.push({
          path: ["environments", name, "from"],
          message: `promotion cycle: ${[...seen, current].join(" -> ")}`,
        });
        break;
      }
      seen.push(current);
      current = environments[current]?.from;
    }
  }
  const registries =
    typeof config.registries === "object" && config.registries !== null ? config.registries : {};
  for (const [host, registry] of Object.entries(registries)) {
    if (
      typeof registry === "object" &&
      registry !== null &&
      registry.passwordEnv !== undefined &&
      registry.username === undefined
    ) {
      problems.push({ path: ["registries", host, "username"], message: "passwordEnv needs username" });
    }
  }
  return problems;
}

export type FerryConfig = z.infer<typeof configSchema>;
export type ImageConfig = FerryConfig["images"][string];
export type EnvironmentConfig = FerryConfig["environments"][string];
export type RegistryConfig = NonNullable<FerryConfig["registries"]>[string];

/** Environments in promotion order: those without `from` first, then their followers. */
export function environmentOrder(config: FerryConfig): string[] {
  const order: string[] = [];
  const visit = (name: string, depth: number): void => {
    if (order.includes(name) || depth > 64) return;
    const from = config.environments[name]?.from;
    if (from !== undefined) visit(from, depth + 1);
    order.push(name);
  };
  for (const name of Object.keys(config.environments)) visit(name, 0);
  return order;
}

/** The JSON Schema users point their editor at. */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return {
    $id: "https://ferry.dev/schema/ferry.schema.json",
    title: "Ferry configuration (.github/ferry.yml)",
    ...schema,
  };
}
