import type { SecretRedactor } from "../../core/redact.js";
import { isValidTag } from "../../core/image-ref.js";
import type { Authenticator } from "./auth.js";
import { RegistryProtocolError, RegistryUnavailableError } from "./errors.js";
import { nextLink } from "./link-header.js";
import type { RegistryLimits } from "./registry-limits.js";
import { failFor as failResponse } from "./response-errors.js";
import type { Exchange, RegistryState } from "./transport.js";

/**
 * Tag lists: `tags/list` walked page by page along `Link` headers on the registry's own origin,
 * with loop, page, size and time caps (more tags than the cap is an error, never a truncated
 * list), and a cache shared by every environment watching the repository.
 */
export interface TagLister {
  listTags(state: RegistryState, repository: string, name: string): Promise<string[]>;
  /** Drops the cached list of `name` (registry/repository). */
  invalidate(name: string): void;
}

export function createTagLister(deps: {
  auth: Authenticator;
  limits: RegistryLimits;
  now: () => number;
  secrets: SecretRedactor;
}): TagLister {
  const { limits, now, secrets } = deps;
  const request = deps.auth.request;
  const tagCache = new Map<string, { expiresAt: number; tags: Promise<string[]> }>();
  const failFor = (state: RegistryState, repository: string, what: string, response: Exchange): never =>
    failResponse(state, repository, what, response, secrets);

  async function walkTags(state: RegistryState, repository: string): Promise<string[]> {
    const started = now();
    const origin = new URL(state.origin);
    let url: URL | undefined = new URL(`${state.origin}/v2/${repository}/tags/list`);
    url.searchParams.set("n", String(limits.pageSize));
    const visited = new Set<string>();
    const tags = new Set<string>();
    let pages = 0;
    while (url) {
      if (visited.has(url.href))
        throw new RegistryProtocolError(
          "registry-pagination-loop",
          `${state.registry}/${repository}: tag list pagination repeats a page`,
        );
      visited.add(url.href);
      pages += 1;
      if (pages > limits.maxPages)
        throw new RegistryProtocolError(
          "registry-too-many-pages",
          `${state.registry}/${repository}: tag list has more than ${limits.maxPages} pages`,
        );
      if (now() - started > limits.listTimeoutMs) {
        throw new RegistryUnavailableError(
          "registry-list-timeout",
          state.registry,
          `${state.registry}/${repository}: listing tags took longer than ${limits.listTimeoutMs}ms`,
          { retryAfterMs: limits.defaultBackoffMs },
        );
      }
      const response = await request(
        state,
        repository,
        url,
        "GET",
        "application/json",
        limits.maxTagPageBytes,
      );
      if (response.status !== 200) failFor(state, repository, "tags/list", response);
      let page: { tags?: unknown };
      try {
        page = JSON.parse(response.body.toString("utf8"));
      } catch {
        throw new RegistryProtocolError(
          "registry-bad-json",
          `${state.registry}/${repository}: tags/list answered malformed JSON`,
        );
      }
      if (page.tags !== null && page.tags !== undefined && !Array.isArray(page.tags)) {
        throw new RegistryProtocolError(
          "registry-bad-json",
          `${state.registry}/${repository}: tags/list has no tags array`,
        );
      }
      for (const tag of (page.tags as unknown[] | null) ?? []) {
        // Names that are not OCI tags can never be written to Git (docs/reliability.md row 14).
        if (typeof tag !== "string" || !isValidTag(tag)) continue;
        tags.add(tag);
        if (tags.size > limits.maxTags) {
          throw new RegistryProtocolError(
            "registry-too-many-tags",
            `${state.registry}/${repository}: more than ${limits.maxTags} tags; refusing to choose from a partial list`,
          );
        }
      }
      url = nextLink(response.headers.get("link"), response.url);
      if (url && url.origin !== origin.origin) {
        throw new RegistryProtocolError(
          "registry-link-refused",
          `${state.registry}/${repository}: next page link points at another origin (${url.host})`,
        );
      }
    }
    return [...tags];
  }

  return {
    async listTags(state: RegistryState, repository: string, name: string): Promise<string[]> {
      const cached = tagCache.get(name);
      if (cached && cached.expiresAt > now()) return [...(await cached.tags)];
      // Store the promise so concurrent environments watching the same repository share one walk.
      const tags = walkTags(state, repository);
      const entry = { expiresAt: limits.tagCacheTtlMs > 0 ? Number.POSITIVE_INFINITY : 0, tags };
      tagCache.set(name, entry);
      try {
        const result = await tags;
        entry.expiresAt = now() + limits.tagCacheTtlMs;
        if (limits.tagCacheTtlMs <= 0) tagCache.delete(name);
        return [...result];
      } catch (error) {
        if (tagCache.get(name) === entry) tagCache.delete(name);
        throw error;
      }
    },

    invalidate(name: string): void {
      tagCache.delete(name);
    },
  };
}
