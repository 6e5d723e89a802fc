import { syncInstallation } from "../../app/sync-installation.js";
import type { OctokitLike } from "../../adapters/github/github-repo.js";
import { type HandlerServices, installationOf } from "../github/services.js";
import { hintRepository, type RegistryHint } from "./registry-hint.js";

/** Hints the registry receiver accepted (one coalesced delivery), and the app's installations to sync. */
export interface RegistryHintEvent {
  hints: RegistryHint[];
  /** Visits every installation of the app with an installation-authenticated Octokit. */
  eachInstallation(visit: (octokit: OctokitLike, installationId: number) => Promise<void>): Promise<void>;
}

export interface RegistryHintServices extends HandlerServices {
  /** Drops the cached tag lists of one registry repository (`registry/repository`). */
  forgetTags(repository: string): void;
}

/**
 * Registry hints → a sync of the config repos that use those repositories, in every installation.
 * A hint is never trusted: the sync re-reads the registry, whose cached tag lists of the hinted
 * repositories are dropped first.
 */
export async function onRegistryHints(
  event: RegistryHintEvent,
  services: RegistryHintServices,
): Promise<void> {
  const { hints } = event;
  if (hints.length === 0) return;
  for (const hint of hints) services.forgetTags(hintRepository(hint));
  const repositories = [...new Set(hints.map(hintRepository))].sort();
  // Queued, so that a GitHub failure listing the installations is retried like any other work.
  services.queue.enqueue(`hint:${JSON.stringify(repositories)}`, () =>
    event.eachInstallation(async (octokit, installationId) => {
      syncInstallation(installationOf(services, octokit, installationId), services.queue, {
        reason: "registry",
        repositories,
      });
    }),
  );
}
