import type { RegistryConfig } from "../config/schema.js";
import type { PolicyInput } from "../policy/schema.js";
import type { DraftEnvironment, DraftImage, PeerDocument } from "./import-draft.js";
import { checkedPolicy, ferryName, lenientSemverNote, splitImageSpec } from "./peer-policy.js";
import { list, record, str } from "./peer-values.js";

/**
 * Flux image automation (docs/config.md "ferry import"): ImageRepository (what is scanned, with
 * which credentials), ImagePolicy (how a tag is chosen) and ImageUpdateAutomation (which files
 * are updated). Each automation is a Ferry environment updating the policies of its namespace.
 */

export function isFluxDocument(document: PeerDocument): boolean {
  const { apiVersion, kind } = document.value;
  return (
    typeof apiVersion === "string" &&
    apiVersion.startsWith("image.toolkit.fluxcd.io/") &&
    (kind === "ImageRepository" || kind === "ImagePolicy" || kind === "ImageUpdateAutomation")
  );
}

/** The GitRepository an automation checks out names the branch when the automation does not. */
function isGitRepository(document: PeerDocument): boolean {
  const { apiVersion, kind } = document.value;
  return (
    kind === "GitRepository" &&
    typeof apiVersion === "string" &&
    apiVersion.startsWith("source.toolkit.fluxcd.io/")
  );
}

/** What the Flux reader reads: the image objects, and the GitRepositories they check out. */
export function fluxDocuments(documents: PeerDocument[]): PeerDocument[] {
  return documents.filter((document) => isFluxDocument(document) || isGitRepository(document));
}

interface Repository {
  name: string;
  repository: string;
  registry: string;
  ignore: string[];
}

interface Policy {
  key: string;
  namespace: string;
  labels: Record<string, unknown>;
  image: DraftImage;
}

const key = (namespace: string, name: string) => `${namespace}/${name}`;

function identity(document: PeerDocument): {
  name: string;
  namespace: string;
  labels: Record<string, unknown>;
} {
  const metadata = record(document.value.metadata);
  return {
    name: str(metadata.name) ?? "unnamed",
    namespace: str(metadata.namespace) ?? "default",
    labels: record(metadata.labels),
  };
}

/**
 * `markers`: the `{"$imagepolicy": "<namespace>:<name>"}` comments found in the input, by policy
 * key; when there are any, an automation updates the policies marked in the files under its path.
 */
export function readFlux(
  documents: PeerDocument[],
  markers: Map<string, string[]>,
  registries: Record<string, RegistryConfig>,
  notes: string[],
): DraftEnvironment[] {
  const repositories = new Map<string, Repository>();
  for (const document of documents.filter((d) => d.value.kind === "ImageRepository")) {
    const repository = readRepository(document, registries, notes);
    if (repository) repositories.set(key(identity(document).namespace, identity(document).name), repository);
  }
  const policies: Policy[] = [];
  for (const document of documents.filter((d) => d.value.kind === "ImagePolicy")) {
    const policy = readPolicy(document, repositories, notes);
    if (policy) policies.push(policy);
  }
  const environments: DraftEnvironment[] = [];
  for (const document of documents.filter((d) => d.value.kind === "ImageUpdateAutomation")) {
    const { name, namespace } = identity(document);
    const where = `ImageUpdateAutomation ${namespace}/${name}`;
    const spec = record(document.value.spec);
    const update = record(spec.update);
    if (str(update.strategy) !== undefined && str(update.strategy) !== "Setters")
      notes.push(`${where}: update strategy ${str(update.strategy)} has no equivalent`);
    const path =
      (str(update.path) ?? ".")
        .replace(/^\.\/+/, "")
        .replace(/^\/+/, "")
        .replace(/\/+$/, "") || ".";
    const selector = record(record(spec.policySelector).matchLabels);
    if (record(spec.policySelector).matchExpressions !== undefined)
      notes.push(`${where}: policySelector.matchExpressions has no equivalent; matchLabels only`);
    const git = record(spec.git);
    const push = str(record(git.push).branch);
    const source = record(spec.sourceRef);
    const repository = documents.find(
      (d) =>
        isGitRepository(d) &&
        identity(d).name === str(source.name) &&
        identity(d).namespace === (str(source.namespace) ?? namespace),
    );
    const checkout =
      str(record(record(git.checkout).ref).branch) ??
      (repository === undefined ? push : str(record(record(repository.value.spec).ref).branch));
    const merge = push === undefined || push === checkout ? "auto" : "review";
    if (merge === "review")
      notes.push(
        `${where}: pushes to branch ${push}, not the one it checks out; Ferry opens pull requests to the default branch, left for review`,
      );
    if (str(record(git.commit).messageTemplate) !== undefined)
      notes.push(
        `${where}: git.commit.messageTemplate has no equivalent; Ferry writes its own commit and PR text`,
      );
    const anyMarkers = markers.size > 0;
    const images = policies
      .filter((policy) => policy.namespace === namespace)
      .filter((policy) => Object.entries(selector).every(([label, value]) => policy.labels[label] === value))
      .filter(
        (policy) =>
          !anyMarkers ||
          (markers.get(policy.key) ?? []).some(
            (file) => path === "." || file === path || file.startsWith(`${path}/`),
          ),
      )
      .map((policy) => policy.image);
    environments.push({ name: ferryName(name, "default"), paths: [path], merge, images });
  }
  if (environments.length === 0 && policies.length > 0) {
    notes.push(
      "no ImageUpdateAutomation in the input: one environment with paths . is a guess: set its paths",
    );
    environments.push({ name: "default", paths: ["."], merge: "auto", images: policies.map((p) => p.image) });
  }
  const used = new Set(environments.flatMap((environment) => environment.images));
  for (const policy of policies)
    if (!used.has(policy.image))
      notes.push(
        `ImagePolicy ${policy.key}: no automation in the input updates it (by namespace, policySelector and markers); left out`,
      );
  if (environments.some((e) => e.images.some((image) => (image.policy.strategy ?? "semver") === "semver")))
    notes.push(lenientSemverNote("Flux"));
  if (markers.size > 0)
    notes.push(
      'the {"$imagepolicy": …} markers are not needed: Ferry finds references by repository; they may stay',
    );
  return environments;
}

