import type { KubeObject } from "../core/kube-object.js";
import type { SignatureCheck, VerifyPolicy } from "../core/policy/verify.js";

/**
 * Ports: what the use cases in `src/app/` need from the outside world. Adapters in
 * `src/adapters/` implement them; tests fake them at this boundary (docs/testing.md "Fakes and emulators").
 */

/** What a registry knows about one manifest (tag or digest). */
export interface ImageDescription {
  /** The digest of the manifest or index the reference points at, verified locally. */
  digest: string;
  mediaType: string;
  /** `os/arch[/variant]` of every manifest in an index; one entry for a single-platform image. */
  platforms: string[];
  /** Image config `created`, when the registry has it (for newest-build and minAge). */
  created?: Date;
  /** OCI label `org.opencontainers.image.revision`: the source commit it was built from. */
  revision?: string;
  labels: Record<string, string>;
}

/** Reads tags and manifests; implemented over HTTP by `src/adapters/registry/`. */
export interface RegistryReader {
  /** Every tag of `repository` (full name, e.g. `ghcr.io/acme/shop`), across all pages. */
  listTags(repository: string): Promise<string[]>;
  /** HEAD the reference and return its digest (cheap: no body, no rate-limit cost on Docker Hub). */
  resolveDigest(repository: string, reference: string): Promise<string>;
  /** GET the manifest (and its config blob when needed) and describe it. */
  describe(repository: string, reference: string): Promise<ImageDescription>;
  /**
   * Finds the cosign signatures of `digest` (legacy `.sig` tag, OCI 1.1 referrers) and checks them
   * against `verify`. A reader without it cannot verify: a policy with `verify` then admits nothing.
   */
  checkSignature?(repository: string, digest: string, verify: VerifyPolicy): Promise<SignatureCheck>;
}

/**
 * Renders environment paths of a snapshot as the reconciler does (kustomize, helm chart folders,
 * plain manifests; same pins, input checks and confinement), in a private temporary folder, with
 * none of the App's credentials in the renderer's environment. Implemented by
 * `src/adapters/render/`; docs/diff-check.md "Rendering safely".
 */
export interface SnapshotRenderer {
  /**
   * Objects of every path, in order, and one line per path (or Argo CD override) not rendered
   * and why; UserError with the render's code on a limit or refusal.
   */
  render(
    files: ReadonlyMap<string, string>,
    paths: readonly string[],
  ): Promise<{ objects: KubeObject[]; notRendered: string[] }>;
}
