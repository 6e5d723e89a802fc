/**
 * Renders of the `ferry/diff` check by what was rendered (the snapshot's key and the paths): a
 * snapshot names its files forever, so a hit is never stale. Least recently used first out,
 * bounded by the objects held in all; a failed render is kept too (it fails the same way again).
 */
import type { KubeObject } from "../core/kube-object.js";

export type CachedRender =
  { objects: KubeObject[]; notRendered: string[] } | { error: { code: string; message: string } };

export class RenderCache {
  readonly #items = new Map<string, { value: CachedRender; weight: number }>();
  #total = 0;

  constructor(private readonly maxObjects = 50_000) {}

  get(key: string): CachedRender | undefined {
    const item = this.#items.get(key);
    if (!item) return undefined;
    this.#items.delete(key);
    this.#items.set(key, item);
    return item.value;
  }

  set(key: string, value: CachedRender): void {
    const weight = "objects" in value ? Math.max(1, value.objects.length) : 1;
    const previous = this.#items.get(key);
    if (previous) {
      this.#items.delete(key);
      this.#total -= previous.weight;
    }
    if (weight > this.maxObjects) return;
    this.#items.set(key, { value, weight });
    this.#total += weight;
    for (const [oldest, item] of this.#items) {
      if (this.#total <= this.maxObjects) break;
      this.#items.delete(oldest);
      this.#total -= item.weight;
    }
  }

  get size(): number {
    return this.#items.size;
  }
}