function readRepository(
  document: PeerDocument,
  registries: Record<string, RegistryConfig>,
  notes: string[],
): Repository | undefined {
  const { name, namespace } = identity(document);
  const where = `ImageRepository ${namespace}/${name}`;
  const spec = record(document.value.spec);
  let image: ReturnType<typeof splitImageSpec>;
  try {
    image = splitImageSpec(str(spec.image) ?? "");
  } catch (error) {
    notes.push(`${where}: ${(error as Error).message}; left out`);
    return undefined;
  }
  const host = image.registry;
  const registry: RegistryConfig = { ...registries[host] };
  const provider = str(spec.provider);
  if (provider === "aws" || provider === "gcp" || provider === "azure") {
    registry.auth = provider;
    notes.push(
      `${where}: provider ${provider}: Ferry takes its credentials from its own environment's ${provider} identity, bound by the operator with FERRY_CLOUD_AUTH_${provider.toUpperCase()}_HOSTS=${host}`,
    );
  } else if (spec.secretRef !== undefined) {
    registry.auth = "dockerconfig";
    notes.push(
      `${where}: secret ${namespace}/${str(record(spec.secretRef).name)} is a Docker config: give its .dockerconfigjson to Ferry as FERRY_DOCKER_CONFIG, bound with FERRY_DOCKER_CONFIG_HOSTS=${host}`,
    );
  }
  if (spec.insecure === true) registry.insecure = true;
  if (Object.keys(registry).length > 0) registries[host] = registry;
  for (const field of ["certSecretRef", "proxySecretRef", "serviceAccountName"])
    if (spec[field] !== undefined) notes.push(`${where}: ${field} has no equivalent`);
  const ignore: string[] = [];
  const exclusions = spec.exclusionList === undefined ? [DEFAULT_EXCLUSION] : list(spec.exclusionList);
  for (const exclusion of exclusions) {
    const glob = typeof exclusion === "string" ? exclusionGlob(exclusion) : undefined;
    if (glob !== undefined) ignore.push(glob);
    else
      notes.push(
        `${where}: exclusionList ${JSON.stringify(exclusion)} has no equivalent (ignore takes globs); add a glob to the policy's ignore`,
      );
  }
  return { name, repository: image.repository, registry: host, ignore };
}

const DEFAULT_EXCLUSION = "^.*\\.sig$";

/** The exclusions that are globs in disguise: `^.*\.sig$` and anchored literals. */
function exclusionGlob(pattern: string): string | undefined {
  if (pattern === DEFAULT_EXCLUSION) return "*.sig";
  const literal = /^\^((?:[A-Za-z0-9_-]|\\\.)+)\$$/.exec(pattern)?.[1];
  return literal?.replace(/\\\./g, ".");
}

function readPolicy(
  document: PeerDocument,
  repositories: Map<string, Repository>,
  notes: string[],
): Policy | undefined {
  const { name, namespace, labels } = identity(document);
  const where = `ImagePolicy ${namespace}/${name}`;
  const spec = record(document.value.spec);
  const ref = record(spec.imageRepositoryRef);
  const repository = repositories.get(key(str(ref.namespace) ?? namespace, str(ref.name) ?? ""));
  if (repository === undefined) {
    notes.push(`${where}: its ImageRepository ${str(ref.name)} is not in the input; left out`);
    return undefined;
  }
  const rule = record(spec.policy);
  const policy: PolicyInput = {};
  if (rule.semver !== undefined) {
    const range = str(record(rule.semver).range);
    if (range !== undefined) policy.range = range;
  } else if (rule.numerical !== undefined || rule.alphabetical !== undefined) {
    const strategy = rule.numerical !== undefined ? "numerical" : "alphabetical";
    policy.strategy = strategy;
    if (str(record(rule[strategy]).order) === "desc") policy.order = "desc";
  } else {
    notes.push(`${where}: no semver, numerical or alphabetical policy; semver is used`);
  }
  const filter = record(spec.filterTags);
  if (str(filter.pattern) !== undefined && str(filter.pattern) !== "") policy.allow = str(filter.pattern)!;
  if (str(filter.extract) !== undefined && str(filter.extract) !== "") policy.extract = str(filter.extract)!;
  // A Cosign .sig tag sorts among names; semver and numbers never read one.
  const ignore = repository.ignore.filter((glob) => glob !== "*.sig" || policy.strategy === "alphabetical");
  if (ignore.length > 0) policy.ignore = ignore;
  const reflection = str(spec.digestReflectionPolicy);
  if (reflection === "Always" || reflection === "IfNotPresent")
    notes.push(`${where}: digestReflectionPolicy ${reflection}: set pin: digest to write digests`);
  return {
    key: key(namespace, name),
    namespace,
    labels,
    image: {
      name: ferryName(repository.name, "image"),
      repository: repository.repository,
      policy: checkedPolicy(policy, where, notes),
    },
  };
}
