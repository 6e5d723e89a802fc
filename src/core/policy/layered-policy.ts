/**
 * A policy as it applies: the image's own layer, then an environment's override, merged
 * (docs/config.md "Tag policy"). The config schema asks these questions of the layers it validates;
 * planning, `/ferry why` and the import draft ask `environmentPolicy`.
 */
import {
  mergePolicyLayers,
  policyFieldsSchema,
  policyProblems,
  resolvePolicy,
  type Policy,
  type PolicyInput,
} from "./schema.js";

/** Where an environment's policy for an image comes from (a `FerryConfig` is one). */
export interface PolicySources {
  images: Record<string, { policy?: PolicyInput | undefined; source?: string | undefined } | undefined>;
  environments: Record<string, { policy?: Record<string, PolicyInput> | undefined } | undefined>;
}

/** A policy layer that asks for attestations (which are checked against the image's source). */
export function needsSource(policy: unknown): boolean {
  const attestations = (policy as { verify?: { attestations?: unknown } } | null | undefined)?.verify
    ?.attestations;
  return Array.isArray(attestations) && attestations.length > 0;
}

/**
 * What is wrong with an environment's override once merged over the image's policy, as
 * `environmentPolicy` merges them — leaving out what is already wrong with the image's policy on
 * its own, which is reported at the image. Layers that fail their field types are reported by the
 * schema and skipped here.
 */
export function mergedPolicyProblems(
  imagePolicy: unknown,
  override: unknown,
): { path: string[]; message: string }[] {
  const base = policyFieldsSchema.safeParse(imagePolicy ?? {});
  const layer = policyFieldsSchema.safeParse(override);
  if (!base.success || !layer.success) return [];
  const key = (problem: { path: string[]; message: string }) =>
    `${problem.path.join(".")}: ${problem.message}`;
  const reportedAtImage = new Set(policyProblems(base.data).map(key));
  return policyProblems(mergePolicyLayers(base.data, layer.data)).filter(
    (problem) => !reportedAtImage.has(key(problem)),
  );
}

/** The policy an environment applies to an image: the image default, then the environment's override. */
export function environmentPolicy(config: PolicySources, environment: string, image: string): Policy {
  const policy = resolvePolicy(
    config.images[image]?.policy,
    config.environments[environment]?.policy?.[image],
  );
  // Provenance is checked against the image's own source repository, never a field of the policy.
  const source = config.images[image]?.source;
  if (policy.verify?.attestations !== undefined && source !== undefined)
    policy.verify = { ...policy.verify, source: `https://github.com/${source}` };
  return policy;
}
