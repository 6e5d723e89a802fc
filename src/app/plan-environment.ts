import type { FerryConfig } from "../core/config/schema.js";
import { environmentPolicy } from "../core/policy/layered-policy.js";
import { FerryError, UserError } from "../core/errors.js";
import { describeVersion } from "../core/image-ref.js";
import { currentImageIn, type FindOptions } from "../core/targets/index.js";
import { parseYaml, type ParsedYaml } from "../core/yaml/yaml-tree.js";
import { updateImage } from "../core/yaml-edit/update-image.js";
import { chooseTarget, pinnedTarget, type HeldBack, type Target } from "./choose-target.js";
import { errorText } from "./error-text.js";
import type { CurrentImage, FileSource, PlanDependencies, PlanOptions } from "./plan-inputs.js";

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
  notices: { image: string; message: string; heldBack?: HeldBack }[];
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
    const policy = environmentPolicy(config, environment, name);
    return pin
      ? pinnedTarget(deps.registry, repository, pin, policy)
      : chooseTarget(deps, { name, repository, policy, current }, options);
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
    if (target.notice !== undefined)
      plan.notices.push({
        image: name,
        message: target.notice,
        ...(target.heldBack ? { heldBack: target.heldBack } : {}),
      });
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
      const result = updateImage(text, update, { ...find, fileName: file });
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
