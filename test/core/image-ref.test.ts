import { describe, expect, it } from "vitest";
import {
  describeVersion,
  isValidTag,
  sameImage,
  shortDigest,
  TAG_PATTERN,
  TAG_SOURCE,
} from "../../src/core/image-ref.js";
import { parseCommands } from "../../src/core/pr/commands.js";

describe("sameImage", () => {
  it("treats Docker Hub's spellings of one repository as the same image", () => {
    expect(sameImage("nginx", "docker.io/library/nginx")).toBe(true);
    expect(sameImage("index.docker.io/library/nginx", "nginx:1.25")).toBe(true);
    expect(sameImage("registry-1.docker.io/acme/shop", "acme/shop")).toBe(true);
  });

  it("ignores case, as GitHub reports owners the way they were typed", () => {
    expect(sameImage("ghcr.io/Acme/Shop", "ghcr.io/acme/shop")).toBe(true);
  });

  it("ignores tags and digests but not the registry or the path", () => {
    expect(sameImage("ghcr.io/acme/shop:1.8.0", "ghcr.io/acme/shop@sha256:" + "a".repeat(64))).toBe(true);
    expect(sameImage("ghcr.io/acme/shop", "docker.io/acme/shop")).toBe(false);
    expect(sameImage("ghcr.io/acme/shop", "ghcr.io/acme/shop-config")).toBe(false);
  });

  it("is false for anything that is not an image reference", () => {
    expect(sameImage("ghcr.io/acme/shop", "not an image")).toBe(false);
  });
});

describe("shortDigest", () => {
  it("keeps the algorithm and 12 hex digits, the one form every message and table uses", () => {
    expect(shortDigest(`sha256:${"ab12".repeat(16)}`)).toBe("sha256:ab12ab12ab12");
    expect(shortDigest(undefined)).toBe("");
  });
});

describe("describeVersion", () => {
  const digest = `sha256:${"cd34".repeat(16)}`;
  it("names a version by tag and short digest, or whichever is known", () => {
    expect(describeVersion({ tag: "1.4.2", digest })).toBe("1.4.2 (sha256:cd34cd34cd34)");
    expect(describeVersion({ digest })).toBe("sha256:cd34cd34cd34");
    expect(describeVersion({ tag: "1.4.2" })).toBe("1.4.2");
    expect(describeVersion({})).toBe("(none)");
    expect(describeVersion(undefined)).toBe("(none)");
  });
});

describe("the tag grammar", () => {
  it("is one definition: the anchored pattern is the source the command grammar embeds", () => {
    expect(TAG_PATTERN.source).toBe(`^${TAG_SOURCE}$`);
    const tag = "v1.8.0_rc-1";
    expect(isValidTag(tag)).toBe(true);
    expect(parseCommands(`/promote prod shop@${tag}`)).toEqual([
      { name: "promote", environment: "prod", image: { name: "shop", tag } },
    ]);
  });

  it("refuses what the OCI grammar refuses: leading dot or dash, over 128 characters, newlines", () => {
    for (const tag of [".hidden", "-x", "a".repeat(129), "v1\n---", "a b", ""])
      expect(isValidTag(tag)).toBe(false);
    expect(isValidTag("a".repeat(128))).toBe(true);
  });
});
