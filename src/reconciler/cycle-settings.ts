/** What one reconciler's cycles work with: which folder, which namespace, which safeguards. */
import type { Confinement } from "./confinement.js";
import type { PruneOptions } from "./plan.js";
import type { RenderOptions } from "./render-folder.js";
import type { PropagationPolicy } from "./sync-options.js";

export interface CycleSettings {
  /** Names this reconciler's objects (label `ferry.dev/instance`) and its inventory. */
  instance: string;
  /** The folder inside the config repo to render. */
  path: string;
  /** The namespace for namespaced objects that name none. */
  namespace: string;
  /** Where the inventory ConfigMap lives (the reconciler's own namespace). */
  inventoryNamespace: string;
  createNamespace: boolean;
  /** Plan only: print what would change, write nothing. */
  dryRun: boolean;
  prune: PruneOptions;
  render?: RenderOptions;
  /**
   * Where objects may be applied and pruned (`ferry reconcile` always sets it). Unset, nothing is
   * refused: for embedding callers that confine the reconciler some other way.
   */
  confinement?: Confinement;
  /**
   * Undo changes made in the cluster to applied objects (default true). false (`--no-self-heal`):
   * report them and OutOfSync, and leave them in place, as Argo CD's selfHeal: false does.
   */
  selfHeal?: boolean;
  /** Parallel requests while observing and applying (same-rank objects only). */
  concurrency?: number;
  /**
   * `--prune-grace-cycles`: how many cycles a head that does not contain the inventory's applied
   * revision applies without pruning before it is followed (default 3; 0: no grace period).
   */
  pruneGraceCycles?: number;
  /** `--prune-propagation`: the DELETE's propagationPolicy for pruned objects without their own (default Background). */
  prunePropagation?: PropagationPolicy;
  /** How long to wait for an applied CRD's kind to be served before applying its resources (default 30 s). */
  crdServedTimeoutMs?: number;
}
