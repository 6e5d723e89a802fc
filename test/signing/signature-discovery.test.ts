import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { startDistribution, type RunningDistribution } from "../support/registry-distribution.js";
import { generateKeyPair, pushSignature, signWithKey } from "./cosign-artifacts.js";
import { COSIGN_VERSION, cosignBinary, createSigner } from "./cosign-cli.js";

/**
 * Signature discovery and checks against the real CNCF distribution 2.8 (no referrers API: the
 * legacy `.sig` tag and the referrers tag schema must work), and the referrers API answered in
 * front of it. Artifacts are written in cosign's documented format (cosign-artifacts.ts).
 */
describe("cosign signature checks against a real distribution registry", () => {
  let distribution: RunningDistribution;
  const ours = generateKeyPair();
  const theirs = generateKeyPair();
  const digests: Record<string, string> = {};
  let name: string;

  beforeAll(async () => {
    distribution = await startDistribution("none");
    name = `${distribution.host}/acme/shop`;
    for (const tag of ["legacy", "referrer", "api", "unsigned", "other-key", "other-digest", "tampered"])
      digests[tag] = (await pushImage(distribution.url, "acme/shop", tag, { content: tag })).digest;
    const sign = (tag: string, options: Parameters<typeof pushSignature>[5] = {}, key = ours.privateKey) =>
      pushSignature(distribution.url, "acme/shop", name, digests[tag]!, signWithKey(key), options);
    await sign("legacy");
    await sign("referrer", { mode: "referrers-tag" });
    await sign("api", { mode: "referrers-tag" });
    await sign("other-key", {}, theirs.privateKey);
    await sign("other-digest", { payloadDigest: digests.legacy! });
    await sign("tampered", { tamper: true });
  });
  afterAll(async () => distribution?.close());

  const verify = () => ({ key: ours.publicPem });

  it("verifies a signature stored under cosign's legacy sha256-<hex>.sig tag", async () => {
    const client = createRegistryClient();
    expect(await client.checkSignature(name, digests.legacy!, verify())).toEqual({
      verified: true,
      via: `${digests.legacy!.replace(":", "-")}.sig`,
    });
  });

  it("falls back to the referrers tag schema when the registry has no referrers API (distribution 2.8)", async () => {
    const client = createRegistryClient();
    expect(await client.checkSignature(name, digests.referrer!, verify())).toEqual({
      verified: true,
      via: `referrers tag ${digests.referrer!.replace(":", "-")}`,
    });
  });

  it("uses the OCI 1.1 referrers API when the registry answers it", async () => {
    const tag = digests.api!.replace(":", "-");
    // The API answers what the tag index holds; the tag itself is hidden, so only the API can find it.
    const index = await (
      await fetch(`${distribution.url}/v2/acme/shop/manifests/${tag}`, {
        headers: { accept: "application/vnd.oci.image.index.v1+json" },
      })
    ).text();
    const seen: string[] = [];
    const client = createRegistryClient({
      fetch: async (input, init) => {
        const url = new URL(String(input instanceof Request ? input.url : input));
        seen.push(url.pathname);
        if (url.pathname === `/v2/acme/shop/referrers/${digests.api}`)
          return new Response(index, {
            status: 200,
            headers: { "content-type": "application/vnd.oci.image.index.v1+json" },
          });
        if (url.pathname === `/v2/acme/shop/manifests/${tag}`) return new Response("{}", { status: 404 });
        return fetch(input, init);
      },
    });
    expect(await client.checkSignature(name, digests.api!, verify())).toEqual({
      verified: true,
      via: "referrers API",
    });
    expect(seen).toContain(`/v2/acme/shop/referrers/${digests.api}`);
    expect(seen).not.toContain(`/v2/acme/shop/manifests/${tag}`);
  });

  it.each([
    ["unsigned", /^no cosign signature found/],
    ["other-key", /does not verify with the key/],
    ["other-digest", /signature is for another digest/],
    ["tampered", /does not verify with the key/],
  ])("refuses the %s image with the reason", async (tag, reason) => {
    const client = createRegistryClient();
    const result = await client.checkSignature(name, digests[tag]!, verify());
    expect(result.verified).toBe(false);
    expect(result.verified === false && result.reason).toMatch(reason);
  });

  it("checks a verified digest once: the second check sends no request", async () => {
    const client = createRegistryClient();
    await client.checkSignature(name, digests.legacy!, verify());
    const before = client.requestCounts()[distribution.host];
    expect(await client.checkSignature(name, digests.legacy!, verify())).toMatchObject({ verified: true });
    expect(client.requestCounts()[distribution.host]).toBe(before);
  });

  it("remembers an unsigned digest for a bounded time; a hint for its repository or the end of that time looks again", async () => {
    let clock = 1_000_000;
    const client = createRegistryClient({ now: () => clock, unsignedTtlMs: 60_000 });
    const { digest } = await pushImage(distribution.url, "acme/shop", "signed-later", { content: "later" });
    const requests = () => client.requestCounts()[distribution.host] ?? 0;
    expect(await client.checkSignature(name, digest, verify())).toMatchObject({ verified: false });
    const afterFirst = requests();
    expect(afterFirst).toBeGreaterThan(0);
    // Every scan within the time: the unsigned answer, with no request.
    expect(await client.checkSignature(name, digest, verify())).toMatchObject({ verified: false });
    expect(requests()).toBe(afterFirst);
    // The time runs out: a new look.
    clock += 60_001;
    expect(await client.checkSignature(name, digest, verify())).toMatchObject({ verified: false });
    const afterExpiry = requests();
    expect(afterExpiry).toBeGreaterThan(afterFirst);
    // CI signs it; the registry's notification for the repository is a hint: looked at again at once.
    await pushSignature(distribution.url, "acme/shop", name, digest, signWithKey(ours.privateKey));
    expect(await client.checkSignature(name, digest, verify())).toMatchObject({ verified: false });
    expect(requests()).toBe(afterExpiry);
    client.invalidate(name);
    expect(await client.checkSignature(name, digest, verify())).toMatchObject({ verified: true });
  });

  it("says so when the configured key is not a public key", async () => {
    const client = createRegistryClient();
    const broken = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n";
    expect(await client.checkSignature(name, digests.legacy!, { key: broken })).toMatchObject({
      verified: false,
      reason: expect.stringMatching(/not a usable public key/),
    });
  });

  // The real CLI (built by build-cosign.sh): what cosign itself writes, in both of its storage modes.
  it.skipIf(cosignBinary() === undefined).each([
    ["its default legacy .sig tag", [], /^sha256-[0-9a-f]{64}\.sig$/],
    [
      "an OCI 1.1 referrer (the referrers tag on distribution 2.8)",
      ["--registry-referrers-mode=oci-1-1"],
      /^referrers tag sha256-/,
    ],
    [
      "a Sigstore bundle referrer (--new-bundle-format, cosign 3's default)",
      ["--new-bundle-format=true", "--use-signing-config=false"],
      /^referrers tag sha256-/,
    ],
  ] as const)(
    `verifies what cosign ${COSIGN_VERSION} signs, stored as %s`,
    async (_mode, flags, via) => {
      const signer = createSigner("cosign", [...flags]);
      const tag = `cosign-${flags.length}`;
      const { digest } = await pushImage(distribution.url, "acme/shop", tag, { content: tag });
      await signer.sign(distribution.url, "acme/shop", name, digest);
      const client = createRegistryClient();
      const result = await client.checkSignature(name, digest, { key: signer.publicPem });
      expect(result).toEqual({ verified: true, via: expect.stringMatching(via) });
      // And another cosign key pair's signature is not ours.
      expect((await client.checkSignature(name, digest, { key: ours.publicPem })).verified).toBe(false);
    },
    120_000,
  );
});
