/**
 * The images found in one file, by the file's blob SHA (and its name and the rules' patterns, which
 * the finding depends on): content-addressed, so an entry never goes stale, and a steady scan
 * parses no file it parsed before (docs/capacity.md "Generated config"). Bounded by entries, least
 * recently used first out; losing it costs parsing, never correctness.
 */
export const MAX_DISCOVERY_CACHE_ENTRIES = 50_000;

export class DiscoveryCache {
  readonly #entries = new Map<string, readonly string[]>();
  hits = 0;
  misses = 0;

  constructor(private readonly maxEntries = MAX_DISCOVERY_CACHE_ENTRIES) {}

  get(key: string): readonly string[] | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: string, value: readonly string[]): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** The process's cache (every repository of every installation: keys carry the repository). */
export const discoveryCache = new DiscoveryCache();
