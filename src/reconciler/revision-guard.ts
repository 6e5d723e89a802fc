/**
 * Whether a cycle may prune, given the revision the inventory says was applied last. A head that
 * does not contain that revision (a mirror behind the one another reconciler read, a second
 * source, or a force-push) applies but holds the prune for a grace period of cycles, remembered in
 * the inventory; only if the head is still the same afterwards is it followed and pruned, so a
 * stale reader never deletes what a newer revision added and a deliberate force-push still wins.
 */
export interface RevisionGuardInput {
  /** The inventory's applied revision; undefined before the first complete cycle. */
  recorded: string | undefined;
  head: string;
  /** Whether `head` has `recorded` in its history. */
  contained: boolean;
  grace: { head: string; cyclesLeft: number } | undefined;
  /** `--prune-grace-cycles`: 0 turns the grace period off. */
  graceCycles: number;
}

export interface RevisionGuardVerdict {
  holdPrune: boolean;
  /** Why the prune is held, for the cycle's report. */
  reason?: string;
  /** The grace state to store (undefined: none). */
  grace?: { head: string; cyclesLeft: number };
  /** The applied revision to store once the cycle applied everything. */
  nextRecorded: string;
}

const short = (sha: string) => sha.slice(0, 12);

export function guardRevision(input: RevisionGuardInput): RevisionGuardVerdict {
  const { recorded, head, contained, grace, graceCycles } = input;
  if (recorded === undefined || recorded === head || contained || graceCycles <= 0)
    return { holdPrune: false, nextRecorded: head };
  const cyclesLeft = grace && grace.head === head ? grace.cyclesLeft - 1 : graceCycles;
  // The head stayed the same for the whole grace period: follow it.
  if (cyclesLeft <= 0) return { holdPrune: false, nextRecorded: head };
  return {
    holdPrune: true,
    reason:
      `head ${short(head)} does not contain the applied revision ${short(recorded)} (a stale mirror, a second source or a force-push): ` +
      `applying without pruning; pruning if the head is unchanged after ${cyclesLeft} more cycle${cyclesLeft === 1 ? "" : "s"}`,
    grace: { head, cyclesLeft },
    // Keep the newer revision on record: another reader that has it keeps pruning normally.
    nextRecorded: recorded,
  };
}
