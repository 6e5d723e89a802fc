import { parseDuration } from "../duration.js";
import { shortDigest } from "../image-ref.js";
import type { Policy } from "./schema.js";
import type { SemVer } from "semver";
import { compileTagOrder, NOT_ADMITTED, PLAIN, type MainVersion, type TagOrder } from "./tag-order.js";
import { describeSigner, type SignatureCheck } from "./verify.js";

/**
 * Tag selection (docs/config.md "Tag policy"): pure, `now` is a parameter, diagnostics are returned
 * as a one-line reason. One pass over the candidates, no sort: 100,000 tags must stay cheap.
 */

export interface TagCandidate {
  tag: string;
  /** The image config's `created` date (needed by newest-build and minAge). */
  created?: Date;
  /** The manifest or index digest (needed by strategy digest and pin digest/digest-only). */
  digest?: string;
  /** `os/arch[/variant]` of each manifest of an index (needed by platforms). */
  platforms?: string[];
  /** The signature check of `digest` under `policy.verify` (needed when the policy has verify). */
  signature?: SignatureCheck;
}

/**
 * `notice`: the running tag is outside the policy (a narrowed range, a new ignore or allow) and
 * the choice stays put or moves back because of it; for the plan and the dashboard.
 */
export type Selection =
  | { kind: "selected"; tag: string; digest?: string; reason: string; notice?: string }
  | { kind: "none"; reason: string; notice?: string };

export interface SelectOptions {
  policy: Policy;
  /** The tag the environment runs now; nothing older or equal is chosen. */
  current?: string;
  /** The digest the environment runs now (strategy digest follows a moving tag by digest). */
  currentDigest?: string;
  now: Date;
}

// Compiling a policy (regex, globs, semver range) once per policy object, not once per call:
// an adapter may call selectTag and rankTags repeatedly with the same resolved policy.
const compiled = new WeakMap<Policy, TagOrder>();

function tagOrderOf(policy: Policy): TagOrder {
  let order = compiled.get(policy);
  if (order === undefined) {
    order = compileTagOrder(policy);
    compiled.set(policy, order);
  }
  return order;
}

/** Which image metadata the policy needs, so that an adapter fetches only that (and lazily). */
export function metadataNeeds(policy: Policy): {
  created: boolean;
  platforms: boolean;
  digest: boolean;
  signature: boolean;
} {
  return {
    created: policy.strategy === "newest-build" || policy.minAge !== undefined,
    platforms: policy.platforms.length > 0,
    digest: policy.strategy === "digest" || policy.pin !== "tag" || policy.verify !== undefined,
    signature: policy.verify !== undefined,
  };
}

/**
 * The running tag is one the policy can order but no longer admits: running 2.0.0 under range
 * `1.x`, or a tag a new `ignore` names. Argo CD Image Updater then moves to the best tag the
 * constraint admits, older or not (update-strategies.md: the current tag need not match); Ferry
 * does that only with `allowDowngrade`, and otherwise says so (`outsidePolicyNotice`).
 */
export function isOutsidePolicy(policy: Policy, current: string | undefined): boolean {
  if (current === undefined || policy.strategy === "digest") return false;
  const order = tagOrderOf(policy);
  return order.read(current) !== undefined && order.admit(current) === undefined;
}

/** Whether the choice may go below the running tag: only with allowDowngrade and a current tag outside the policy. */
export function mayDowngrade(policy: Policy, current: string | undefined): boolean {
  return policy.allowDowngrade && isOutsidePolicy(policy, current);
}

/**
 * The one-line notice for a running tag outside the policy, naming the best tag the policy
 * admits when there is one; undefined when the running tag is inside the policy.
 */
