import { NAME_PATTERN } from "../config/names.js";
import { isValidDigest, isValidTag } from "../image-ref.js";
import type { UnitGroup } from "./branch.js";
import { formatHiddenBlock, parseHiddenBlock } from "./markdown.js";

/**
 * The hidden block in every Ferry PR body: what the PR changes, as data. Ferry keeps no state of
 * its own; it reads this back to know what an open or merged PR carries (docs/architecture.md
 * "GitHub conventions"). Parsing validates every field, since anyone with write access can edit a body.
 */
export interface PlanBlockChange {
  image: string;
  repository: string;
  from: { tag?: string; digest?: string };
  to: { tag?: string; digest: string };
  /** Source commit of the new image, when known (CI gating, compare links). */
  revision?: string;
}

export type PlanKind = "bump" | "promote" | "rollback";

export interface PlanBlock {
  version: 1;
  environment: string;
  /** The unit's group (docs/config.md "Grouping"); absent for the environment's default unit. */
  group?: UnitGroup;
  kind: PlanKind;
  changes: PlanBlockChange[];
  /** The base commit the branch was built on. */
  base?: string;
  /** Who asked (promote/rollback), for the audit trail. */
  requestedBy?: string;
  /** The commit Ferry wrote on the PR's branch: only that commit is ever merged or trusted. */
  head?: string;
  /**
   * A MAC over every other field (`planSealInput`), keyed by a secret only Ferry holds: anyone with
   * write access can edit a PR body, so a block is believed only when its seal verifies.
   */
  seal?: string;
}

const NAME = NAME_PATTERN;
const SHA = /^[0-9a-f]{40}$/;
const LOGIN = /^[A-Za-z0-9-]{1,39}(?:\[bot\])?$/;
const REPOSITORY = /^[A-Za-z0-9._:\-/[\]]{1,255}$/;
const SEAL = /^[0-9a-f]{64}$/;

export function formatPlanBlock(block: PlanBlock): string {
  return formatHiddenBlock("plan", block);
}

export function parsePlanBlock(body: string | null | undefined): PlanBlock | undefined {
  const data = parseHiddenBlock("plan", body ?? "") as Record<string, unknown> | undefined;
  if (typeof data !== "object" || data === null || data.version !== 1) return undefined;
  const { environment, group, kind, changes, base, requestedBy, head, seal } = data;
  if (typeof environment !== "string" || !NAME.test(environment)) return undefined;
  if (kind !== "bump" && kind !== "promote" && kind !== "rollback") return undefined;
  if (!Array.isArray(changes)) return undefined;
  const parsed: PlanBlockChange[] = [];
  for (const change of changes) {
    const valid = parseChange(change);
    if (!valid) return undefined;
    parsed.push(valid);
  }
  const block: PlanBlock = { version: 1, environment, kind, changes: parsed };
  if (group !== undefined) {
    const { kind: groupKind, name } = (group ?? {}) as Record<string, unknown>;
    if ((groupKind !== "group" && groupKind !== "image") || typeof name !== "string" || !NAME.test(name))
      return undefined;
    block.group = { kind: groupKind, name };
  }
  if (typeof base === "string" && SHA.test(base)) block.base = base;
  if (typeof requestedBy === "string" && LOGIN.test(requestedBy)) block.requestedBy = requestedBy;
  if (typeof head === "string" && SHA.test(head)) block.head = head;
  if (typeof seal === "string" && SEAL.test(seal)) block.seal = seal;
  return block;
}

/**
 * The bytes a block's seal covers: every field but the seal, in a fixed order, so that the same
 * plan always gives the same input whatever order its JSON came in.
 */
export function planSealInput(block: PlanBlock): string {
  const version = (v: { tag?: string; digest?: string }) => [v.tag ?? null, v.digest ?? null];
  return JSON.stringify([
    "ferry-plan-seal-v1",
    block.environment,
    block.kind,
    block.changes.map((change) => [
      change.image,
      change.repository,
      version(change.from),
      version(change.to),
      change.revision ?? null,
    ]),
    block.base ?? null,
    block.requestedBy ?? null,
    block.head ?? null,
    // Only a unit's block has a group: a default unit's seal is the one it had before groups.
    ...(block.group ? [["group", block.group.kind, block.group.name]] : []),
  ]);
}

function parseChange(value: unknown): PlanBlockChange | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { image, repository, from, to, revision } = value as Record<string, unknown>;
  if (typeof image !== "string" || !NAME.test(image)) return undefined;
  if (typeof repository !== "string" || !REPOSITORY.test(repository)) return undefined;
  const parsedFrom = parseVersion(from, false);
  const parsedTo = parseVersion(to, true);
  if (!parsedFrom || !parsedTo || parsedTo.digest === undefined) return undefined;
  const change: PlanBlockChange = {
    image,
    repository,
    from: parsedFrom,
    to: { ...parsedTo, digest: parsedTo.digest },
  };
  if (typeof revision === "string" && /^[0-9a-f]{7,64}$/.test(revision)) change.revision = revision;
  return change;
}

function parseVersion(
  value: unknown,
  digestRequired: boolean,
): { tag?: string; digest?: string } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { tag, digest } = value as Record<string, unknown>;
  const version: { tag?: string; digest?: string } = {};
  if (tag !== undefined) {
    if (typeof tag !== "string" || !isValidTag(tag)) return undefined;
    version.tag = tag;
  }
  if (digest !== undefined) {
    if (typeof digest !== "string" || !isValidDigest(digest)) return undefined;
    version.digest = digest;
  } else if (digestRequired) return undefined;
  return version;
}

/**
 * Room for the plan block in a PR body: GitHub's 65,536 characters less what the visible text
 * needs at least (the cut table and its note). A unit with more changes than fit is proposed in
 * parts (docs/config.md "Grouping").
 */
export const PLAN_BLOCK_BUDGET = 56_000;

/**
 * How many of `block`'s changes, in order, fit in a block of at most `budget` characters (with
 * the fields written after a plan: head and seal). At least one: a single change always fits.
 */
export function changesThatFit(block: PlanBlock, budget = PLAN_BLOCK_BUDGET): number {
  const sealed = { ...block, changes: [], head: "0".repeat(40), seal: "0".repeat(64) };
  let size = formatPlanBlock(sealed).length;
  let count = 0;
  for (const change of block.changes) {
    const { image, repository, from, to, revision } = change;
    const json = formatHiddenBlock("plan", {
      image,
      repository,
      from,
      to,
      ...(revision ? { revision } : {}),
    });
    size += json.length - "<!-- ferry:plan  -->".length + 1;
    if (size > budget && count > 0) break;
    count++;
  }
  return count;
}
