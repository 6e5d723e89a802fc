import * as z from "zod";
import { isDuration } from "../duration.js";
import { isValidTag } from "../image-ref.js";
import { globProblem } from "../patterns/glob.js";
import { compileRange } from "./policy-range.js";
import {
  compileAllow,
  definesGroup,
  describeReference,
  templateReferences,
  type TagPattern,
} from "./tag-pattern.js";
import { resolveVerify, verifySchema, type VerifyPolicy } from "./verify.js";

export const STRATEGIES = ["semver", "numerical", "alphabetical", "newest-build", "digest"] as const;
export type Strategy = (typeof STRATEGIES)[number];

/**
 * One tag policy, as written in `.github/ferry.yml` (docs/config.md "Tag policy").
 * Every field is optional so that environment overrides can be merged field by field over an
 * image's default; `resolvePolicy` fills the defaults.
 */
export const policySchema = z
  .strictObject({
    strategy: z.enum(STRATEGIES).optional().describe("How tags are compared; semver by default."),
    range: z
      .string()
      .optional()
      .describe(
        'semver constraint as Flux, Argo CD Image Updater and Kargo read it (Masterminds/semver v3), e.g. "^1.0.0", "1.2.x", ">=1.2, <2.0", "2.x-0".',
      ),
    prerelease: z.boolean().optional().describe("Admit prereleases (semver); false by default."),
    underscoreIsBuildMetadata: z
      .boolean()
      .optional()
      .describe(
        "Read the first _ of a tag as + (semver build metadata, e.g. 1.0.0_build.7); false by default: such tags are ignored, as Flux, Argo CD and Kargo ignore them.",
      ),
    allow: z
      .string()
      .optional()
      .describe("RE2 regular expression (Go syntax) a tag must match, searched; its groups feed extract."),
    extract: z
      .string()
      .optional()
      .describe(
        "What the strategy compares instead of the whole tag, e.g. $version, ${ts} or $1 (groups of allow).",
      ),
    ignore: z
      .array(
        z.string().superRefine((glob, ctx) => {
          const problem = globProblem(glob, "glob");
          if (problem !== undefined)
            ctx.addIssue({ code: "custom", message: `invalid glob ${JSON.stringify(glob)}: ${problem}` });
        }),
      )
      .optional()
      .describe(
        "Globs of tags never chosen: * ? [a-z] [!a-z] {a,b} @(a|b) ?(…) +(…) *(…), matched in linear time (RE2); at most 1024 characters each.",
      ),
    order: z
      .enum(["asc", "desc"])
      .optional()
      .describe("asc: the highest wins (default); desc: the lowest wins."),
    tag: z.string().optional().describe("For strategy digest: the moving tag to follow, e.g. latest."),
    minAge: z
      .string()
      .optional()
      .describe("A tag must be at least this old, e.g. 1h (needs the image's created date)."),
    platforms: z
      .array(z.string())
      .optional()
      .describe("An image index must contain all of these, e.g. linux/arm64."),
    allowDowngrade: z
      .boolean()
      .optional()
      .describe(
        "When the running tag is outside the policy (a narrowed range, a new ignore), move to the best tag it admits even if older; false by default: Ferry never moves backwards on its own.",
      ),
    pin: z
      .enum(["tag", "digest", "digest-only"])
      .optional()
      .describe("Write the tag (default), tag and digest, or only the digest."),
    verify: verifySchema
      .optional()
      .describe(
        "Only tags whose digest carries a valid cosign signature by this key are eligible (docs/security.md).",
      ),
  })
  .superRefine((policy, ctx) => {
    for (const problem of policyProblems(policy)) ctx.addIssue({ code: "custom", ...problem });
  });

/**
 * The same fields, each checked on its own: an environment's override. Whether an override's
 * fields fit together is decided once it is merged over the image's policy (`crossFieldProblems`
 * in config/schema.ts): `{ extract: $n }` is valid over an image policy whose `allow` defines `n`.
 */
export const policyFieldsSchema = z.strictObject(policySchema.shape);

export type PolicyInput = z.infer<typeof policySchema>;

/** A policy with its defaults filled in, ready for selection. */
export interface Policy {
  strategy: Strategy;
  range?: string;
  prerelease: boolean;
  underscoreIsBuildMetadata: boolean;
  allow?: string;
  extract?: string;
  ignore: string[];
  order: "asc" | "desc";
  tag?: string;
  minAge?: string;
  platforms: string[];
  allowDowngrade: boolean;
  pin: "tag" | "digest" | "digest-only";
  /** Signature policy: only digests signed by this key are chosen or promoted. */
  verify?: VerifyPolicy;
}

const PLATFORM_PATTERN = /^[a-z0-9]+\/[a-z0-9_]+(?:\/[a-z0-9.]+)?$/;

