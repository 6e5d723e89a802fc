import { describe, expect, it } from "vitest";
import { createRegistryClient, RegistryUnavailableError } from "../../../src/adapters/registry/index.js";

/**
 * Docker Hub's pull budget: every manifest answer says how many pulls are left in the window
 * (`ratelimit-remaining: N;w=SECONDS`, https://docs.docker.com/docker-hub/usage/pulls/). Ferry
 * stops with a reserve left instead of running into 429s.
 */
describe("the announced rate limit", () => {
  it("stops with the reserve left until the window ends, without sending the request the registry would refuse", async () => {
    let remaining = 4;
    let sent = 0;
    const clock = { now: Date.parse("2026-01-01T00:00:00Z") };
    const fetch = (async (input: string | URL | Request) => {
      sent += 1;
      const url = String(input);
      const headers = {
        "content-type": "application/vnd.oci.image.index.v1+json",
        "docker-content-digest": `sha256:${"a".repeat(64)}`,
        "ratelimit-limit": "100;w=21600",
        "ratelimit-remaining": `${remaining};w=21600`,
      };
      remaining -= 1;
      if (url.includes("/manifests/")) return new Response(null, { status: 200, headers });
      return new Response("{}", { status: 404 });
    }) as typeof globalThis.fetch;
    const client = createRegistryClient({ fetch, now: () => clock.now, sleep: async () => {} });
    await client.resolveDigest("docker.io/library/nginx", "1.27"); // 4 left
    await client.resolveDigest("docker.io/library/nginx", "1.27"); // 3 left
    await client.resolveDigest("docker.io/library/nginx", "1.27"); // 2 left: the reserve
    const refused = await client
      .resolveDigest("docker.io/library/nginx", "1.27")
      .catch((error: Error) => error);
    expect(refused).toBeInstanceOf(RegistryUnavailableError);
    expect((refused as Error).message).toBe(
      "docker.io: backing off for 21600s (the registry's rate limit has 2 requests left (ratelimit-remaining))",
    );
    expect(sent).toBe(3);

    // The window rolled over: requests flow again.
    clock.now += 21_600_000;
    remaining = 100;
    await client.resolveDigest("docker.io/library/nginx", "1.27");
    expect(sent).toBe(4);
  });
});
