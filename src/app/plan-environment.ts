import type { FerryConfig } from "../core/config/schema.js";
import { environmentPolicy } from "../core/config/schema.js";
import { FerryError, UserError } from "../core/errors.js";
import type { SecretRedactor } from "../core/redact.js";
import { describeVersion, isValidDigest, shortDigest } from "../core/image-ref.js";
import type { Policy } from "../core/policy/schema.js";
import { notSignedReason, type SignatureCheck, type VerifyPolicy } from "../core/policy/verify.js";
import {
  isNewer,
  mayDowngrade,
  metadataNeeds,
  outsidePolicyNotice,
  rankTags,
  selectTag,
  type Selection,
  type TagCandidate,
} from "../core/policy/select-tag.js";
import { currentImageIn, type FindOptions } from "../core/targets/index.js";
import { parseYaml, type ParsedYaml } from "../core/targets/yaml-tree.js";
import { updateImage } from "../core/yaml-edit/update-image.js";
import { gateWaitMessage } from "../core/policy/ci-gating.js";
import { errorText } from "./error-text.js";
import type { ImageDescription, RegistryReader } from "./ports.js";

/** Where an environment's files come from: a local checkout (CLI) or the Git Data API (app). */
export interface FileSource {
  /** Repo-relative paths of the YAML files under `paths`; refuses symlinks and paths outside the repo. */
  listFiles(paths: string[]): Promise<string[]>;
  readFile(path: string): Promise<string>;
  /** Files left out of `listFiles` so far, each with the reason (e.g. over the size limit). */
  skipped?(): SkippedFile[];
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface PlannedEdit {
  file: string;
  line: number;
  field: string;
  from: string;
  to: string;
}

export interface ImageChange {
  image: string;
  repository: string;
  from: { tag?: string; digest?: string };
  to: { tag?: string; digest: string };
  reason: string;
  /** Source commit the image was built from (OCI revision label), when known. */
  revision?: string;
  edits: PlannedEdit[];
}

export interface EnvironmentPlan {
  environment: string;
  changes: ImageChange[];
  /** `error`: the registry could not be read for this image (only with `onRegistryError: "report"`). */
  unchanged: { image: string; reason: string; error?: true }[];
  /** path → full new content, changed files only. */
  files: Record<string, string>;
  /**
   * What a human should know although the plan is what the policy says: a running tag outside
   * the policy (kept, or moved back with allowDowngrade). Shown by `ferry plan` and the dashboard.
   */
  notices: { image: string; message: string }[];
}

export interface PlanDependencies {
  registry: RegistryReader;
  files: FileSource;
  now: Date;
  /** Redacts registry errors that become plan reasons (error-text.ts). */
  secrets?: SecretRedactor | undefined;
}

export interface PlanOptions {
  /** Exact values for promotion and rollback; may go backwards, bypass policy and holds. */
  pins?: Record<string, { tag?: string; digest: string }>;
  /** Never propose a tag at or below this one (holds lifted after a human revert, rejected versions). */
  floor?: Record<string, string>;
  /** Only these images are planned (default: all). */
  images?: string[];
  /**
   * A registry error for one image: `throw` (default: the app must not act on a partial plan,
   * e.g. close a PR as no longer wanted because one read failed) or `report` it as that image's
   * unchanged reason and plan the others (`ferry plan`).
   */
  onRegistryError?: "throw" | "report";
  /** CI gating: is this tag eligible (its source commit passed CI)? A string is the reason it is not. */
  eligible?: (image: string, tag: string, description: ImageDescription) => Promise<boolean | string>;
}

/** How many candidate tags are described (manifest + config GET) before giving up on metadata policies. */
const MAX_DESCRIBED_CANDIDATES = 50;

export interface CurrentImage {
  tag?: string;
  digest?: string;
  file: string;
  line: number;
}

/** What each image runs in an environment, read from its files (first reference wins). */
export async function currentImages(
  files: FileSource,
  config: FerryConfig,
  environment: string,
): Promise<Record<string, CurrentImage>> {
  const texts = await readEnvironment(files, config, environment);
  const parses = new ParseCache();
  const result: Record<string, CurrentImage> = {};
  for (const [name, image] of Object.entries(config.images)) {
    const found = findCurrent(texts, image.repository, findOptions(config, name), parses);
    if (found) result[name] = found;
  }
  return result;
}

/**
 * Plans one environment: for each image, the tag its policy admits (or the pinned value), and
 * the byte-exact edits to its files. Pure of side effects apart from registry reads; the result
 * is data for an executor (a PR, or `ferry plan`'s output).
 */
export async function planEnvironment(
  deps: PlanDependencies,
  config: FerryConfig,
  environment: string,
  options: PlanOptions = {},
): Promise<EnvironmentPlan> {
  if (!(environment in config.environments))
    throw new UserError("unknown-environment", `unknown environment ${JSON.stringify(environment)}`);
  const texts = await readEnvironment(deps.files, config, environment);
  const working = new Map(texts);
  const parses = new ParseCache();
  const plan: EnvironmentPlan = { environment, changes: [], unchanged: [], files: {}, notices: [] };
  const names = Object.keys(config.images).filter((name) => !options.images || options.images.includes(name));
  const choose = (name: string, current: CurrentImage): Promise<Target> => {
    const pin = options.pins?.[name];
    const repository = config.images[name]!.repository;
    return pin
      ? pinnedTarget(deps.registry, repository, pin, environmentPolicy(config, environment, name))
      : chooseTarget(deps, name, repository, environmentPolicy(config, environment, name), current, options);
  };
  // Registry reads for all images start together (the registry client bounds them per registry);
  // the edits below stay in order. A CI gate asks GitHub per tag, so with one the reads stay in
  // order too. An image whose reference an earlier edit changed is chosen again below.
  const early = new Map<string, { current: CurrentImage; target: Promise<Target> }>();
  if (options.eligible === undefined) {
    for (const name of names) {
      let current: CurrentImage | undefined;
      try {
        current = findCurrent(texts, config.images[name]!.repository, findOptions(config, name), parses);
      } catch {
        continue; // reported in order by the loop below
      }
      if (!current) continue;
      const target = choose(name, current);
      target.catch(() => undefined); // awaited (and reported) by the loop below
      early.set(name, { current, target });
    }
  }

  for (const name of names) {
    const image = config.images[name]!;
    const policy = environmentPolicy(config, environment, name);
    const find = findOptions(config, name);
    const current = findCurrent(working, image.repository, find, parses);
    if (!current) {
      plan.unchanged.push({
        image: name,
        reason: `not referenced in ${config.environments[environment]!.paths.join(", ")}`,
      });
      continue;
    }
    const pin = options.pins?.[name];
    const prefetched = early.get(name);
    let target: Target;
    try {
      target =
        prefetched && sameVersion(prefetched.current, current)
          ? await prefetched.target
          : await choose(name, current);
    } catch (error) {
      if (options.onRegistryError !== "report" || !(error instanceof FerryError)) throw error;
      plan.unchanged.push({
        image: name,
        reason: `registry error: ${errorText(error, deps.secrets)}`,
        error: true,
      });
      continue;
    }
    if (target.notice !== undefined) plan.notices.push({ image: name, message: target.notice });
    if ("unchanged" in target) {
      plan.unchanged.push({ image: name, reason: target.unchanged });
      continue;
    }
    // A pinned promotion carries the exact digest upstream runs, whatever the environment's pin.
    const pinMode = pin && policy.pin === "tag" ? "digest" : policy.pin;
    const edits: PlannedEdit[] = [];
    for (const [file, text] of working) {
      const update = {
        image: image.repository,
        pin: pinMode,
        digest: target.digest,
        ...(target.tag !== undefined ? { tag: target.tag } : {}),
      };
      const result = updateImage(text, update, find);
      if (result.edits.length === 0) continue;
      working.set(file, result.text);
      for (const edit of result.edits)
        edits.push({ file, line: edit.line, field: edit.field, from: edit.from, to: edit.to });
    }
    if (edits.length === 0) {
      plan.unchanged.push({ image: name, reason: `already at ${describeVersion(target)}` });
      continue;
    }
    const change: ImageChange = {
      image: name,
      repository: image.repository,
      from: {
        ...(current.tag !== undefined ? { tag: current.tag } : {}),
        ...(current.digest !== undefined ? { digest: current.digest } : {}),
      },
      to: { ...(target.tag !== undefined ? { tag: target.tag } : {}), digest: target.digest },
      reason: target.reason,
      edits,
    };
    if (target.revision !== undefined) change.revision = target.revision;
    plan.changes.push(change);
  }
  for (const [file, text] of working) {
    if (texts.get(file) !== text) plan.files[file] = text;
  }
  return plan;
}

type Target = (
  { tag?: string; digest: string; reason: string; revision?: string } | { unchanged: string }
) & { notice?: string };

async function pinnedTarget(
  registry: RegistryReader,
  repository: string,
  pin: { tag?: string; digest: string },
  policy: Policy,
): Promise<Target> {
  if (!isValidDigest(pin.digest))
    throw new UserError("invalid-digest", `invalid digest ${JSON.stringify(pin.digest)}`);
  // The pinned digest must exist: a promotion never writes a reference the registry cannot serve.
  const description = await registry.describe(repository, pin.digest);
  // A promotion re-checks the exact digest it carries: upstream having run it proves nothing.
  if (policy.verify !== undefined) {
    const check = await checkSignature(registry, repository, description.digest, policy.verify);
    if (!check.verified) {
      const reason = notSignedReason(
        pin.tag ?? shortDigest(description.digest),
        policy.verify,
        `${shortDigest(description.digest)}: ${check.reason}`,
      );
      return { unchanged: reason, notice: reason };
    }
  }
  const target: Target = {
    digest: description.digest,
    reason: `pinned to ${pin.tag ?? ""}@${shortDigest(pin.digest)}`,
  };
  if (pin.tag !== undefined) target.tag = pin.tag;
  if (description.revision !== undefined) target.revision = description.revision;
  return target;
}

async function chooseTarget(
  deps: PlanDependencies,
  name: string,
  repository: string,
  policy: Policy,
  current: CurrentImage,
  options: PlanOptions,
): Promise<Target> {
  const target = await chooseByPolicy(deps, name, repository, policy, current, options);
  // Whichever route chose, a running tag outside the policy is worth a notice when it stays.
  if (target.notice === undefined && "unchanged" in target) {
    const notice = outsidePolicyNotice(policy, current.tag);
    if (notice !== undefined) target.notice = notice;
  }
  return target;
}

async function chooseByPolicy(
  deps: PlanDependencies,
  name: string,
  repository: string,
  policy: Policy,
  current: CurrentImage,
  options: PlanOptions,
): Promise<Target> {
  if (policy.strategy === "digest") {
    const tag = policy.tag!;
    const description = await deps.registry.describe(repository, tag);
    if (current.digest === description.digest)
      return { unchanged: `${tag} is still ${shortDigest(description.digest)}` };
    if (policy.verify !== undefined) {
      const check = await checkSignature(deps.registry, repository, description.digest, policy.verify);
      if (!check.verified) {
        const reason = notSignedReason(
          tag,
          policy.verify,
          `${shortDigest(description.digest)}: ${check.reason}`,
        );
        return { unchanged: reason, notice: reason };
      }
    }
    const target: Target = {
      tag,
      digest: description.digest,
      reason: `${tag} moved to ${shortDigest(description.digest)}`,
    };
    if (description.revision !== undefined) target.revision = description.revision;
    return target;
  }
  const tags = await deps.registry.listTags(repository);
  // A floor keeps Ferry from going back up to a tag a human reverted from; moving back on purpose
  // (allowDowngrade, running tag outside the policy) goes down, and the merge sets the new floor.
  const floor = mayDowngrade(policy, current.tag) ? undefined : options.floor?.[name];
  let ranked = rankTags(tags, policy, current.tag);
  if (floor !== undefined) ranked = ranked.filter((tag) => isNewer(tag, floor, policy) !== false);
  if (ranked.length === 0) {
    const selection = selectTag(
      tags.map((tag) => ({ tag })),
      withCurrent({ policy, now: deps.now }, current.tag),
    );
    return withNotice(selection, {
      unchanged:
        selection.kind === "none"
          ? selection.reason
          : `no tag newer than ${current.tag ?? "the current one"}`,
    });
  }
  const needs = metadataNeeds(policy);
  const describeAll = policy.strategy === "newest-build";
  const gated = options.eligible !== undefined;
  // Without metadata needs, the best-ranked tag wins; with them (a digest pin included: selectTag
  // refuses a candidate without its digest), walk the ranking best-first and describe only as
  // many tags as it takes (newest-build must see them all, up to a cap).
  if (!needs.created && !needs.platforms && !needs.digest && !describeAll && !gated) {
    // Every tag above the floor, not only the ranked ones, so that the reason counts all the tags
    // the policy admits (as `ferry select` does); selectTag itself skips those not newer than current.
    const aboveFloor =
      floor === undefined ? tags : tags.filter((tag) => isNewer(tag, floor, policy) !== false);
    const selection = selectTag(
      aboveFloor.map((tag) => ({ tag })),
      withCurrent({ policy, now: deps.now }, current.tag),
    );
    if (selection.kind === "none") return withNotice(selection, { unchanged: selection.reason });
    return withNotice(
      selection,
      withDescription(
        await deps.registry.describe(repository, selection.tag),
        selection.tag,
        selection.reason,
      ),
    );
  }
  const candidates: { candidate: TagCandidate; description: ImageDescription }[] = [];
  // The best-ranked tag held back by CI gating or refused for its signature: "why not?" must have
  // an answer, the same one on the plan, /status and the dashboard.
  let heldBack: string | undefined;
  for (const tag of ranked.slice(0, MAX_DESCRIBED_CANDIDATES)) {
    const description = await deps.registry.describe(repository, tag);
    const candidate: TagCandidate = { tag, digest: description.digest, platforms: description.platforms };
    if (description.created) candidate.created = description.created;
    const gate = options.eligible ? await options.eligible(name, tag, description) : true;
    if (gate !== true) {
      heldBack ??= gateWaitMessage(tag, gate === false ? "its source commit has not passed CI" : gate);
      continue;
    }
    if (policy.verify !== undefined) {
      // Checked after the cheaper gates; the result goes into the pure selection as data.
      candidate.signature = await checkSignature(
        deps.registry,
        repository,
        description.digest,
        policy.verify,
      );
      if (!candidate.signature.verified) {
        heldBack ??= notSignedReason(tag, policy.verify, candidate.signature.reason);
        continue;
      }
    }
    if (!describeAll) {
      const selection = selectTag([candidate], withCurrent({ policy, now: deps.now }, current.tag));
      if (selection.kind === "selected")
        return withHeldBack(
          withNotice(selection, withDescription(description, tag, selection.reason)),
          heldBack,
        );
      continue;
    }
    candidates.push({ candidate, description });
  }
  if (!describeAll) {
    const checked = Math.min(ranked.length, MAX_DESCRIBED_CANDIDATES);
    if (heldBack !== undefined)
      return {
        unchanged: `${heldBack}; none of the ${checked} newest admitted tags passed ${gated ? "CI gating and " : ""}${policy.verify !== undefined ? "the signature check and " : ""}the policy`,
        notice: heldBack,
      };
    return {
      unchanged: `none of the ${checked} newest admitted tags passed ${gated ? "CI gating and " : ""}the policy`,
    };
  }
  const selection = selectTag(
    candidates.map((c) => c.candidate),
    withCurrent({ policy, now: deps.now }, current.tag),
  );
  if (selection.kind === "none")
    return withHeldBack(
      withNotice(selection, {
        unchanged: heldBack !== undefined ? `${heldBack}; ${selection.reason}` : selection.reason,
      }),
      heldBack,
    );
  const chosen = candidates.find((c) => c.candidate.tag === selection.tag)!;
  return withHeldBack(
    withNotice(selection, withDescription(chosen.description, selection.tag, selection.reason)),
    heldBack,
  );
}

/**
 * A newer tag held back (CI gating, a missing signature) is worth a notice even when an older
 * eligible one is chosen.
 */
function withHeldBack(target: Target, heldBack: string | undefined): Target {
  if (heldBack !== undefined && target.notice === undefined) target.notice = heldBack;
  return target;
}

async function checkSignature(
  registry: RegistryReader,
  repository: string,
  digest: string,
  verify: VerifyPolicy,
): Promise<SignatureCheck> {
  // Fail closed: a reader that cannot look for signatures admits nothing under verify.
  if (registry.checkSignature === undefined)
    return { verified: false, reason: "this registry reader cannot check signatures" };
  return registry.checkSignature(repository, digest, verify);
}

function withNotice(selection: Selection, target: Target): Target {
  if (selection.notice !== undefined) target.notice = selection.notice;
  return target;
}

function withCurrent(
  options: { policy: Policy; now: Date },
  current: string | undefined,
): { policy: Policy; now: Date; current?: string } {
  return current === undefined ? options : { ...options, current };
}

function withDescription(description: ImageDescription, tag: string, reason: string): Target {
  const target: Target = { tag, digest: description.digest, reason };
  if (description.revision !== undefined) target.revision = description.revision;
  return target;
}

function findOptions(config: FerryConfig, name: string): FindOptions {
  const helm = config.images[name]?.helm;
  return { markerName: name, ...(helm ? { helm } : {}) };
}

function sameVersion(a: CurrentImage, b: CurrentImage): boolean {
  return a.tag === b.tag && a.digest === b.digest;
}

/** Each file's text parsed once per plan (again only after an edit changed it). */
class ParseCache {
  private readonly parsed = new Map<string, { text: string; parsed: ParsedYaml }>();

  get(file: string, text: string): ParsedYaml {
    const cached = this.parsed.get(file);
    if (cached && cached.text === text) return cached.parsed;
    const parsed = parseYaml(text);
    this.parsed.set(file, { text, parsed });
    return parsed;
  }
}

function findCurrent(
  texts: Map<string, string>,
  repository: string,
  options: FindOptions,
  parses: ParseCache = new ParseCache(),
): CurrentImage | undefined {
  for (const [file, text] of texts) {
    const found = currentImageIn(parses.get(file, text), repository, { ...options, fileName: file });
    if (found && (found.tag !== undefined || found.digest !== undefined)) {
      const current: CurrentImage = { file, line: found.line };
      if (found.tag !== undefined) current.tag = found.tag;
      if (found.digest !== undefined) current.digest = found.digest;
      return current;
    }
  }
  return undefined;
}

async function readEnvironment(
  files: FileSource,
  config: FerryConfig,
  environment: string,
): Promise<Map<string, string>> {
  const paths = config.environments[environment]?.paths ?? [];
  const list = [...(await files.listFiles(paths))].sort();
  const texts = new Map<string, string>();
  for (const file of list) texts.set(file, await files.readFile(file));
  return texts;
}