/** Problems that a type cannot express; each names its field. */
export function policyProblems(policy: PolicyInput): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  const strategy = policy.strategy ?? "semver";
  if (policy.range !== undefined) {
    if (strategy !== "semver")
      problems.push({ path: ["range"], message: `range applies only to strategy semver, not ${strategy}` });
    else {
      try {
        compileRange(policy.range, false);
      } catch (error) {
        problems.push({
          path: ["range"],
          message: `invalid semver range: ${(error as Error).message}`,
        });
      }
    }
  }
  let pattern: TagPattern | undefined;
  if (policy.allow !== undefined) {
    try {
      pattern = compileAllow(policy.allow);
    } catch (error) {
      problems.push({
        path: ["allow"],
        message: `invalid RE2 regular expression: ${(error as Error).message}`,
      });
    }
  }
  if (policy.extract !== undefined) {
    const references = templateReferences(policy.extract);
    if (policy.allow === undefined)
      problems.push({ path: ["extract"], message: "extract needs allow with capturing groups" });
    else if (references.length === 0)
      problems.push({
        path: ["extract"],
        message: "extract must reference a group of allow, e.g. $version or $1",
      });
    else if (pattern) {
      for (const reference of references) {
        if (!definesGroup(pattern, reference))
          problems.push({
            path: ["extract"],
            message: `extract references ${describeReference(reference)}, which allow does not define`,
          });
      }
    }
  }
  if (strategy === "digest") {
    if (policy.tag === undefined)
      problems.push({
        path: ["tag"],
        message: "strategy digest needs tag, the moving tag to follow (e.g. latest)",
      });
    if (policy.pin === "tag")
      problems.push({
        path: ["pin"],
        message: "strategy digest must pin a digest (pin: digest or digest-only)",
      });
  } else if (policy.tag !== undefined) {
    problems.push({ path: ["tag"], message: "tag applies only to strategy digest" });
  }
  if (policy.tag !== undefined && !isValidTag(policy.tag))
    problems.push({ path: ["tag"], message: `${JSON.stringify(policy.tag)} is not a valid OCI tag` });
  if (policy.order !== undefined && strategy !== "numerical" && strategy !== "alphabetical") {
    problems.push({
      path: ["order"],
      message: "order applies only to strategies numerical and alphabetical",
    });
  }
  if (policy.prerelease !== undefined && strategy !== "semver") {
    problems.push({ path: ["prerelease"], message: "prerelease applies only to strategy semver" });
  }
  if (policy.underscoreIsBuildMetadata !== undefined && strategy !== "semver") {
    problems.push({
      path: ["underscoreIsBuildMetadata"],
      message: "underscoreIsBuildMetadata applies only to strategy semver",
    });
  }
  if (policy.allowDowngrade !== undefined && strategy === "digest") {
    problems.push({
      path: ["allowDowngrade"],
      message: "allowDowngrade does not apply to strategy digest, which follows one tag",
    });
  }
  if (policy.minAge !== undefined && !isDuration(policy.minAge)) {
    problems.push({
      path: ["minAge"],
      message: `invalid duration ${JSON.stringify(policy.minAge)}: use e.g. 30m, 1h, 2d`,
    });
  }
  for (const [index, platform] of (policy.platforms ?? []).entries()) {
    if (!PLATFORM_PATTERN.test(platform))
      problems.push({
        path: ["platforms", String(index)],
        message: `invalid platform ${JSON.stringify(platform)}: use os/arch[/variant]`,
      });
  }
  return problems;
}

/** Fields that mean something under some strategies only. */
const STRATEGY_FIELDS: Partial<Record<keyof PolicyInput, readonly Strategy[]>> = {
  range: ["semver"],
  prerelease: ["semver"],
  underscoreIsBuildMetadata: ["semver"],
  order: ["numerical", "alphabetical"],
  tag: ["digest"],
  allowDowngrade: ["semver", "numerical", "alphabetical", "newest-build"],
};

/**
 * Merges policy layers field by field, later wins. A layer that sets a strategy drops what earlier
 * layers set only for another strategy: an environment that follows `latest` by digest does not
 * inherit the image's semver `range` (and could not unset it).
 */
export function mergePolicyLayers(...layers: (PolicyInput | undefined)[]): PolicyInput {
  let merged: PolicyInput = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    if (layer.strategy !== undefined) {
      const strategy = layer.strategy;
      merged = Object.fromEntries(
        Object.entries(merged).filter(
          ([field]) => STRATEGY_FIELDS[field as keyof PolicyInput]?.includes(strategy) ?? true,
        ),
      ) as PolicyInput;
    }
    merged = { ...merged, ...layer };
  }
  return merged;
}

/** Merges overrides field by field (`mergePolicyLayers`) and fills the defaults. */
export function resolvePolicy(...layers: (PolicyInput | undefined)[]): Policy {
  const merged = mergePolicyLayers(...layers);
  const strategy = merged.strategy ?? "semver";
  const policy: Policy = {
    strategy,
    prerelease: merged.prerelease ?? false,
    underscoreIsBuildMetadata: merged.underscoreIsBuildMetadata ?? false,
    ignore: merged.ignore ?? [],
    order: merged.order ?? "asc",
    platforms: merged.platforms ?? [],
    allowDowngrade: merged.allowDowngrade ?? false,
    pin: merged.pin ?? (strategy === "digest" ? "digest" : "tag"),
  };
  if (merged.range !== undefined) policy.range = merged.range;
  if (merged.allow !== undefined) policy.allow = merged.allow;
  if (merged.extract !== undefined) policy.extract = merged.extract;
  if (merged.tag !== undefined) policy.tag = merged.tag;
  if (merged.minAge !== undefined) policy.minAge = merged.minAge;
  const verify = resolveVerify(merged.verify);
  if (verify !== undefined) policy.verify = verify;
  return policy;
}
