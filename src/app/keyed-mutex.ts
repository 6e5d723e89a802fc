import type { RepoIdentity } from "./github-port.js";

/**
 * Serializes work per key (repository + environment) inside one process, so that concurrent
 * triggers for the same environment (a registry hint and a workflow_run for the same push) run one
 * after the other instead of racing on the same branch. Across replicas, compare-and-swap ref
 * updates keep writes safe; this only avoids needless conflicts.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Whether a task holds `key` now (one started now would wait for it). */
  busy(key: string): boolean {
    return this.#tails.has(key);
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      // Forget the key once nothing is queued behind this task, so the map does not grow.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

/**
 * The lock key of one promotion unit's branch (`ferry/<env>` for an environment's default unit):
 * a sync, a command and a PR guard on the same unit run one after the other.
 */
export function unitLock(deps: { github: RepoIdentity }, branch: string): string {
  return `${deps.github.owner}/${deps.github.repo}#${branch}`;
}
