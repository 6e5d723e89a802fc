import { TrustedRoot } from "@sigstore/protobuf-specs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import type { VerifyPolicy } from "../../src/core/policy/verify.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { startDistribution, type RunningDistribution } from "../support/registry-distribution.js";
import {
  BUNDLE_MEDIA_TYPE,
  createTestSigstore,
  pushLegacySignature,
  pushReferrer,
  SLSA_PROVENANCE_02,
  type TestSigstore,
} from "./sigstore-fixtures.js";

/**
 * Keyless signatures and SLSA provenance, verified offline against a trusted root built in the
 * test (sigstore-fixtures.ts: a Fulcio-like CA with a CT log, a Rekor-like log), stored as Sigstore
 * bundles in OCI 1.1 referrers on a real CNCF distribution 2.8 (no referrers API: the referrers
 * tag schema is what Ferry reads).
 */
const GITHUB = "https://token.actions.githubusercontent.com";
const RELEASE = "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v1.9.0";
const BUILDER = "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v1.9.0";
const policy: VerifyPolicy = {
  issuer: GITHUB,
  subject: "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/*",
  tlog: true,
};
const provenance = (source: string) => ({
  builder: { id: BUILDER },
  buildType: "https://github.com/slsa-framework/slsa-github-generator/generic@v1",
  invocation: {
    configSource: { uri: `git+https://github.com/${source}@refs/tags/v1.9.0`, entryPoint: "release" },
  },
  materials: [{ uri: `git+https://github.com/${source}@refs/tags/v1.9.0` }],
});

