import { describe, expect, it } from "vitest";
import { nextLink } from "../../../src/adapters/registry/link-header.js";
import { parseRateLimitRemaining, retryAfterMs } from "../../../src/adapters/registry/rate-limit.js";
import { parseWwwAuthenticate } from "../../../src/adapters/registry/www-authenticate.js";

describe("parseWwwAuthenticate", () => {
  it("reads realm, service and a scope whose actions contain a comma", () => {
    expect(
      parseWwwAuthenticate(
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull,push"',
      ),
    ).toEqual([
      {
        scheme: "bearer",
        params: {
          realm: "https://auth.docker.io/token",
          service: "registry.docker.io",
          scope: "repository:library/nginx:pull,push",
        },
      },
    ]);
  });

  it("accepts unquoted values, spaces around = and mixed-case names", () => {
    expect(parseWwwAuthenticate("bearer Realm = https://ghcr.io/token , Service=ghcr.io")).toEqual([
      { scheme: "bearer", params: { realm: "https://ghcr.io/token", service: "ghcr.io" } },
    ]);
  });

  it("unescapes quoted-pair characters", () => {
    expect(parseWwwAuthenticate('Basic realm="say \\"hi\\""')[0]!.params.realm).toBe('say "hi"');
  });

  it("separates several challenges in one header", () => {
    const challenges = parseWwwAuthenticate(
      'Basic realm="r1", Bearer realm="https://x/token",error="invalid_token"',
    );
    expect(challenges.map((challenge) => challenge.scheme)).toEqual(["basic", "bearer"]);
    expect(challenges[1]!.params.error).toBe("invalid_token");
  });

  it("returns nothing for an absent header", () => {
    expect(parseWwwAuthenticate(null)).toEqual([]);
  });
});

describe("nextLink", () => {
  const page = "https://r.example/v2/a/tags/list?n=2";

  it("resolves a relative next link against the page URL", () => {
    expect(nextLink('</v2/a/tags/list?n=2&last=b>; rel="next"', page)?.href).toBe(
      "https://r.example/v2/a/tags/list?n=2&last=b",
    );
  });

  it("keeps an absolute next link", () => {
    expect(nextLink("<https://other.example/v2/a/tags/list?last=b>; rel=next", page)?.host).toBe(
      "other.example",
    );
  });

  it("picks next among several links and ignores last", () => {
    expect(nextLink('</x?last=z>; rel="last", </x?last=b>; rel="prev next"', page)?.search).toBe("?last=b");
  });

  it("returns undefined without a next link", () => {
    expect(nextLink('</x>; rel="last"', page)).toBeUndefined();
    expect(nextLink(null, page)).toBeUndefined();
  });
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");

  it("reads seconds", () => {
    expect(retryAfterMs(new Headers({ "retry-after": "30" }), now)).toBe(30_000);
  });

  it("reads an HTTP date", () => {
    expect(retryAfterMs(new Headers({ "retry-after": new Date(now + 45_000).toUTCString() }), now)).toBe(
      45_000,
    );
  });

  it("falls back to Docker Hub's exhausted ratelimit window", () => {
    expect(retryAfterMs(new Headers({ "ratelimit-remaining": "0;w=21600" }), now)).toBe(21_600_000);
  });

  it("does not back off while requests remain", () => {
    expect(retryAfterMs(new Headers({ "ratelimit-remaining": "76;w=21600" }), now)).toBeUndefined();
    expect(parseRateLimitRemaining("76;w=21600")).toEqual({ remaining: 76, windowSeconds: 21600 });
  });
});
