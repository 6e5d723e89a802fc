import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import type { VerifyPolicy } from "../../src/core/policy/verify.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { startDistribution, type RunningDistribution } from "../support/registry-distribution.js";
import { generateKeyPair, pushAttestation } from "./cosign-artifacts.js";
import { COSIGN_VERSION, cosignBinary, createSigner, type Signer } from "./cosign-cli.js";

/**
 * SLSA provenance attached with `cosign attest --type slsaprovenance --key … --tlog-upload=false`
 * (the real CLI when build-cosign.sh has built it, else the same DSSE artifact from node:crypto),
 * on a real distribution 2.8, checked under a key policy with `attestations: [slsaprovenance]`.
 */
const BUILDER = "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v1.9.0";
const provenance = (source: string) => ({
  builder: { id: BUILDER },
  buildType: "https://github.com/slsa-framework/slsa-github-generator/generic@v1",
  invocation: {
    configSource: { uri: `git+https://github.com/${source}@refs/tags/v1.9.0`, entryPoint: "release" },
  },
  materials: [{ uri: `git+https://github.com/${source}@refs/tags/v1.9.0` }],
});
const ATTESTED_WITH =
  cosignBinary() !== undefined ? `cosign ${COSIGN_VERSION}` : "node:crypto (cosign not built)";

describe(`SLSA provenance attestations made with ${ATTESTED_WITH}`, () => {
  let distribution: RunningDistribution;
  let signer: Signer;
  let name: string;
  const digests: Record<string, string> = {};
  let policy: VerifyPolicy;

  beforeAll(async () => {
    signer = createSigner();
    distribution = await startDistribution("none");
    name = `${distribution.host}/acme/shop`;
    for (const tag of ["attested", "wrong-source", "signed-only", "foreign-attestation"]) {
      digests[tag] = (await pushImage(distribution.url, "acme/shop", tag, { content: tag })).digest;
      await signer.sign(distribution.url, "acme/shop", name, digests[tag]!);
    }
    await signer.attestProvenance(
      distribution.url,
      "acme/shop",
      name,
      digests.attested!,
      provenance("acme/shop"),
    );
    await signer.attestProvenance(
      distribution.url,
      "acme/shop",
      name,
      digests["wrong-source"]!,
      provenance("evil/fork"),
    );
    const stranger = generateKeyPair();
    await pushAttestation(
      distribution.url,
      "acme/shop",
      digests["foreign-attestation"]!,
      "https://slsa.dev/provenance/v0.2",
      provenance("acme/shop"),
      stranger.privateKey,
    );
    policy = {
      key: signer.publicPem,
      attestations: ["slsaprovenance"],
      builder: "https://github.com/acme/shop/.github/workflows/release.yml@*",
      source: "https://github.com/acme/shop",
    };
  });
  afterAll(async () => distribution?.close());

  it("admits a signed digest whose provenance names the builder and the image's source", async () => {
    expect(await createRegistryClient().checkSignature(name, digests.attested!, policy)).toEqual({
      verified: true,
      via: expect.stringMatching(/^sha256-[0-9a-f]{64}\.sig, slsaprovenance sha256-[0-9a-f]{64}\.att$/),
    });
  });

  it.each([
    [
      "wrong-source",
      /^slsaprovenance: its provenance names source https:\/\/github\.com\/evil\/fork, not https:\/\/github\.com\/acme\/shop$/,
    ],
    ["signed-only", /^slsaprovenance: no attestation found \(legacy \.att tag, referrers\)$/],
    ["foreign-attestation", /^slsaprovenance: a signature was found but does not verify with the key$/],
  ])("refuses %s with the reason", async (tag, reason) => {
    const result = await createRegistryClient().checkSignature(name, digests[tag]!, policy);
    expect(result).toEqual({ verified: false, reason: expect.stringMatching(reason) });
  });

  it("refuses provenance from a builder other than the one named", async () => {
    const result = await createRegistryClient().checkSignature(name, digests.attested!, {
      ...policy,
      builder: "https://github.com/slsa-framework/slsa-github-generator/*",
    });
    expect(result).toEqual({
      verified: false,
      reason: expect.stringMatching(
        /^slsaprovenance: its provenance was built by https:\/\/github\.com\/acme\/shop\//,
      ),
    });
  });
});
