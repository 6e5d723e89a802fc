/**
 * The periodic scan over the installations, or with `sharding` this replica's rendezvous share of
 * them (docs/capacity.md): webhook work is never sharded. A very large installation is split by
 * repository among the members once any of them has announced it.
 */
import type { Probot } from "probot";
import type { OctokitLike } from "../adapters/github/github-repo.js";
import { Semaphore } from "../adapters/registry/limits.js";
import type { ScanRound } from "../app/scan-state.js";
import {
  installationKey,
  isLargeInstallation,
  ownerOf,
  shareOf,
  type ScanShareOptions,
} from "../core/shard/rendezvous.js";
import { syncInstallation, type InstallationSyncScope } from "../app/sync-installation.js";
import { type HandlerServices, installationOf } from "../handlers/github/services.js";

/** The periodic scan's view of the fleet (see src/adapters/kubernetes/lease-membership.ts). */
export interface ScanSharding extends ScanShareOptions {
  readonly self: string;
  /** Live members now; empty when this replica cannot prove it is one (it then scans nothing). */
  members(): string[];
  largeInstallations(): Set<number>;
  announceLarge(ids: Iterable<number>): void;
}

/**
 * Installations listed at once by one replica's scan. Bounded so that a round neither starves the
 * replica's own Lease renewals (each listing first mints an installation token) nor acts on
 * ownership checks made long before the reads they allow.
 */
export const SCAN_CONCURRENCY = 8;

export async function scanInstallations(
  probot: Probot,
  services: HandlerServices,
  sharding: ScanSharding | undefined,
): Promise<ScanRound> {
  // Not a live member (its own Lease lapsed): no share, and not even the installation list.
  if (sharding && !sharding.members().includes(sharding.self))
    return { installations: 0, scanned: [], members: [], cutOff: true, skipped: 0 };
  const appOctokit = await probot.auth();
  const installations = await appOctokit.paginate(appOctokit.rest.apps.listInstallations, {
    per_page: 100,
  });
  const members = sharding ? sharding.members() : [];
  const round: ScanRound = {
    installations: installations.length,
    scanned: [],
    members,
    cutOff: false,
    skipped: 0,
  };
  const slots = new Semaphore(SCAN_CONCURRENCY);
  const gate = (work: () => Promise<void>): Promise<void> => slots.run(work);
  const large = sharding?.largeInstallations() ?? new Set<number>();
  for (const installation of installations) {
    const id = installation.id;
    if (sharding) {
      // A replica that lost its Lease mid-round stops here: the others are taking its share.
      if (!sharding.members().includes(sharding.self)) {
        round.cutOff = true;
        break;
      }
      if (!large.has(id) && ownerOf(installationKey(id), members) !== sharding.self) continue;
    }
    const octokit = (await probot.auth(id)) as unknown as OctokitLike;
    round.scanned.push(id);
    syncInstallation(
      installationOf(services, octokit, id),
      services.queue,
      { reason: "scan" },
      sharding ? { ...scopeFor(id, sharding, members, large, round), gate } : { gate },
    );
  }
  return round;
}

function scopeFor(
  id: number,
  sharding: ScanSharding,
  members: string[],
  large: Set<number>,
  round: ScanRound,
): InstallationSyncScope {
  return {
    selectRepositories: (repositories) => {
      const names = repositories.map((r) => `${r.owner}/${r.repo}`);
      if (!isLargeInstallation({ id, repositories: names }, sharding)) return repositories;
      // The owner that finds it large scans it whole this round and tells the others, who
      // split it by repository from their next round on.
      if (!large.has(id)) {
        sharding.announceLarge([id]);
        return repositories;
      }
      const share = shareOf({ id, repositories: names }, members, sharding.self, sharding);
      const mine = new Set(share.scope === "repositories" ? share.repositories : []);
      return repositories.filter((r) => mine.has(`${r.owner}/${r.repo}`));
    },
    // A replica that lost its Lease, or this installation, by the time the queued work runs
    // leaves it to the member that holds it now.
    stillOurs: () => {
      const current = sharding.members();
      const ours =
        current.includes(sharding.self) &&
        (large.has(id) || ownerOf(installationKey(id), current) === sharding.self);
      if (!ours) round.skipped++;
      return ours;
    },
  };
}