export function outsidePolicyNotice(
  policy: Policy,
  current: string | undefined,
  best?: string,
): string | undefined {
  if (!isOutsidePolicy(policy, current)) return undefined;
  const order = tagOrderOf(policy);
  const running = `running ${current} is outside the policy (${order.describe})`;
  if (policy.allowDowngrade)
    return best !== undefined
      ? `${running}: allowDowngrade moves it back to ${best}`
      : `${running} and the policy admits no tag to move back to`;
  return `${running}: Ferry does not move backwards on its own${best !== undefined ? ` (the policy's best tag is ${best})` : ""}; set allowDowngrade: true in the policy, or /promote a version, to move back`;
}

/** Is `candidate` newer than `current` under this policy? undefined when current is unreadable by it. */
export function isNewer(candidate: string, current: string, policy: Policy): boolean | undefined {
  const order = tagOrderOf(policy);
  if (order.compare === undefined) return undefined;
  const currentKey = order.read(current);
  if (currentKey === undefined) return undefined;
  const candidateKey = order.read(candidate);
  return candidateKey !== undefined && order.compare(candidateKey, currentKey) > 0;
}

/**
 * Tags admitted by name (allow/ignore/range/validity), best first, only those newer than current.
 * For newest-build/digest: every admitted tag (order unknown without metadata), in input order.
 * Under newest-build the current tag, when listed and readable, comes first: its build date is
 * what "newer" means, so the adapter must fetch it too (selectTag never chooses it).
 * Lets an adapter fetch metadata lazily for the best few only.
 */
export function rankTags(tags: string[], policy: Policy, current?: string): string[] {
  const order = tagOrderOf(policy);
  const compare = order.compare;
  // Moving back on purpose: every admitted tag is a candidate, whatever the running one.
  const currentKey =
    current !== undefined && !mayDowngrade(policy, current) ? order.read(current) : undefined;
  const admitted: { tag: string; key: unknown }[] = [];
  const seen = new Set<string>();
  let currentListed = false;
  for (const tag of tags) {
    if (seen.has(tag)) continue;
    seen.add(tag);
    if (tag === current) {
      currentListed = true;
      continue;
    }
    const key = order.admit(tag);
    if (key === undefined) continue;
    if (compare !== undefined && currentKey !== undefined && compare(key, currentKey) <= 0) continue;
    admitted.push({ tag, key });
  }
  if (compare !== undefined) {
    admitted.sort((a, b) => compare(b.key, a.key) || order.tieBreak(b.key, a.key, b.tag, a.tag));
  }
  const ranked = admitted.map((entry) => entry.tag);
  if (policy.strategy === "newest-build" && currentListed && currentKey !== undefined && ranked.length > 0)
    ranked.unshift(current!);
  return ranked;
}

/** Why a tag the policy admits by name could not be used; counted for the reason line. */
type Unusable = "no-created" | "too-young" | "platforms" | "no-digest" | "unsigned";

interface Admitted {
  candidate: TagCandidate;
  key: unknown;
}

export function selectTag(candidates: TagCandidate[], options: SelectOptions): Selection {
  return select(candidates, options, true);
}

/**
 * `selectTag` without its fast path (`bestByName`): every tag through `admit` and the one general
 * loop. The same selection, by definition; the reference the fast path is tested against.
 */
export function selectTagGeneral(candidates: TagCandidate[], options: SelectOptions): Selection {
  return select(candidates, options, false);
}

function select(candidates: TagCandidate[], options: SelectOptions, fast: boolean): Selection {
  const { policy, current, now } = options;
  const order = tagOrderOf(policy);
  if (policy.strategy === "digest") return selectDigest(candidates, order, options);

  const minAgeMs = policy.minAge !== undefined ? parseDuration(policy.minAge) : undefined;
  const requiredPlatforms = policy.platforms.map(parsePlatform);
  const needsSignature = policy.verify !== undefined;
  const needsDigest = policy.pin !== "tag" || needsSignature;
  const byCreated = policy.strategy === "newest-build";

  // How "newer" is decided: by the tag's key, or (newest-build) by the created date.
  const compare = byCreated
    ? (a: Admitted, b: Admitted) => a.candidate.created!.getTime() - b.candidate.created!.getTime()
    : (a: Admitted, b: Admitted) => order.compare!(a.key, b.key);
  const better = (a: Admitted, b: Admitted) =>
    compare(a, b) || order.tieBreak(a.key, b.key, a.candidate.tag, b.candidate.tag);

  function selected(best: Admitted, admittedCount: number): Selection {
    const unreadableNote =
      current !== undefined && currentEntry === undefined
        ? ` (current ${current} is not a tag ${order.describe} can order)`
        : "";
    const selection: Selection = {
      kind: "selected",
      tag: best.candidate.tag,
      reason: `${order.describe} admits ${best.candidate.tag}, the ${superlative(policy)} of ${admittedCount} admitted ${plural(admittedCount, "tag")}${unreadableNote}`,
    };
    if (best.candidate.digest !== undefined) selection.digest = best.candidate.digest;
    if (downgrading) {
      selection.reason += `; moving from ${current}, outside the policy (allowDowngrade)`;
      selection.notice = outsidePolicyNotice(policy, current, best.candidate.tag)!;
    }
    return selection;
  }

  let currentEntry: Admitted | undefined;
  // Moving back on purpose: no admitted tag is "not newer" than a running tag outside the policy.
  const downgrading = mayDowngrade(policy, current);
  if (current !== undefined && !downgrading) {
    if (byCreated) {
      const listed = candidates.find((candidate) => candidate.tag === current);
      if (listed?.created !== undefined && order.read(current) !== undefined)
        currentEntry = { candidate: listed, key: current };
    } else {
      const key = order.read(current);
      if (key !== undefined) currentEntry = { candidate: { tag: current }, key };
    }
  }

  // A semver policy that needs no metadata: most tags are decided without a SemVer. When nothing
  // is chosen, the general loop below runs for its reason.
  if (
    fast &&
    order.triage !== undefined &&
    minAgeMs === undefined &&
    requiredPlatforms.length === 0 &&
    !needsDigest
  ) {
    const found = bestByName(candidates, order, currentEntry?.key as SemVer | undefined);
    if (found !== undefined) return selected(found.best, found.admittedCount);
  }

  const seen = new Set<string>();
  let distinct = 0;
  let admittedCount = 0;
  let best: Admitted | undefined;
  /** The best admitted tag that is not newer than current, to explain "nothing newer". */
  let bestNotNewer: Admitted | undefined;
  const unusable = new Map<Unusable, number>();
  let unusableNewer = 0;

  for (const candidate of candidates) {
    if (seen.has(candidate.tag)) continue;
    seen.add(candidate.tag);
    distinct++;
    const key = order.admit(candidate.tag);
    if (key === undefined) continue;
    const problem = unusableBecause(candidate, {
      byCreated,
      minAgeMs,
      requiredPlatforms,
      needsDigest,
      needsSignature,
      now,
    });
    const entry: Admitted = { candidate, key };
    // Without a created date, newest-build cannot say whether a tag is newer; other strategies can.
    const comparable = !(byCreated && problem === "no-created");
    const newer = currentEntry === undefined || (comparable && compare(entry, currentEntry) > 0);
    if (problem !== undefined) {
      // Only tags that would otherwise have been chosen are worth explaining.
      if (newer) {
        unusableNewer++;
        unusable.set(problem, (unusable.get(problem) ?? 0) + 1);
      }
      continue;
    }
    admittedCount++;
    if (!newer) {
      if (bestNotNewer === undefined || better(entry, bestNotNewer) > 0) bestNotNewer = entry;
      continue;
    }
    if (best === undefined || better(entry, best) > 0) best = entry;
  }

  if (best !== undefined) return selected(best, admittedCount);
  const none = (reason: string): Selection => {
    const notice = outsidePolicyNotice(policy, current, bestNotNewer?.candidate.tag);
    return notice === undefined ? { kind: "none", reason } : { kind: "none", reason, notice };
  };
  if (unusableNewer > 0) {
    const why = [...unusable]
      .map(([problem, count]) => `${count} ${describeUnusable(problem, policy)}`)
      .join(", ");
    const scope = currentEntry !== undefined ? ` newer than current ${current}` : "";
    return none(
      `${order.describe} admits ${unusableNewer} ${plural(unusableNewer, "tag")}${scope} but none is usable: ${why}`,
    );
  }
  if (admittedCount === 0) {
    return none(`${order.describe} admits none of ${distinct} ${plural(distinct, "tag")}`);
  }
  // Every admitted tag is older than or equal to current (currentEntry is set here).
  const highest = bestNotNewer!;
  if (compare(highest, currentEntry!) === 0) {
    return none(`current ${current} is the newest tag ${order.describe} admits`);
  }
  return none(
    `no tag ${order.describe} admits is newer than current ${current} (the ${superlative(policy)} is ${highest.candidate.tag})`,
  );
}

/**
 * The general loop's choice and admitted count for a semver policy that needs no metadata (every
 * admitted tag is usable), by `triage`: a tag that is not admitted costs one scan, and a plain
 * admitted tag whose X.Y.Z is below the version to beat (the best so far, else the running one)
 * is counted and passed over; only the rest construct a SemVer. Undefined when nothing is chosen.
 */
function bestByName(
  candidates: TagCandidate[],
  order: TagOrder,
  currentKey: SemVer | undefined,
): { best: Admitted; admittedCount: number } | undefined {
  const triage = order.triage!;
  const compare = order.compare!;
  const main: MainVersion = { major: 0, minor: 0, patch: 0 };
  // Distinct admitted tags, as the general loop counts them; a repeated tag never wins (a tie
  // with itself), so the first listing of the chosen tag is the one returned, as there.
  const admitted = new Set<string>();
  let best: Admitted | undefined;
  let floor = currentKey;
  for (const candidate of candidates) {
    const tag = candidate.tag;
    const verdict = triage(tag, main);
    if (verdict === NOT_ADMITTED) continue;
    if (verdict === PLAIN && floor !== undefined && mainBelow(main, floor)) {
      admitted.add(tag);
      continue;
    }
    const key = order.admit(tag);
    if (key === undefined) continue;
    admitted.add(tag);
    if (currentKey !== undefined && compare(key, currentKey) <= 0) continue;
    if (
      best === undefined ||
      (compare(key, best.key) || order.tieBreak(key, best.key, tag, best.candidate.tag)) > 0
    ) {
      best = { candidate, key };
      floor = key as SemVer;
    }
  }
  return best === undefined ? undefined : { best, admittedCount: admitted.size };
}

/** Is X.Y.Z below the version's own (so the version is greater, whatever their prereleases)? */
function mainBelow(main: MainVersion, version: SemVer): boolean {
  if (main.major !== version.major) return main.major < version.major;
  if (main.minor !== version.minor) return main.minor < version.minor;
  return main.patch < version.patch;
}

/** Strategy digest: follow one moving tag (`latest`) and choose it again when its digest moved. */
function selectDigest(candidates: TagCandidate[], order: TagOrder, options: SelectOptions): Selection {
  const { policy, currentDigest, now } = options;
  const moving = policy.tag!;
  const candidate = candidates.find((entry) => entry.tag === moving);
  if (candidate === undefined || order.admit(candidate.tag) === undefined) {
    return {
      kind: "none",
      reason: `${order.describe}: tag ${moving} is not among the ${candidates.length} listed tags`,
    };
  }
  const problem = unusableBecause(candidate, {
    byCreated: false,
    minAgeMs: policy.minAge !== undefined ? parseDuration(policy.minAge) : undefined,
    requiredPlatforms: policy.platforms.map(parsePlatform),
    needsDigest: true,
    needsSignature: policy.verify !== undefined,
    now,
  });
  if (problem !== undefined)
    return {
      kind: "none",
      reason: `${order.describe}: ${moving} is not usable, ${describeUnusable(problem, policy, true)}`,
    };
  const digest = candidate.digest!;
  if (currentDigest === digest)
    return { kind: "none", reason: `${moving} still points to the current digest ${shortDigest(digest)}` };
  const was = currentDigest !== undefined ? ` (was ${shortDigest(currentDigest)})` : "";
  return {
    kind: "selected",
    tag: moving,
    digest,
    reason: `${order.describe}: ${moving} points to ${shortDigest(digest)}${was}`,
  };
}

function unusableBecause(
  candidate: TagCandidate,
  needs: {
    byCreated: boolean;
    minAgeMs: number | undefined;
    requiredPlatforms: PlatformTest[];
    needsDigest: boolean;
    needsSignature: boolean;
    now: Date;
  },
): Unusable | undefined {
  if ((needs.byCreated || needs.minAgeMs !== undefined) && !isDate(candidate.created)) return "no-created";
  // A created date in the future (clock skew, forged config) is too young, never old enough.
  if (needs.minAgeMs !== undefined && needs.now.getTime() - candidate.created!.getTime() < needs.minAgeMs)
    return "too-young";
  if (needs.requiredPlatforms.length > 0 && !hasPlatforms(candidate.platforms, needs.requiredPlatforms))
    return "platforms";
  if (needs.needsDigest && candidate.digest === undefined) return "no-digest";
  // Fail closed: a candidate whose signature was not checked is as unusable as a wrongly signed one.
  if (needs.needsSignature && candidate.signature?.verified !== true) return "unsigned";
  return undefined;
}

function isDate(value: Date | undefined): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

function describeUnusable(problem: Unusable, policy: Policy, singular = false): string {
  switch (problem) {
    case "no-created":
      return singular ? "it has no created date" : "without a created date";
    case "too-young":
      return `${singular ? "it is " : ""}younger than minAge ${policy.minAge}`;
    case "platforms":
      return `${singular ? "it lacks" : "lacking"} a platform of ${policy.platforms.join(", ")}`;
    case "no-digest":
      return singular ? "the registry gave no digest" : `without a digest (pin ${policy.pin} needs one)`;
    case "unsigned":
      return `${singular ? "it is " : ""}not signed by ${describeSigner(policy.verify!)}`;
  }
}

/**
 * A test of one offered `os/arch[/variant]` string against a required platform. A required
 * platform without a variant (`linux/arm64`) is met by any variant (`linux/arm64/v8`), as
 * `docker pull --platform` does; a required variant (`linux/arm/v7`) must be offered exactly.
 */
type PlatformTest = (offered: string) => boolean;

function parsePlatform(text: string): PlatformTest {
  const required = text.toLowerCase();
  const hasVariant = required.split("/").length > 2;
  return (offered) => {
    const have = offered.toLowerCase();
    return (
      have === required ||
      (!hasVariant && have.startsWith(required) && have.charCodeAt(required.length) === 47) /* / */
    );
  };
}

/** An index must offer every required platform. */
function hasPlatforms(offered: string[] | undefined, required: PlatformTest[]): boolean {
  if (offered === undefined) return false;
  return required.every((test) => offered.some(test));
}

function superlative(policy: Policy): string {
  if (policy.strategy === "newest-build") return "newest build";
  return policy.order === "desc" && (policy.strategy === "numerical" || policy.strategy === "alphabetical")
    ? "lowest"
    : "highest";
}

function plural(count: number, noun: string): string {
  return count === 1 ? noun : `${noun}s`;
}
