import { createHmac } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRegistryReceiver } from "../../src/server/registry-receiver.js";

const SECRETS = {
  distribution: "dist-secret",
  harbor: "harbor-secret",
  dockerhub: "hub-token-123",
  quay: "quay-token-456",
  generic: "generic-secret",
};

/** A request as node:http hands it over: a readable body plus method, url and lower-cased headers. */
function fakeRequest(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: Uint8Array,
): IncomingMessage {
  const req = Readable.from(body.length > 0 ? [Buffer.from(body)] : []) as unknown as IncomingMessage;
  Object.assign(req, { method, url, headers });
  return req;
}

function fakeResponse(): ServerResponse & { status(): number } {
  let status = 0;
  let sent = false;
  const onClose: (() => void)[] = [];
  const res = {
    statusCode: 200,
    get headersSent() {
      return sent;
    },
    setHeader() {
      return res;
    },
    once(event: string, listener: () => void) {
      if (event === "close") onClose.push(listener);
      return res;
    },
    end() {
      sent = true;
      status = res.statusCode;
      for (const listener of onClose.splice(0)) listener();
    },
    status: () => status,
  };
  return res as unknown as ServerResponse & { status(): number };
}

const routes = [
  { path: "/registry/distribution", header: "authorization" },
  { path: "/registry/harbor", header: "authorization" },
  { path: "/registry/dockerhub/", header: undefined },
  { path: "/registry/quay/", header: undefined },
  { path: "/registry/generic", header: "x-ferry-signature-256" },
] as const;

describe("goal G1 (docs/reliability.md): fuzzed unauthenticated or mis-signed requests", () => {
  it("answers every one with a 4xx and never produces a hint", async () => {
    let hints = 0;
    const receiver = createRegistryReceiver({
      secrets: SECRETS,
      coalesceMs: 0,
      maxBodyBytes: 4096,
      onHints: () => void hints++,
    });
    const secretValues = new Set<string>(
      Object.values(SECRETS).flatMap((secret) => [secret, `Bearer ${secret}`]),
    );

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.option(
          fc.oneof(
            fc.string(),
            fc.stringMatching(/^sha256=[0-9a-f]{64}$/),
            fc.constantFrom("Bearer ", "sha1=abc", "bogus=x"),
          ),
          { nil: undefined },
        ),
        fc.string({ maxLength: 40 }),
        fc.constantFrom(
          "application/json",
          "application/vnd.docker.distribution.events.v1+json",
          "text/plain",
          "application/x-www-form-urlencoded",
          "",
        ),
        fc.oneof(
          fc.uint8Array({ maxLength: 6000 }),
          fc.json().map((text) => new TextEncoder().encode(text)),
          fc.constant(new TextEncoder().encode('{"repository":"ghcr.io/acme/shop","tag":"1.8.0"}')),
        ),
        fc.constantFrom("POST", "POST", "POST", "GET", "PUT"),
        async (route, credential, urlToken, contentType, body, method) => {
          // A credential that happens to be right is not part of this property.
          fc.pre(credential === undefined || !secretValues.has(credential));
          fc.pre(!Object.values(SECRETS).includes(urlToken));
          if (route.header === "x-ferry-signature-256" && credential !== undefined) {
            fc.pre(
              credential !== `sha256=${createHmac("sha256", SECRETS.generic).update(body).digest("hex")}`,
            );
          }
          const headers: Record<string, string> = {};
          if (contentType) headers["content-type"] = contentType;
          if (route.header && credential !== undefined) headers[route.header] = credential;
          const path =
            route.header === undefined ? `${route.path}${encodeURIComponent(urlToken)}` : route.path;
          const res = fakeResponse();
          const handled = await receiver(fakeRequest(method, path, headers, body), res);
          expect(handled).toBe(true);
          expect(res.status()).toBeGreaterThanOrEqual(400);
          expect(res.status()).toBeLessThan(500);
        },
      ),
      { numRuns: 10_000, seed: 20240501 },
    );
    await receiver.flush();
    expect(hints).toBe(0);
  });
});
