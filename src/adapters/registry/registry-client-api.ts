/** What a registry client offers: the registry port of the use cases, and the reads that signature checks need. */
import type { RegistryReader } from "../../app/ports.js";
import type { SignatureCheck, VerifyPolicy } from "../../core/policy/verify.js";
import type { ArtifactManifest } from "./manifests.js";

export interface RegistryClient extends RegistryReader {
  /**
   * A manifest's JSON by tag or digest, digest-verified; undefined when the registry has none (404).
   * For artifacts that are not images (signatures, referrer indexes).
   */
  manifest(repository: string, reference: string): Promise<ArtifactManifest | undefined>;
  /** A blob by digest, at most `maxBytes`, verified against its digest. */
  blob(repository: string, digest: string, maxBytes: number): Promise<Buffer>;
  /**
   * A file of a Helm HTTP chart repository (`index.yaml`, a chart archive) by absolute URL, at
   * most `maxBytes`, with the guard, limits and host-bound credentials of registry requests.
   */
  download(url: string, maxBytes: number): Promise<Buffer>;
  /**
   * The OCI 1.1 referrers API (`GET /v2/<name>/referrers/<digest>`): the image index listing the
   * manifests whose subject is `digest`, or undefined when the registry does not offer the API (404).
   */
  referrers(repository: string, digest: string): Promise<Record<string, unknown> | undefined>;
  checkSignature(repository: string, digest: string, verify: VerifyPolicy): Promise<SignatureCheck>;
  /**
   * One authenticated `GET /v2/<name>/tags/list?n=1`, resolving when the registry lets this client
   * read `repository` (`ferry check`'s probe): the credential errors are the ones a scan would meet.
   */
  checkAccess(repository: string): Promise<void>;
  /** Drops the cached tag list of a repository (a webhook said it changed). */
  invalidate(repository: string): void;
  /** HTTP requests sent so far, by registry name (token fetches and redirects included). */
  requestCounts(): Record<string, number>;
  /** Per registry: requests started in the last minute and this replica's share of the budget. */
  budgetUse(): Record<string, { used: number; limit: number }>;
}
