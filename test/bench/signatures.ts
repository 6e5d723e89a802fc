/**
 * Signature figures: the registry requests and time a signature check adds per tag, against the
 * real CNCF distribution 2.8 (no referrers API), with artifacts in cosign's format
 * (test/signing/cosign-artifacts.ts): signed under the legacy `.sig` tag, signed as a referrer
 * (the referrers tag fallback), unsigned (and again, within the unsigned cache's time), a
 * verified digest checked again (cached); keyless Sigstore bundles from the test's Fulcio-like CA
 * and Rekor-like log (test/signing/sigstore-fixtures.ts) as referrers, alone and with a SLSA
 * provenance attestation.
 */
import { performance } from "node:perf_hooks";
import { createRegistryClient, type RegistryClient } from "../../src/adapters/registry/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { distributionMissingMessage, startDistribution } from "../support/registry-distribution.js";
import { generateKeyPair, pushSignature, signWithKey } from "../signing/cosign-artifacts.js";
import {
  BUNDLE_MEDIA_TYPE,
  createTestSigstore,
  pushReferrer,
  SLSA_PROVENANCE_02,
} from "../signing/sigstore-fixtures.js";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import type { VerifyPolicy } from "../../src/core/policy/verify.js";
import { BenchSkipped } from "./skipped.js";
import { sized } from "./size.js";

const TAGS = sized(20, 3);

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
    const sigstore = await createTestSigstore();
    const identity = {
      issuer: "https://token.actions.githubusercontent.com",
      subject: "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v1",
    };
    const keyless: string[] = [];
    const attested: string[] = [];
    for (const kind of ["keyless", "attested"] as const) {
      for (let index = 0; index < TAGS; index++) {
        const { digest } = await pushImage(distribution.url, "bench/signed", `${kind}-${index}`, {
          content: `${kind}-${index}`,
        });
        (kind === "keyless" ? keyless : attested).push(digest);
        const attach = async (bundle: Record<string, unknown>) =>
          pushReferrer(
            distribution.url,
            "bench/signed",
            digest,
            BUNDLE_MEDIA_TYPE,
            Buffer.from(JSON.stringify(bundle)),
          );
        await attach(await sigstore.bundle({ digest, identity }));
        if (kind === "attested")
          await attach(
            await sigstore.bundle({
              digest,
              identity,
              predicateType: SLSA_PROVENANCE_02,
              predicate: {
                builder: { id: identity.subject },
                invocation: { configSource: { uri: "git+https://github.com/acme/shop@refs/tags/v1" } },
              },
            }),
          );
      }
    }
    const keylessPolicy: VerifyPolicy = {
      issuer: identity.issuer,
      subject: "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/*",
      tlog: true,
    };
    const attestedPolicy: VerifyPolicy = {
      ...keylessPolicy,
      attestations: ["slsaprovenance"],
      builder: "https://github.com/acme/shop/.github/workflows/release.yml@*",
      source: "https://github.com/acme/shop",
    };
    const figures: Record<string, number> = {};
    const measure = async (
      client: RegistryClient,
      label: string,
      list: string[],
      policy: VerifyPolicy = verify,
    ): Promise<void> => {
      const before = client.requestCounts()[distribution.host] ?? 0;
      const started = performance.now();
      for (const digest of list) await client.checkSignature(name, digest, policy);
      figures[`signatures.${label}.requests_per_tag`] =
        ((client.requestCounts()[distribution.host] ?? 0) - before) / list.length;
      figures[`signatures.${label}.ms_per_tag`] = (performance.now() - started) / list.length;
    };
    const client = createRegistryClient();
    await measure(client, "legacy_sig", digests.legacy);
    await measure(client, "legacy_sig_cached", digests.legacy);
    await measure(client, "referrers_tag", digests.referrer);
    await measure(client, "unsigned", digests.unsigned);
    await measure(client, "unsigned_cached", digests.unsigned);
    const sigstoreClient = createRegistryClient({ trustedRoot: TrustedRoot.fromJSON(sigstore.trustedRoot) });
    await measure(sigstoreClient, "keyless_referrers_tag", keyless, keylessPolicy);
    await measure(sigstoreClient, "keyless_slsaprovenance_referrers_tag", attested, attestedPolicy);
    return figures;
  } finally {
    await distribution.close();
  }
}
