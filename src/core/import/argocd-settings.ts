import type { RegistryConfig } from "../config/schema.js";
import type { PolicyInput } from "../policy/schema.js";
import type { DraftImage } from "./import-draft.js";
import { checkedPolicy, ferryName, registryVariable, splitImageSpec } from "./peer-policy.js";

/**
 * One Argo CD Image Updater image (an `ImageConfig` of the 1.x `ImageUpdater`, or an alias of the
 * legacy annotations, read into the same shape) as a Ferry image and policy (docs/config.md
 * "ferry import").
 */
export interface ArgoSettings {
  updateStrategy?: string;
  forceUpdate?: boolean;
  allowTags?: string;
  ignoreTags?: string[];
  pullSecret?: string;
  platforms?: string[];
}

export interface ArgoTarget {
  helm?: { name?: string; tag?: string; spec?: string };
  kustomize?: { name?: string };
  plugin?: unknown;
}

export interface ArgoImage {
  alias: string;
  imageName: string;
  settings: ArgoSettings;
  target?: ArgoTarget;
}

/** Later layers win field by field, as the ImageUpdater resolves spec, applicationRef and image settings. */
export function mergeSettings(...layers: (ArgoSettings | undefined)[]): ArgoSettings {
  const merged: ArgoSettings = {};
  for (const layer of layers) if (layer) Object.assign(merged, stripUndefined(layer));
  return merged;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

const STRATEGY: Record<string, PolicyInput["strategy"]> = {
  semver: "semver",
  latest: "newest-build",
  "newest-build": "newest-build",
  name: "alphabetical",
  alphabetical: "alphabetical",
  digest: "digest",
};

/** The Ferry image for one Argo CD image; credentials go to `registries`, never a value. */
export function translateArgoImage(
  image: ArgoImage,
  where: string,
  registries: Record<string, RegistryConfig>,
  notes: string[],
): DraftImage | undefined {
  const what = `${where} image ${image.alias || image.imageName}`;
  let spec: ReturnType<typeof splitImageSpec>;
  try {
    spec = splitImageSpec(image.imageName);
  } catch (error) {
    notes.push(`${what}: ${(error as Error).message}; left out`);
    return undefined;
  }
  const settings = image.settings;
  const raw = settings.updateStrategy?.trim().toLowerCase() ?? "semver";
  let strategy = STRATEGY[raw];
  if (strategy === undefined) {
    notes.push(`${what}: update strategy ${JSON.stringify(raw)} has no equivalent; semver is used`);
    strategy = "semver";
  }
  const policy: PolicyInput = {};
  if (strategy !== "semver") policy.strategy = strategy;
  if (strategy === "semver" && spec.constraint !== undefined) policy.range = spec.constraint;
  if (strategy === "digest") {
    policy.tag = spec.constraint ?? "latest";
    if (spec.constraint === undefined)
      notes.push(`${what}: strategy digest names no tag to follow; guessed latest`);
  } else if (strategy !== "semver" && spec.constraint !== undefined) {
    notes.push(
      `${what}: the tag ${JSON.stringify(spec.constraint)} in imageName constrains nothing under ${strategy}; left out`,
    );
  }
  const allow = settings.allowTags?.trim();
  if (allow !== undefined && allow !== "" && allow.toLowerCase() !== "any") {
    if (allow.startsWith("regexp:")) policy.allow = allow.slice("regexp:".length);
    else {
      // Argo CD matches no tag with a match function it does not know (images.md "Filtering tags").
      notes.push(
        `${what}: allow-tags ${JSON.stringify(allow)} is not regexp: or any, so Argo CD matches no tag; updates are off (ignore: ["*"])`,
      );
      policy.ignore = ["*"];
    }
  }
  const ignore = (settings.ignoreTags ?? []).map((tag) => tag.trim()).filter((tag) => tag !== "");
  if (ignore.length > 0) policy.ignore = [...new Set([...(policy.ignore ?? []), ...ignore])];
  if (strategy === "digest" && (policy.allow !== undefined || policy.ignore !== undefined)) {
    // A followed tag is not filtered: the policy names it.
    notes.push(
      `${what}: allow-tags and ignore-tags do not filter the one tag strategy digest follows; left out`,
    );
    delete policy.allow;
    delete policy.ignore;
  }
  const platforms = (settings.platforms ?? []).map((p) => p.trim()).filter((p) => p !== "");
  if (platforms.length > 0) {
    // Argo CD reads platforms only where it fetches image metadata (images.md "Image platforms").
    if (strategy === "newest-build" || strategy === "digest") policy.platforms = platforms;
    else
      notes.push(
        `${what}: platforms ${platforms.join(",")} have no effect under ${strategy} in Argo CD; left out (Ferry would require them)`,
      );
  }
  if (settings.forceUpdate === true)
    notes.push(`${what}: force-update has no equivalent: Ferry edits references found under the paths`);
  if (settings.pullSecret !== undefined)
    pullSecretRegistry(settings.pullSecret, spec.registry, what, registries, notes);
  const draft: DraftImage = {
    name: ferryName(image.alias || spec.repository.split("/").pop()!, "image"),
    repository: spec.repository,
    policy: checkedPolicy(policy, what, notes),
  };
  const helm = image.target?.helm;
  if (helm !== undefined) {
    if (helm.spec !== undefined)
      notes.push(`${what}: helm image-spec ${helm.spec} (the whole reference in one key) has no equivalent`);
    const keys: { repository?: string; tag?: string } = {};
    if (helm.name !== undefined) keys.repository = helm.name;
    if (helm.tag !== undefined) keys.tag = helm.tag;
    if (keys.repository !== undefined || keys.tag !== undefined) draft.helm = [keys];
  }
  const kustomizeName = image.target?.kustomize?.name;
  if (kustomizeName !== undefined && kustomizeName !== "") {
    let same = false;
    try {
      same = splitImageSpec(kustomizeName).repository === spec.repository;
    } catch {
      same = false;
    }
    if (!same)
      notes.push(
        `${what}: kustomize image-name ${kustomizeName} differs from the image; Ferry edits the kustomization entry named like the repository it reads`,
      );
  }
  if (image.target?.plugin !== undefined)
    notes.push(`${what}: the plugin manifest target (environment variables) has no equivalent`);
  return draft;
}

/**
 * `pullsecret:ns/name` is a Docker config: Ferry reads the operator's FERRY_DOCKER_CONFIG.
 * `secret:ns/name#field` and `env:NAME` hold `user:password`: Ferry reads a password variable
 * the operator exposes and binds to the host. Never a value.
 */
function pullSecretRegistry(
  reference: string,
  host: string,
  what: string,
  registries: Record<string, RegistryConfig>,
  notes: string[],
): void {
  const ref = reference.trim();
  if (ref.startsWith("pullsecret:")) {
    registries[host] = { auth: "dockerconfig" };
    notes.push(
      `${what}: pull secret ${ref.slice("pullsecret:".length)} is a Docker config: give its .dockerconfigjson to Ferry as FERRY_DOCKER_CONFIG, bound with FERRY_DOCKER_CONFIG_HOSTS=${host}`,
    );
  } else if (ref.startsWith("secret:") || ref.startsWith("env:")) {
    const variable = registryVariable(host);
    registries[host] = { username: "CHANGE_ME", passwordEnv: variable };
    const source = ref.startsWith("env:")
      ? `environment variable ${ref.slice(4)}`
      : `secret ${ref.slice(7).replace("#", " field ")}`;
    notes.push(
      `${what}: pull secret: the ${source} holds user:password; set registries.${host}.username to the user and expose the password as ${variable}, bound with ${variable}_HOSTS=${host}`,
    );
  } else {
    notes.push(
      `${what}: pull secret ${ref.split(":")[0]}: has no equivalent; give Ferry the registry's credentials`,
    );
  }
}