describe("keyless signatures and provenance, verified offline against a test trusted root", () => {
  let distribution: RunningDistribution;
  let sigstore: TestSigstore;
  let stranger: TestSigstore;
  let name: string;
  const digests: Record<string, string> = {};

  async function attach(tag: string, bundle: Record<string, unknown>): Promise<void> {
    await pushReferrer(
      distribution.url,
      "acme/shop",
      digests[tag]!,
      BUNDLE_MEDIA_TYPE,
      Buffer.from(JSON.stringify(bundle)),
    );
  }

  const client = () => createRegistryClient({ trustedRoot: TrustedRoot.fromJSON(sigstore.trustedRoot) });

  beforeAll(async () => {
    sigstore = await createTestSigstore();
    stranger = await createTestSigstore();
    distribution = await startDistribution("none");
    name = `${distribution.host}/acme/shop`;
    for (const tag of [
      "right",
      "wrong-subject",
      "wrong-issuer",
      "foreign-ca",
      "no-tlog",
      "other-digest",
      "attested",
      "wrong-source",
      "unattested",
      "legacy",
      "legacy-wrong-subject",
      "legacy-edited",
    ])
      digests[tag] = (await pushImage(distribution.url, "acme/shop", tag, { content: tag })).digest;
    const sign = (tag: string, options: Partial<Parameters<TestSigstore["bundle"]>[0]> = {}, by = sigstore) =>
      by.bundle({ digest: digests[tag]!, identity: { issuer: GITHUB, subject: RELEASE }, ...options });
    await attach("right", await sign("right"));
    await attach(
      "wrong-subject",
      await sign("wrong-subject", {
        identity: {
          issuer: GITHUB,
          subject: "https://github.com/evil/fork/.github/workflows/release.yml@refs/tags/v1.9.0",
        },
      }),
    );
    await attach(
      "wrong-issuer",
      await sign("wrong-issuer", { identity: { issuer: "https://accounts.example.com", subject: RELEASE } }),
    );
    await attach("foreign-ca", await sign("foreign-ca", {}, stranger));
    await attach("no-tlog", await sign("no-tlog", { noTlog: true }));
    await attach("other-digest", await sign("other-digest", { digest: digests.right! }));
    for (const tag of ["attested", "wrong-source", "unattested"]) await attach(tag, await sign(tag));
    await attach(
      "attested",
      await sign("attested", { predicateType: SLSA_PROVENANCE_02, predicate: provenance("acme/shop") }),
    );
    await attach(
      "wrong-source",
      await sign("wrong-source", { predicateType: SLSA_PROVENANCE_02, predicate: provenance("evil/fork") }),
    );
    const legacy = (tag: string, subject = RELEASE) =>
      sigstore.legacySignature({
        reference: name,
        digest: digests[tag]!,
        identity: { issuer: GITHUB, subject },
      });
    await pushLegacySignature(distribution.url, "acme/shop", digests.legacy!, await legacy("legacy"));
    await pushLegacySignature(
      distribution.url,
      "acme/shop",
      digests["legacy-wrong-subject"]!,
      await legacy(
        "legacy-wrong-subject",
        "https://github.com/evil/fork/.github/workflows/release.yml@refs/tags/v1",
      ),
    );
    // The Rekor entry logged another signature than the one the layer carries.
    const edited = await legacy("legacy-edited");
    const other = await legacy("legacy-edited");
    await pushLegacySignature(distribution.url, "acme/shop", digests["legacy-edited"]!, {
      payload: edited.payload,
      annotations: {
        ...edited.annotations,
        "dev.sigstore.cosign/bundle": other.annotations["dev.sigstore.cosign/bundle"]!,
      },
    });
  });
  afterAll(async () => distribution?.close());

  it("admits a digest signed by the named workflow identity, certificate chained to the trusted root and logged", async () => {
    expect(await client().checkSignature(name, digests.right!, policy)).toEqual({
      verified: true,
      via: `referrers tag ${digests.right!.replace(":", "-")}`,
    });
  });

  it("admits cosign 2's keyless signature under the legacy .sig tag (certificate and Rekor entry in its annotations)", async () => {
    expect(await client().checkSignature(name, digests.legacy!, policy)).toEqual({
      verified: true,
      via: `${digests.legacy!.replace(":", "-")}.sig`,
    });
  });

  it.each([
    ["legacy-wrong-subject", /^signed by https:\/\/github\.com\/evil\/fork\//],
    ["legacy-edited", /^its transparency log entry does not verify/],
  ])("refuses the cosign 2 keyless signature %s with the reason", async (tag, reason) => {
    const result = await client().checkSignature(name, digests[tag]!, policy);
    expect(result).toEqual({ verified: false, reason: expect.stringMatching(reason) });
  });

  it.each([
    [
      "wrong-subject",
      /^signed by https:\/\/github\.com\/evil\/fork\/\.github\/workflows\/release\.yml@refs\/tags\/v1\.9\.0 \(issuer https:\/\/token\.actions\.githubusercontent\.com\)$/,
    ],
    [
      "wrong-issuer",
      /^signed by https:\/\/github\.com\/acme\/shop\/.* \(issuer https:\/\/accounts\.example\.com\)$/,
    ],
    ["foreign-ca", /^its certificate is not trusted/],
    ["no-tlog", /^it carries no transparency log \(Rekor\) entry, which verify.tlog requires$/],
    ["other-digest", /^its signature is for another digest$/],
  ])("refuses %s with the reason", async (tag, reason) => {
    const result = await client().checkSignature(name, digests[tag]!, policy);
    expect(result).toEqual({ verified: false, reason: expect.stringMatching(reason) });
  });

  it("refuses a digest whose certificate is chained to the public-good root Ferry ships, not the test one", async () => {
    const result = await createRegistryClient().checkSignature(name, digests.right!, policy);
    expect(result).toEqual({
      verified: false,
      reason: expect.stringMatching(/^its certificate is not trusted/),
    });
  });

  const attested: VerifyPolicy = {
    ...policy,
    attestations: ["slsaprovenance"],
    builder: "https://github.com/acme/shop/.github/workflows/release.yml@*",
    source: "https://github.com/acme/shop",
  };

  it("admits a digest with SLSA provenance from the named builder for the image's source", async () => {
    expect(await client().checkSignature(name, digests.attested!, attested)).toMatchObject({
      verified: true,
      via: expect.stringContaining("slsaprovenance referrers tag"),
    });
  });

  it.each([
    [
      "wrong-source",
      /^slsaprovenance: its provenance names source https:\/\/github\.com\/evil\/fork, not https:\/\/github\.com\/acme\/shop$/,
    ],
    ["unattested", /^slsaprovenance: no attestation found/],
  ])("refuses %s with the reason", async (tag, reason) => {
    const result = await client().checkSignature(name, digests[tag]!, attested);
    expect(result).toEqual({ verified: false, reason: expect.stringMatching(reason) });
  });

  it("refuses provenance from another builder", async () => {
    const result = await client().checkSignature(name, digests.attested!, {
      ...attested,
      builder: "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/*",
    });
    expect(result).toEqual({
      verified: false,
      reason: expect.stringMatching(
        /^slsaprovenance: its provenance was built by https:\/\/github\.com\/acme\/shop\//,
      ),
    });
  });
});
