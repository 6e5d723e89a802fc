import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config/load-config.js";
import { environmentPolicy } from "../../../src/core/policy/layered-policy.js";
import { parsePolicy } from "../../../src/core/policy/parse-policy.js";
import { metadataNeeds, selectTag } from "../../../src/core/policy/select-tag.js";
import { compileGlob } from "../../../src/core/patterns/glob.js";
import { notSignedReason } from "../../../src/core/policy/verify.js";

const NOW = new Date("2024-06-01T12:00:00Z");
const KEY = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n";
const DIGEST = (c: string) => `sha256:${c.repeat(64)}`;

function config(verify: string, env = ""): string {
  return `images:\n  shop:\n    repository: ghcr.io/acme/shop\n    policy:\n      verify:\n${verify}\nenvironments:\n  staging:\n    paths: [overlays/staging]\n${env}`;
}

describe("the verify field of a tag policy", () => {
  it("accepts a PEM public key written as a block scalar and resolves it for every environment", () => {
    const block = KEY.trim()
      .split("\n")
      .map((line) => `          ${line}`)
      .join("\n");
    const result = loadConfig(config(`        name: release key\n        key: |\n${block}`));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(environmentPolicy(result.config, "staging", "shop").verify).toEqual({
      key: KEY,
      name: "release key",
    });
  });

  it.each([
    ["a key that is not PEM", "        key: ssh-ed25519 AAAA", /key must be a PEM public key/],
    [
      "a private key",
      '        key: "-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n"',
      /key must be a PEM public key/,
    ],
    ["no key", "        name: release key", /verify needs key/],
    [
      "a subject without issuer",
      "        subject: https://github.com/acme/shop/x",
      /keyless verify needs issuer/,
    ],
    [
      "an issuer that is not https",
      "        issuer: http://x\n        subject: a",
      /issuer must be an https:\/\/ URL/,
    ],
    [
      "a subject matching everyone",
      "        issuer: https://x\n        subject: '*'",
      /subject must name an identity/,
    ],
    [
      "key and keyless together",
      `        key: "${KEY.replace(/\n/g, "\\n")}"\n        issuer: https://x\n        subject: a`,
      /key or issuer\/subject \(keyless\), not both/,
    ],
    [
      "attestations without a builder",
      "        issuer: https://x\n        subject: a\n        attestations: [slsaprovenance]",
      /attestations need builder/,
    ],
    [
      "an unknown attestation type",
      "        issuer: https://x\n        subject: a\n        attestations: [sbom]\n        builder: b",
      /attestations/,
    ],
    [
      "attestations on an image without source",
      "        issuer: https://x\n        subject: a\n        attestations: [slsaprovenance]\n        builder: b",
      /attestations are checked against the image's source: set source/,
    ],
  ])("refuses %s with a one-line reason", (_what, verify, message) => {
    const result = loadConfig(config(verify));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((problem) => problem.message).join("\n")).toMatch(message);
  });
});

describe("keyless and attestation policies", () => {
  const GITHUB = "https://token.actions.githubusercontent.com";
  const SUBJECT = "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/*";

  it("resolves a keyless identity with the transparency log required by default", () => {
    const result = loadConfig(config(`        issuer: ${GITHUB}\n        subject: ${SUBJECT}`));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(environmentPolicy(result.config, "staging", "shop").verify).toEqual({
      issuer: GITHUB,
      subject: SUBJECT,
      tlog: true,
    });
  });

  it("checks provenance against the image's own source, with the builder the policy names", () => {
    const yaml = config(
      `        issuer: ${GITHUB}\n        subject: ${SUBJECT}\n        tlog: false\n        attestations: [slsaprovenance]\n        builder: https://github.com/acme/shop/.github/workflows/release.yml@*`,
    ).replace(
      "    repository: ghcr.io/acme/shop\n",
      "    repository: ghcr.io/acme/shop\n    source: acme/shop\n",
    );
    const result = loadConfig(yaml);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(environmentPolicy(result.config, "staging", "shop").verify).toEqual({
      issuer: GITHUB,
      subject: SUBJECT,
      attestations: ["slsaprovenance"],
      builder: "https://github.com/acme/shop/.github/workflows/release.yml@*",
      source: "https://github.com/acme/shop",
    });
  });

  it("names a GitHub Actions identity as the repository's workflow in reasons", () => {
    expect(notSignedReason("1.9.0", { issuer: GITHUB, subject: SUBJECT }, "no cosign signature found")).toBe(
      "1.9.0 not signed by acme/shop's release workflow (no cosign signature found)",
    );
  });

  it("matches * in a subject as any characters and everything else literally", () => {
    const subject = compileGlob(SUBJECT, "wildcard");
    expect(subject.test(SUBJECT.replace("*", "v1.9.0"))).toBe(true);
    expect(subject.test(SUBJECT.replace("refs/tags/*", "refs/heads/main"))).toBe(false);
    expect(compileGlob("https://a.b/c?[x]{y}", "wildcard").test("https://a.b/c?[x]{y}")).toBe(true);
    expect(compileGlob("https://a.b/c", "wildcard").test("https://aXb/c")).toBe(false);
  });
});

describe("selection under a verify policy", () => {
  const policy = parsePolicy({ verify: { key: KEY } });

  it("needs each candidate's digest and signature", () => {
    expect(metadataNeeds(policy)).toMatchObject({ digest: true, signature: true });
  });

  it("never chooses a tag whose signature did not verify, and names the signer in the reason", () => {
    const selection = selectTag(
      [
        {
          tag: "1.9.1",
          digest: DIGEST("b"),
          signature: { verified: false, reason: "no cosign signature found" },
        },
        { tag: "1.9.0", digest: DIGEST("a"), signature: { verified: true, via: "sha256-a.sig" } },
      ],
      { policy, now: NOW, current: "1.8.0" },
    );
    expect(selection).toMatchObject({ kind: "selected", tag: "1.9.0" });
  });

  it("fails closed: a candidate whose signature was not checked is not chosen", () => {
    const selection = selectTag([{ tag: "1.9.1", digest: DIGEST("b") }], {
      policy,
      now: NOW,
      current: "1.8.0",
    });
    expect(selection).toEqual({
      kind: "none",
      reason: expect.stringMatching(
        /1 tag newer than current 1\.8\.0 but none is usable: 1 not signed by the configured key/,
      ),
    });
  });

  it("refuses a moving tag (strategy digest) whose new digest is unsigned", () => {
    const digestPolicy = parsePolicy({
      strategy: "digest",
      tag: "latest",
      pin: "digest",
      verify: { key: KEY, name: "ci" },
    });
    const selection = selectTag([{ tag: "latest", digest: DIGEST("c") }], { policy: digestPolicy, now: NOW });
    expect(selection).toEqual({
      kind: "none",
      reason: expect.stringMatching(/latest is not usable, it is not signed by ci/),
    });
  });
});
