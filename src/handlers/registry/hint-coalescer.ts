import type { RegistryHint } from "./registry-hint.js";

/**
 * Debounces hints per repository: the first hint for `registry/repository` opens a window of
 * `windowMs`; every hint for it inside the window joins the batch, and when the window closes
 * `deliver` gets one call with one hint per tag (or digest), the latest wins. A burst of pushes —
 * or a flood through a leaked token (docs/reliability.md row 30) — becomes one re-poll of the registry.
 */
export class HintCoalescer {
  private readonly batches = new Map<string, { hints: Map<string, RegistryHint>; timer: NodeJS.Timeout }>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly windowMs: number,
    private readonly deliver: (hints: RegistryHint[]) => Promise<void>,
  ) {}

  add(hints: RegistryHint[]): void {
    for (const hint of hints) {
      const key = `${hint.registry}/${hint.repository}`;
      let batch = this.batches.get(key);
      if (!batch) {
        const timer = setTimeout(() => this.flushKey(key), this.windowMs);
        timer.unref?.();
        batch = { hints: new Map(), timer };
        this.batches.set(key, batch);
      }
      const identity =
        hint.tag !== undefined
          ? `tag:${hint.tag}`
          : hint.digest !== undefined
            ? `digest:${hint.digest}`
            : "repository";
      // Delete first so that Map order is arrival order of the latest hint per identity.
      batch.hints.delete(identity);
      batch.hints.set(identity, hint);
    }
  }

  /** Delivers every pending batch now and waits for all deliveries (shutdown, tests). */
  async flush(): Promise<void> {
    for (const key of [...this.batches.keys()]) this.flushKey(key);
    await Promise.all([...this.inFlight]);
  }

  /** Waits for the deliveries already started, leaving pending batches to their window. */
  async delivered(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /** Drops pending batches without delivering them. */
  close(): void {
    for (const batch of this.batches.values()) clearTimeout(batch.timer);
    this.batches.clear();
  }

  pendingRepositories(): number {
    return this.batches.size;
  }

  private flushKey(key: string): void {
    const batch = this.batches.get(key);
    if (!batch) return;
    clearTimeout(batch.timer);
    this.batches.delete(key);
    const delivery = this.deliver([...batch.hints.values()]).finally(() => this.inFlight.delete(delivery));
    this.inFlight.add(delivery);
  }
}
