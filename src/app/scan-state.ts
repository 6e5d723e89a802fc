/**
 * What `/status` and `/metrics` say about the sharded periodic scan: the live members, this
 * replica's shard, and the scan lag (the oldest time since an installation of its shard was last
 * covered by a completed scan round). Times are passed in; nothing here reads the clock.
 */

/** What one scan round covered. */
export interface ScanRound {
  /** Installations of the app, all members' together. */
  installations: number;
  /** Installations this replica scanned, whole or in part. */
  scanned: number[];
  members: string[];
  /** The round stopped early: this replica lost its membership on the way. */
  cutOff: boolean;
  /** Installations of the round left alone when their turn came: the member list had changed. */
  skipped: number;
}

export interface ScanMembers {
  readonly self: string;
  members(): string[];
  snapshot(): { mode: string; lastError?: string; lastRenewedAt?: number; leaseDurationMs?: number };
}

export class ScanState {
  /** Epoch ms each installation of the current shard was last covered. */
  readonly #lastScanned = new Map<number, number>();
  #shard: number[] = [];
  #shardSince = new Map<number, number>();
  #rounds = 0;
  #lastRound: { at: number; installations: number; cutOff: boolean } | undefined;
  #lastMembers: string | undefined;
  #viewChanges = 0;

  constructor(private readonly membership: ScanMembers) {}

  record(round: ScanRound, at: number): void {
    this.#rounds++;
    // The fleet as this replica saw it moved: at the round's start, during it, or by cutting it off.
    const members = round.members.join(",");
    if (
      (this.#lastMembers !== undefined && members !== this.#lastMembers) ||
      round.skipped > 0 ||
      round.cutOff
    )
      this.#viewChanges++;
    this.#lastMembers = members;
    this.#lastRound = { at, installations: round.installations, cutOff: round.cutOff };
    const shard = new Set(round.scanned);
    for (const id of shard) {
      this.#lastScanned.set(id, at);
      if (!this.#shardSince.has(id)) this.#shardSince.set(id, at);
    }
    for (const id of [...this.#shardSince.keys()]) if (!shard.has(id)) this.#shardSince.delete(id);
    for (const id of [...this.#lastScanned.keys()]) if (!shard.has(id)) this.#lastScanned.delete(id);
    this.#shard = [...shard];
  }

  /** Rounds that saw the member list change (the scan's shares moved); 0 while the fleet is steady. */
  viewChanges(): number {
    return this.#viewChanges;
  }

  shardSize(): number {
    return this.#shard.length;
  }

  /** Seconds since the least recently scanned installation of the shard was scanned; 0 before any round. */
  lagSeconds(now: number): number {
    let oldest = now;
    for (const at of this.#lastScanned.values()) oldest = Math.min(oldest, at);
    return Math.max(0, (now - oldest) / 1000);
  }

  status(now: number): Record<string, unknown> {
    const snapshot = this.membership.snapshot();
    return {
      mode: snapshot.mode,
      self: this.membership.self,
      members: this.membership.members(),
      shardSize: this.shardSize(),
      rounds: this.#rounds,
      viewChanges: this.#viewChanges,
      lagSeconds: this.#rounds === 0 ? null : Math.round(this.lagSeconds(now) * 10) / 10,
      ...(this.#lastRound
        ? {
            lastRound: {
              at: new Date(this.#lastRound.at).toISOString(),
              installations: this.#lastRound.installations,
              cutOff: this.#lastRound.cutOff,
            },
          }
        : {}),
      ...(snapshot.leaseDurationMs !== undefined ? { leaseDurationMs: snapshot.leaseDurationMs } : {}),
      ...(snapshot.lastError !== undefined ? { membershipError: snapshot.lastError } : {}),
    };
  }
}
