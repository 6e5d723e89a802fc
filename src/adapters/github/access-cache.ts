/**
 * Low answers to "what may this person do here" (no write access, not a team member), reused for a
 * short while so that a flood of commands from someone without access costs one lookup, not one
 * per comment. Answers that grant write access or more are never cached: a revocation takes effect
 * at the next command. Bounded: the least recently used entry goes first.
 */
export class AccessCache {
  private readonly entries = new Map<string, { at: number; value: Promise<unknown> }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 1_000;
    this.now = options.now ?? (() => Date.now());
  }

  /**
   * The cached answer for `key`, or `load()`'s, kept when `keep(answer)` says so. Concurrent
   * callers share one pending lookup.
   */
  get<T>(key: string, load: () => Promise<T>, keep: (answer: T) => boolean): Promise<T> {
    const hit = this.entries.get(key);
    const at = this.now();
    if (hit && at - hit.at < this.ttlMs) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value as Promise<T>;
    }
    const value = load();
    const entry = { at, value: value as Promise<unknown> };
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const forget = (): void => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
    value.then((answer) => {
      if (!keep(answer)) forget();
    }, forget);
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}
