import { type FerryConfig, type RegistryConfig } from "../config/schema.js";
import { environmentPolicy } from "../policy/layered-policy.js";
import { mergePolicyLayers, resolvePolicy, type PolicyInput } from "../policy/schema.js";
import { uniqueName } from "./peer-policy.js";

/**
 * What a peer reader found, before it becomes `.github/ferry.yml`: environments with the images
 * each one updates and the policy it applies to each (docs/config.md "ferry import").
 */
export interface DraftImage {
  /** The peer's name for it (an alias, an ImageRepository), already a valid Ferry name. */
  name: string;
  /** Canonical repository, e.g. docker.io/library/nginx. */
  repository: string;
  policy: PolicyInput;
  helm?: { repository?: string; tag?: string }[];
}

export interface DraftEnvironment {
  name: string;
  paths: string[];
  merge: "auto" | "review";
  images: DraftImage[];
}

export interface ImportDraft {
  environments: DraftEnvironment[];
  registries: Record<string, RegistryConfig>;
  notes: string[];
}

export interface ImportResult {
  /** The config as written to `.github/ferry.yml` (input shape: defaults not filled in). */
  config: Record<string, unknown>;
  /** One line per thing that has no equivalent, or where a guess was made. */
  notes: string[];
}

const POLICY_FIELD_ORDER: (keyof PolicyInput)[] = [
  "strategy",
  "range",
  "prerelease",
  "allow",
  "extract",
  "ignore",
  "order",
  "tag",
  "platforms",
  "pin",
];

function ordered(policy: PolicyInput): PolicyInput {
  const out: Record<string, unknown> = {};
  for (const field of POLICY_FIELD_ORDER) if (policy[field] !== undefined) out[field] = policy[field];
  for (const [field, value] of Object.entries(policy)) if (!(field in out)) out[field] = value;
  return out as PolicyInput;
}

/**
 * The override that makes an environment apply `target` over the image's `base`: the target with
 * its strategy said (which drops the base's fields of other strategies) and its lists said even
 * when empty (which clears the base's). Undefined when the environment applies the base as it is.
 */
function overrideFor(base: PolicyInput, target: PolicyInput): PolicyInput | undefined {
  const same = (a: PolicyInput, b: PolicyInput) =>
    JSON.stringify(resolvePolicy(a)) === JSON.stringify(resolvePolicy(b));
  if (same(base, target)) return undefined;
  const override: PolicyInput = { strategy: target.strategy ?? "semver", ...target };
  if (base.ignore !== undefined && target.ignore === undefined) override.ignore = [];
  if (base.platforms !== undefined && target.platforms === undefined) override.platforms = [];
  // `.*` admits every tag: the way to clear the base's allow.
  if (base.allow !== undefined && target.allow === undefined && base.extract === undefined)
    override.allow = ".*";
  return ordered(override);
}

/** Builds the config: one image per repository, its first policy the default, the others overrides. */
export function assembleConfig(draft: ImportDraft): ImportResult {
  const notes = [...draft.notes];
  const images: Record<string, Record<string, unknown>> = {};
  const byRepository = new Map<string, { name: string; policy: PolicyInput }>();
  const environments: Record<string, Record<string, unknown>> = {};
  const environmentImages = new Map<string, Set<string>>();
  for (const environment of draft.environments) {
    const name = uniqueName(environment.name, Object.keys(environments));
    if (name !== environment.name)
      notes.push(`environment ${environment.name} appears twice: the second is named ${name}`);
    const overrides: Record<string, PolicyInput> = {};
    const used = new Set<string>();
    for (const image of environment.images) {
      let known = byRepository.get(image.repository);
      if (known === undefined) {
        known = { name: uniqueName(image.name, Object.keys(images)), policy: ordered(image.policy) };
        byRepository.set(image.repository, known);
        const entry: Record<string, unknown> = { repository: image.repository };
        if (Object.keys(known.policy).length > 0) entry.policy = known.policy;
        if (image.helm !== undefined && image.helm.length > 0) entry.helm = image.helm;
        images[known.name] = entry;
      } else {
        if (image.helm !== undefined && image.helm.length > 0) {
          const entry = images[known.name]!;
          const helm = (entry.helm as unknown[] | undefined) ?? [];
          for (const keys of image.helm)
            if (!helm.some((other) => JSON.stringify(other) === JSON.stringify(keys))) helm.push(keys);
          entry.helm = helm;
        }
        const override = overrideFor(known.policy, image.policy);
        if (override !== undefined) overrides[known.name] = override;
      }
      used.add(known.name);
    }
    environmentImages.set(name, used);
    const entry: Record<string, unknown> = {
      paths: environment.paths,
      update: "auto",
      merge: environment.merge,
    };
    if (Object.keys(overrides).length > 0) entry.policy = overrides;
    environments[name] = entry;
  }
  for (const [environment, used] of environmentImages)
    for (const image of Object.keys(images))
      if (!used.has(image))
        notes.push(
          `image ${image} is not updated in environment ${environment} by the peer; Ferry updates every image in every environment, and ferry check reports an image its paths do not reference`,
        );
  const config: Record<string, unknown> = { images, environments };
  if (Object.keys(draft.registries).length > 0) config.registries = draft.registries;
  checkOverrides(config, draft, notes);
  return { config, notes };
}

/** Each environment must apply exactly the policy the peer applied there; say so where it cannot. */
function checkOverrides(config: Record<string, unknown>, draft: ImportDraft, notes: string[]): void {
  const typed = config as unknown as FerryConfig;
  const names = Object.keys(typed.environments);
  draft.environments.forEach((environment, index) => {
    const name = names[index]!;
    for (const image of environment.images) {
      const imageName = Object.entries(typed.images).find(
        ([, entry]) => entry.repository === image.repository,
      )?.[0];
      if (imageName === undefined) continue;
      const applied = environmentPolicy(typed, name, imageName);
      const wanted = resolvePolicy(mergePolicyLayers(image.policy));
      if (applied.allow === ".*" && wanted.allow === undefined) delete applied.allow;
      if (JSON.stringify(applied) !== JSON.stringify(wanted))
        notes.push(
          `environment ${name} applies a policy to ${imageName} that differs from the peer's there (the image's default sets a field the override cannot unset): check environments.${name}.policy.${imageName}`,
        );
    }
  });
}

/** One YAML document of the input, with the file it came from. */
export interface PeerDocument {
  file: string;
  value: Record<string, unknown>;
}
