import { DIGEST_PATTERN, TAG_PATTERN, parseImageRef } from "../../core/image-ref.js";

/**
 * What a registry webhook tells Ferry: "this repository may have changed". Only a hint: the
 * consumer re-reads the registry (HEAD the tag, verify the digest) before acting on it.
 */
export interface RegistryHint {
  /** Registry host as users write it in image references: `ghcr.io`, `docker.io`, `127.0.0.1:5000`. */
  registry: string;
  /** Repository path inside the registry: `acme/shop`, `library/nginx`. */
  repository: string;
  tag?: string;
  digest?: string;
  source: "distribution" | "harbor" | "dockerhub" | "quay" | "generic" | "github";
}

/** The registry repository a hint names, `registry/repository`: the key of its cached tag lists. */
export function hintRepository(hint: RegistryHint): string {
  return `${hint.registry}/${hint.repository}`;
}

/**
 * Builds a hint from untrusted strings, or returns undefined when they do not name a valid
 * repository. Tags and digests are checked against the anchored OCI grammars before anything
 * downstream sees them (docs/reliability.md row 14); an invalid tag is dropped, not passed on.
 */
export function makeHint(
  source: RegistryHint["source"],
  registry: string | undefined,
  repository: unknown,
  tag?: unknown,
  digest?: unknown,
): RegistryHint | undefined {
  if (typeof repository !== "string" || repository.length === 0) return undefined;
  const name = registry ? `${registry}/${repository}` : repository;
  let ref;
  try {
    ref = parseImageRef(name);
  } catch {
    return undefined;
  }
  if (ref.tag !== undefined || ref.digest !== undefined) return undefined;
  const hint: RegistryHint = { registry: ref.registry, repository: ref.repository, source };
  if (typeof tag === "string" && DIGEST_PATTERN.test(tag) && digest === undefined) {
    // Harbor reports a push by digest with the digest in `tag`.
    hint.digest = tag;
  } else if (typeof tag === "string" && TAG_PATTERN.test(tag)) {
    hint.tag = tag;
  }
  if (typeof digest === "string" && DIGEST_PATTERN.test(digest)) hint.digest = digest;
  return hint;
}
