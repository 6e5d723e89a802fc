/**
 * Signature figures: the registry requests and time a signature check adds per tag, against the
 * real CNCF distribution 2.8 (no referrers API), with artifacts in cosign's format
 * (test/signing/cosign-artifacts.ts): signed under the legacy `.sig` tag, signed as a referrer
 * (the referrers tag fallback), unsigned, and a verified digest checked again (cached).
 */
import { performance } from "node:perf_hooks";
import { createRegistryClient, type RegistryClient } from "../../src/adapters/registry/index.js";
import { pushImage } from "../../src/sandbox/registry/push-image.js";
import { distributionMissingMessage, startDistribution } from "../support/registry-distribution.js";
import { generateKeyPair, pushSignature, signWithKey } from "../signing/cosign-artifacts.js";
import { BenchSkipped } from "./skipped.js";

const TAGS = 20;

export async function bench(): Promise<Record<string, number>> {
  const missing = distributionMissingMessage();
  if (missing) throw new BenchSkipped(missing);
  const distribution = await startDistribution("none");
  try {
    const name = `${distribution.host}/bench/signed`;
    const pair = generateKeyPair();
    const verify = { key: pair.publicPem };
    const kinds = ["legacy", "referrer", "unsigned"] as const;
    const digests: Record<(typeof kinds)[number], string[]> = { legacy: [], referrer: [], unsigned: [] };
    for (const kind of kinds) {
      for (let index = 0; index < TAGS; index++) {
        const { digest } = await pushImage(distribution.url, "bench/signed", `${kind}-${index}`, {
          content: `${kind}-${index}`,
        });
        digests[kind].push(digest);
        if (kind !== "unsigned")
          await pushSignature(distribution.url, "bench/signed", name, digest, signWithKey(pair.privateKey), {
            mode: kind === "legacy" ? "legacy" : "referrers-tag",
          });
      }
    }
    const figures: Record<string, number> = {};
    const measure = async (client: RegistryClient, label: string, list: string[]): Promise<void> => {
      const before = client.requestCounts()[distribution.host] ?? 0;
      const started = performance.now();
      for (const digest of list) await client.checkSignature(name, digest, verify);
      figures[`signatures.${label}.requests_per_tag`] =
        ((client.requestCounts()[distribution.host] ?? 0) - before) / list.length;
      figures[`signatures.${label}.ms_per_tag`] = (performance.now() - started) / list.length;
    };
    const client = createRegistryClient();
    await measure(client, "legacy_sig", digests.legacy);
    await measure(client, "legacy_sig_cached", digests.legacy);
    await measure(client, "referrers_tag", digests.referrer);
    await measure(client, "unsigned", digests.unsigned);
    return figures;
  } finally {
    await distribution.close();
  }
}
