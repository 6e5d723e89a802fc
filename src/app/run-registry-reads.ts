import { isValidDigest } from "../core/image-ref.js";
import type { ImageDescription, RegistryReader } from "./ports.js";

/**
 * One run's registry reads, shared: a plan over several environments asks the same tag's digest
 * and the same tag list once, whatever the number of environments that ask. A description of a
 * tag also answers that tag's digest and the description of its digest (the client verified the
 * bytes against it). Promises are kept, so concurrent askers share one request; a failed read is
 * forgotten, so a later asker tries again. Scope it to one run: tags move between runs.
 */
export function runRegistryReads(registry: RegistryReader): RegistryReader {
  const tagLists = new Map<string, Promise<string[]>>();
  const descriptions = new Map<string, Promise<ImageDescription>>();
  const digests = new Map<string, Promise<string>>();
  const key = (repository: string, reference: string): string => `${repository}\u0000${reference}`;

  function remember<T>(cache: Map<string, Promise<T>>, at: string, read: () => Promise<T>): Promise<T> {
    const cached = cache.get(at);
    if (cached) return cached;
    const promise = read();
    cache.set(at, promise);
    promise.catch(() => {
      if (cache.get(at) === promise) cache.delete(at);
    });
    return promise;
  }

  return {
    // Signature checks are cached by digest in the client itself; passed through unchanged.
    ...(registry.checkSignature ? { checkSignature: registry.checkSignature.bind(registry) } : {}),
    async listTags(repository) {
      return [...(await remember(tagLists, repository, () => registry.listTags(repository)))];
    },
    resolveDigest(repository, reference) {
      const described = descriptions.get(key(repository, reference));
      if (described) return described.then((description) => description.digest);
      return remember(digests, key(repository, reference), () =>
        registry.resolveDigest(repository, reference),
      );
    },
    describe(repository, reference) {
      return remember(descriptions, key(repository, reference), async () => {
        const description = await registry.describe(repository, reference);
        if (!isValidDigest(reference)) {
          const byDigest = key(repository, description.digest);
          if (!descriptions.has(byDigest)) descriptions.set(byDigest, Promise.resolve(description));
        }
        return description;
      });
    },
  };
}
