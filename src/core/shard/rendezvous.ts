/**
 * Who scans what: rendezvous (highest random weight) hashing of the periodic scan's work over the
 * live members (Thaler and Ravishankar, "Using name-based mappings to increase hit rates", 1998).
 * Every member computes the same answer from the same member list, with no coordination beyond
 * that list; when a member joins or leaves, only the keys it wins or held move (about 1/N).
 *
 * Only the periodic scan is sharded: webhook work stays with whichever replica receives it.
 * A very large installation is split further: its repositories are hashed over the members too.
 */
import { createHash } from "node:crypto";

/** The 64-bit weight of `key` for `member` (the first 8 bytes of sha256, as a bigint). */
function weight(member: string, key: string): bigint {
  return createHash("sha256").update(member).update("\0").update(key).digest().readBigUInt64BE(0);
}

/** The member that owns `key`, or undefined when there are no members. Ties go to the smaller name. */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1n;
  for (const member of members) {
    const w = weight(member, key);
    if (w > bestWeight || (w === bestWeight && best !== undefined && member < best)) {
      best = member;
      bestWeight = w;
    }
  }
  return best;
}

export interface ScanInstallation {
  id: number;
  /** Its repositories, when known; a list longer than `largeInstallationRepositories` is split. */
  repositories?: readonly string[];
}

export interface ScanShareOptions {
  /** An installation with more repositories than this is split by repository (default 500). */
  largeInstallationRepositories?: number;
}

export const DEFAULT_LARGE_INSTALLATION_REPOSITORIES = 500;

/** What one member scans of one installation: all of it, some of its repositories, or nothing. */
export type InstallationShare =
  | { installationId: number; scope: "all" }
  | { installationId: number; scope: "repositories"; repositories: string[] }
  | { installationId: number; scope: "none" };

export function installationKey(id: number): string {
  return `installation/${id}`;
}

export function repositoryKey(installationId: number, repository: string): string {
  return `installation/${installationId}/repository/${repository.toLowerCase()}`;
}

export function isLargeInstallation(installation: ScanInstallation, options: ScanShareOptions = {}): boolean {
  const limit = options.largeInstallationRepositories ?? DEFAULT_LARGE_INSTALLATION_REPOSITORIES;
  return (installation.repositories?.length ?? 0) > limit;
}

/**
 * `self`'s share of one installation among `members`. An empty member list (this replica lost its
 * own Lease) owns nothing: a member that cannot prove it is live does not scan.
 */
export function shareOf(
  installation: ScanInstallation,
  members: readonly string[],
  self: string,
  options: ScanShareOptions = {},
): InstallationShare {
  const installationId = installation.id;
  if (!members.includes(self)) return { installationId, scope: "none" };
  if (isLargeInstallation(installation, options)) {
    const repositories = installation.repositories!.filter(
      (repository) => ownerOf(repositoryKey(installationId, repository), members) === self,
    );
    return { installationId, scope: "repositories", repositories };
  }
  return ownerOf(installationKey(installationId), members) === self
    ? { installationId, scope: "all" }
    : { installationId, scope: "none" };
}

/** The installation ids `self` owns whole among `members` (the scan's shard, before splitting). */
export function installationShard(
  ids: readonly number[],
  members: readonly string[],
  self: string,
): number[] {
  if (!members.includes(self)) return [];
  return ids.filter((id) => ownerOf(installationKey(id), members) === self);
}
