/**
 * Registry figures: requests per scan of N images × M environments with and without
 * the shared tag cache, against the embedded registry; and the latency from a registry
 * notification (distribution format, through Ferry's receiver) to a verified tag.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { createRegistryClient, type RegistryClient } from "../../src/adapters/registry/index.js";
import type { RegistryHint } from "../../src/handlers/registry/index.js";
import { createRegistryReceiver } from "../../src/server/registry-receiver.js";
import { startEmbeddedRegistry } from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { sized } from "./size.js";

const IMAGES = 5;
const ENVIRONMENTS = 3;
const TAGS_PER_IMAGE = 8;
const NOTIFICATION_SAMPLES = sized(20, 5);
const COALESCE_MS = 10;

export async function bench(): Promise<Record<string, number>> {
  return { ...(await scanRequests()), ...(await notificationLatency()) };
}

/**
 * One scan: every environment lists the tags of every image it watches and describes the tag it
 * would choose (here the newest pushed). Without the cache each environment walks on its own.
 */
async function scanRequests(): Promise<Record<string, number>> {
  const registry = await startEmbeddedRegistry();
  try {
    const images = Array.from({ length: IMAGES }, (_, index) => `bench/app-${index}`);
    for (const image of images) {
      for (let tag = 0; tag < TAGS_PER_IMAGE; tag += 1)
        await pushImage(registry.url, image, `1.${tag}.0`, { content: `${image}-${tag}` });
    }
    const scan = async (client: RegistryClient): Promise<number> => {
      const before = client.requestCounts()[registry.host] ?? 0;
      await Promise.all(
        Array.from({ length: ENVIRONMENTS }, async () => {
          for (const image of images) {
            const tags = await client.listTags(`${registry.host}/${image}`);
            await client.describe(`${registry.host}/${image}`, tags.sort().at(-1)!);
          }
        }),
      );
      return (client.requestCounts()[registry.host] ?? 0) - before;
    };
    const uncached = createRegistryClient({ limits: { tagCacheTtlMs: 0 } });
    const cached = createRegistryClient();
    const withoutCache = await scan(uncached);
    const withCache = await scan(cached);
    const secondScanWithCache = await scan(cached);
    return {
      [`registry.scan_${IMAGES}_images_x_${ENVIRONMENTS}_envs.requests_without_tag_cache`]: withoutCache,
      [`registry.scan_${IMAGES}_images_x_${ENVIRONMENTS}_envs.requests_with_tag_cache`]: withCache,
      [`registry.scan_${IMAGES}_images_x_${ENVIRONMENTS}_envs.requests_second_scan_within_ttl`]:
        secondScanWithCache,
    };
  } finally {
    await registry.close();
  }
}

/**
 * Push → distribution notification → Ferry's receiver (coalescing window COALESCE_MS) → hint →
 * invalidate the tag cache and HEAD the tag → digest equals the pushed one. Measured from the
 * end of the push to the verification.
 */
async function notificationLatency(): Promise<Record<string, number>> {
  const secret = "Bearer bench-notification-secret";
  const client = createRegistryClient();
  const waiting = new Map<string, (verification: { at: number; digest: string }) => void>();
  const receiver = createRegistryReceiver({
    secrets: { distribution: secret },
    coalesceMs: COALESCE_MS,
    onHints: async (hints: RegistryHint[]) => {
      for (const hint of hints) {
        if (!hint.tag) continue;
        const name = `${hint.registry}/${hint.repository}`;
        client.invalidate(name);
        const digest = await client.resolveDigest(name, hint.tag);
        waiting.get(`${name}:${hint.tag}`)?.({ at: performance.now(), digest });
      }
    },
  });
  const server = createServer((req, res) => {
    void receiver(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/registry/distribution`;
  const registry = await startEmbeddedRegistry({
    notifications: [{ url, headers: { Authorization: secret } }],
  });
  const latencies: number[] = [];
  try {
    for (let sample = 0; sample < NOTIFICATION_SAMPLES; sample += 1) {
      const tag = `2.0.${sample}`;
      const name = `${registry.host}/bench/notified`;
      let resolveVerified!: (verification: { at: number; digest: string }) => void;
      const verified = new Promise<{ at: number; digest: string }>((resolve) => (resolveVerified = resolve));
      // Registered before the push: the notification may beat the push's own response.
      waiting.set(`${name}:${tag}`, resolveVerified);
      const pushed = await pushImage(registry.url, "bench/notified", tag, { content: `sample-${sample}` });
      const pushedAt = performance.now();
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`no verified notification for ${tag} within 10 s`)),
          10_000,
        ).unref(),
      );
      const verification = await Promise.race([verified, timeout]);
      if (verification.digest !== pushed.digest)
        throw new Error(`notified ${tag} resolved to ${verification.digest}, pushed ${pushed.digest}`);
      latencies.push(Math.max(0, verification.at - pushedAt));
    }
  } finally {
    receiver.close();
    await registry.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  latencies.sort((a, b) => a - b);
  return {
    "registry.notification_to_verified_tag_ms.p50": latencies[Math.floor(latencies.length / 2)]!,
    "registry.notification_to_verified_tag_ms.max": latencies.at(-1)!,
    "registry.notification_coalesce_window_ms": COALESCE_MS,
  };
}
