import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config/load-config.js";
import { environmentPolicy } from "../../../src/core/config/schema.js";
import { parsePolicy } from "../../../src/core/policy/parse-policy.js";
import { metadataNeeds, selectTag } from "../../../src/core/policy/select-tag.js";

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
      "keyless fields",
      "        issuer: https://token.actions.githubusercontent.com\n        subject: https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v1",
      /keyless verification \(issuer\/subject\) is not available yet/,
    ],
  ])("refuses %s with a one-line reason", (_what, verify, message) => {
    const result = loadConfig(config(verify));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((problem) => problem.message).join("\n")).toMatch(message);
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
