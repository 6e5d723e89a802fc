import { compileGlob } from "../patterns/glob.js";
import { ATTESTATION_PREDICATE_TYPES, type AttestationType } from "./verify.js";

/**
 * What a SLSA provenance predicate says about who built an image and from what, and whether that
 * is what the policy names. Pure: the adapter verifies the attestation's signature and hands in
 * the predicate. Field paths: v0.2 https://slsa.dev/spec/v0.2/provenance (builder.id,
 * invocation.configSource.uri, materials[].uri); v1 https://slsa.dev/spec/v1.0/provenance
 * (runDetails.builder.id, buildDefinition.externalParameters.workflow.repository,
 * buildDefinition.resolvedDependencies[].uri).
 */

export interface ProvenanceFacts {
  builder?: string;
  sources: string[];
}

export function predicateTypeOf(type: AttestationType): string {
  return ATTESTATION_PREDICATE_TYPES[type];
}

export function provenanceFacts(predicateType: string, predicate: unknown): ProvenanceFacts {
  const p = (predicate ?? {}) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const strings = (values: unknown[]): string[] =>
    values.filter((value): value is string => typeof value === "string");
  if (predicateType === ATTESTATION_PREDICATE_TYPES.slsaprovenance1) {
    const definition = p.buildDefinition ?? {};
    const dependencies = Array.isArray(definition.resolvedDependencies)
      ? definition.resolvedDependencies.slice(0, 64)
      : [];
    return withBuilder(p.runDetails?.builder?.id, [
      ...strings([definition.externalParameters?.workflow?.repository]),
      ...strings(dependencies.map((dependency: { uri?: unknown } | null) => dependency?.uri)),
    ]);
  }
  const materials = Array.isArray(p.materials) ? p.materials.slice(0, 64) : [];
  return withBuilder(p.builder?.id, [
    ...strings([p.invocation?.configSource?.uri]),
    ...strings(materials.map((material: { uri?: unknown } | null) => material?.uri)),
  ]);
}

function withBuilder(builder: unknown, sources: string[]): ProvenanceFacts {
  return typeof builder === "string" ? { builder, sources } : { sources };
}

/** `git+https://github.com/acme/shop@refs/tags/v1` → `https://github.com/acme/shop`. */
export function repositoryOf(uri: string): string {
  return uri
    .replace(/^git\+/, "")
    .replace(/@.*$/, "")
    .replace(/\.git$/, "")
    .replace(/\/$/, "")
    .toLowerCase();
}

/** Why the provenance does not match the policy, or undefined when it does. */
export function provenanceMismatch(
  facts: ProvenanceFacts,
  expected: { builder: string; source?: string },
): string | undefined {
  if (facts.builder === undefined) return "its provenance names no builder";
  if (!compileGlob(expected.builder, "wildcard").test(facts.builder))
    return `its provenance was built by ${facts.builder}, not ${expected.builder}`;
  if (expected.source === undefined)
    return "the image has no source repository to check the provenance against";
  const want = repositoryOf(expected.source);
  if (!facts.sources.some((uri) => repositoryOf(uri) === want)) {
    const named = facts.sources[0] !== undefined ? repositoryOf(facts.sources[0]) : "no repository";
    return `its provenance names source ${named}, not ${want}`;
  }
  return undefined;
}
