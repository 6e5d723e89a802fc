import type { AppDeps } from "./app-deps.js";
import { syncRepository, type SyncTrigger } from "./sync-repository.js";
import type { WorkQueue } from "./work-queue.js";

/**
 * Syncing every repository of one installation (a registry hint, a source build, a new
 * installation, the periodic scan): list the repositories it can see, then one queued sync each
 * (each without a config is skipped cheaply by the sync).
 */

/** One repository an installation can see, with its default branch when the listing names it. */
export interface InstallationRepository {
  owner: string;
  repo: string;
  defaultBranch?: string;
}

/** One installation as the use case needs it: its id, its repositories, and dependencies per repository. */
export interface Installation {
  /** Part of the queue key; undefined when the event did not name it. */
  id: number | undefined;
  /** The repositories it can see, listed when the queued work runs. */
  repositories(): Promise<InstallationRepository[]>;
  /** Use-case dependencies for one of its repositories. */
  depsFor(owner: string, repo: string): AppDeps;
}

export interface InstallationSyncScope {
  /** Narrows the installation's repositories (the scan's share of a very large installation). */
  selectRepositories?: <R extends { owner: string; repo: string }>(repositories: R[]) => R[];
  /** Checked when the queued work runs, not only when it was queued: the scan's share may have moved. */
  stillOurs?: () => boolean;
  /** Runs the installation's listing when a slot is free (the scan bounds how many run at once). */
  gate?: (work: () => Promise<void>) => Promise<void>;
}

/** Queues a sync of every repository of the installation. */
export function syncInstallation(
  installation: Installation,
  queue: WorkQueue,
  trigger: SyncTrigger,
  scope: InstallationSyncScope = {},
): void {
  // Keyed by installation and by what is synced, not why: one build reports as workflow_run and
  // check_suite, and the two coalesce into one sync. The scan keeps its own key (it also refreshes
  // the dashboard). Without the installation, a scan of three organisations would merge the third
  // into the second's waiting task and never list its repositories.
  const what =
    trigger.reason === "scan"
      ? "scan"
      : JSON.stringify({
          repositories: trigger.repositories,
          sources: trigger.sources,
          baseBranch: trigger.baseBranch,
        });
  const { selectRepositories, stillOurs, gate } = scope;
  const listAndQueue = async (): Promise<void> => {
    // Checked once a slot is free, right before the listing: the share may have moved meanwhile.
    if (stillOurs && !stillOurs()) return;
    const listed = await installation.repositories();
    for (const { owner, repo, defaultBranch } of selectRepositories ? selectRepositories(listed) : listed) {
      const repoTrigger: SyncTrigger = {
        ...trigger,
        ...(defaultBranch && !trigger.baseBranch ? { baseBranch: defaultBranch } : {}),
      };
      queue.enqueue(`sync:${owner}/${repo}:${what}`, async () => {
        if (stillOurs && !stillOurs()) return;
        await syncRepository(installation.depsFor(owner, repo), repoTrigger);
      });
    }
  };
  queue.enqueue(`installation-sync:${installation.id ?? "?"}:${what}`, () =>
    gate ? gate(listAndQueue) : listAndQueue(),
  );
}
