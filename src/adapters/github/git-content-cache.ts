import { createHash } from "node:crypto";
import type { TreeEntry } from "../../app/github-port.js";

/**
 * Git objects by their content address (blob and tree SHAs), kept in process so a promotion does
 * not re-read files Ferry has already seen (docs/architecture.md "Request budget"). A SHA names
 * its content forever, so a hit can never be stale; the app stays stateless because losing the
 * cache (a restart, another replica) only costs requests, never correctness.
 *
 * Keys include the repository: a SHA is only looked up after an authorised tree listing of that
 * repository named it, so one installation never reads another's content through the cache.
 * Bounded by bytes (blobs) and entries (trees), least recently used first out.
 */
export interface GitContentCacheLimits {
  /** Total UTF-16 length of cached blob texts (≈ bytes for YAML). */
  maxBlobChars: number;
  /** Total entries over all cached recursive tree listings. */
  maxTreeEntries: number;
}

export const DEFAULT_CACHE_LIMITS: GitContentCacheLimits = {
  maxBlobChars: 32 * 1024 * 1024,
  maxTreeEntries: 200_000,
};

/** A map with least-recently-used eviction by a total weight. */
export class WeightedLru<V> {
  readonly #items = new Map<string, { value: V; weight: number }>();
  #total = 0;

  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const item = this.#items.get(key);
    if (!item) return undefined;
    // Re-insert: a Map iterates in insertion order, so the first key is the least recently used.
    this.#items.delete(key);
    this.#items.set(key, item);
    return item.value;
  }

  set(key: string, value: V): void {
    const weight = this.weigh(value);
    const previous = this.#items.get(key);
    if (previous) {
      this.#items.delete(key);
      this.#total -= previous.weight;
    }
    // A single value larger than the whole budget is not worth evicting everything for.
    if (weight > this.maxWeight) return;
    this.#items.set(key, { value, weight });
    this.#total += weight;
    for (const [oldest, item] of this.#items) {
      if (this.#total <= this.maxWeight) break;
      this.#items.delete(oldest);
      this.#total -= item.weight;
    }
  }

  clear(): void {
    this.#items.clear();
    this.#total = 0;
  }

  get size(): number {
    return this.#items.size;
  }

  get weight(): number {
    return this.#total;
  }
}

export class GitContentCache {
  readonly #blobs: WeightedLru<string>;
  readonly #trees: WeightedLru<TreeEntry[]>;
  /** Loads in flight, so concurrent readers of one SHA share one request. */
  readonly #loading = new Map<string, Promise<unknown>>();
  hits = 0;
  misses = 0;

  constructor(limits: GitContentCacheLimits = DEFAULT_CACHE_LIMITS) {
    this.#blobs = new WeightedLru(limits.maxBlobChars, (text) => text.length);
    this.#trees = new WeightedLru(limits.maxTreeEntries, (entries) => Math.max(1, entries.length));
  }

  blob(repository: string, sha: string, load: () => Promise<string>): Promise<string> {
    return this.#through(this.#blobs, key(repository, "blob", sha), load);
  }

  tree(repository: string, sha: string, load: () => Promise<TreeEntry[]>): Promise<TreeEntry[]> {
    return this.#through(this.#trees, key(repository, "tree", sha), load);
  }

  /** Forgets everything (the bench measures a cold process this way). */
  clear(): void {
    this.#blobs.clear();
    this.#trees.clear();
  }

  /** Remembers content Ferry wrote itself (its SHA is computed as git does), so reading it back after a merge is free. */
  rememberWrittenBlob(repository: string, text: string): void {
    this.#blobs.set(key(repository, "blob", gitBlobSha(text)), text);
  }

  async #through<V>(lru: WeightedLru<V>, cacheKey: string, load: () => Promise<V>): Promise<V> {
    const cached = lru.get(cacheKey);
    if (cached !== undefined) {
      this.hits++;
      return cached;
    }
    const pending = this.#loading.get(cacheKey) as Promise<V> | undefined;
    if (pending) {
      this.hits++;
      return pending;
    }
    this.misses++;
    const loading = load().then((value) => {
      lru.set(cacheKey, value);
      return value;
    });
    this.#loading.set(cacheKey, loading);
    try {
      return await loading;
    } finally {
      this.#loading.delete(cacheKey);
    }
  }
}

function key(repository: string, kind: "blob" | "tree", sha: string): string {
  return `${repository.toLowerCase()}:${kind}:${sha.toLowerCase()}`;
}

/** The SHA-1 git gives a blob with this UTF-8 text (`git hash-object`). */
export function gitBlobSha(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}
