import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { RegistryHint } from "../../src/handlers/registry/index.js";
import {
  createRegistryReceiver,
  type RegistryReceiver,
  type RegistryReceiverOptions,
} from "../../src/server/registry-receiver.js";
import { MEDIA_TYPES, startEmbeddedRegistry } from "../../packages/sandbox/src/registry/embedded-registry.js";

const SECRETS = {
  distribution: "dist-secret",
  harbor: "harbor-secret",
  dockerhub: "hub-token-123",
  quay: "quay-token-456",
  generic: "generic-secret",
};
const fixtureBytes = (name: string) =>
  readFileSync(new URL(`../fixtures/registry-webhooks/${name}`, import.meta.url));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Harness {
  url: string;
  receiver: RegistryReceiver;
  batches: RegistryHint[][];
  /** Requests that fell through to the next handler (Probot in production). */
  passedOn: string[];
}

async function startReceiver(overrides: Partial<RegistryReceiverOptions> = {}): Promise<Harness> {
  const batches: RegistryHint[][] = [];
  const passedOn: string[] = [];
  const receiver = createRegistryReceiver({
    secrets: SECRETS,
    coalesceMs: 60_000, // tests flush explicitly: no timing involved
    onHints: (hints) => {
      batches.push(hints);
    },
    ...overrides,
  });
  const server: Server = createServer(async (req, res) => {
    if (await receiver(req, res)) return;
    passedOn.push(req.url ?? "");
    res.statusCode = 418;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () => receiver.close(),
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, receiver, batches, passedOn };
}

function post(url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return fetch(url, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body });
}

const sign = (body: string | Buffer, secret = SECRETS.generic) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

describe("registry receiver routing", () => {
  it("passes paths outside /registry/ on to the next handler", async () => {
    const harness = await startReceiver();
    const response = await post(`${harness.url}/api/github/webhooks`, "{}");
    expect(response.status).toBe(418);
    expect(harness.passedOn).toEqual(["/api/github/webhooks"]);
  });

  it("answers 404 for unknown registry routes and for routes without a configured secret", async () => {
    const harness = await startReceiver({ secrets: { ...SECRETS, quay: "" } });
    expect((await post(`${harness.url}/registry/nexus`, "{}")).status).toBe(404);
    expect((await post(`${harness.url}/registry/quay/${SECRETS.quay}`, "{}")).status).toBe(404);
    expect(
      (
        await post(`${harness.url}/registry/distribution/extra`, "{}", {
          Authorization: SECRETS.distribution,
        })
      ).status,
    ).toBe(404);
    expect(harness.passedOn).toEqual([]);
  });

  it("answers 405 to anything but POST", async () => {
    const harness = await startReceiver();
    expect((await fetch(`${harness.url}/registry/generic`)).status).toBe(405);
  });
});

describe("credentials", () => {
  const valid = fixtureBytes("distribution-push-envelope.json");

  it("accepts the distribution route's Authorization header as configured or as a bearer token", async () => {
    const harness = await startReceiver();
    expect(
      (await post(`${harness.url}/registry/distribution`, valid, { Authorization: SECRETS.distribution }))
        .status,
    ).toBe(202);
    expect(
      (
        await post(`${harness.url}/registry/distribution`, valid, {
          Authorization: `Bearer ${SECRETS.distribution}`,
        })
      ).status,
    ).toBe(202);
  });

  const wrongCredentials: [string, (url: string) => Promise<Response>][] = [
    ["distribution without Authorization", (url) => post(`${url}/registry/distribution`, valid)],
    [
      "distribution with a wrong Authorization",
      (url) => post(`${url}/registry/distribution`, valid, { Authorization: "dist-secreT" }),
    ],
    [
      "distribution with a longer Authorization",
      (url) => post(`${url}/registry/distribution`, valid, { Authorization: `${SECRETS.distribution}x` }),
    ],
    [
      "harbor with another route's secret",
      (url) =>
        post(`${url}/registry/harbor`, fixtureBytes("harbor-push-image-v1.json"), {
          Authorization: SECRETS.distribution,
        }),
    ],
    [
      "harbor without Authorization",
      (url) => post(`${url}/registry/harbor`, fixtureBytes("harbor-push-image-v1.json")),
    ],
    [
      "dockerhub with a wrong token",
      (url) => post(`${url}/registry/dockerhub/hub-token-124`, fixtureBytes("dockerhub-push.json")),
    ],
    [
      "dockerhub with an empty token",
      (url) => post(`${url}/registry/dockerhub/`, fixtureBytes("dockerhub-push.json")),
    ],
    [
      "quay with a prefix of the token",
      (url) => post(`${url}/registry/quay/quay-token`, fixtureBytes("quay-repository-push.json")),
    ],
    [
      "generic without signature",
      (url) => post(`${url}/registry/generic`, '{"repository":"acme/shop","tag":"1.0.0"}'),
    ],
    [
      "generic signed with another secret",
      (url) =>
        post(`${url}/registry/generic`, '{"repository":"acme/shop"}', {
          "X-Ferry-Signature-256": sign('{"repository":"acme/shop"}', "other"),
        }),
    ],
    [
      "generic with an uppercase hex signature",
      (url) =>
        post(`${url}/registry/generic`, '{"repository":"acme/shop"}', {
          "X-Ferry-Signature-256": sign('{"repository":"acme/shop"}')
            .toUpperCase()
            .replace("SHA256", "sha256"),
        }),
    ],
    [
      "generic with a sha1 signature",
      (url) =>
        post(`${url}/registry/generic`, '{"repository":"acme/shop"}', {
          "X-Ferry-Signature-256": "sha1=0000000000000000000000000000000000000000",
        }),
    ],
  ];

  it.each(wrongCredentials)("refuses %s with 401 and no hint", async (_name, send) => {
    const harness = await startReceiver();
    const response = await send(harness.url);
    expect(response.status).toBe(401);
    await harness.receiver.flush();
    expect(harness.batches).toEqual([]);
  });

  it("verifies the generic signature over the raw bytes, not re-serialized JSON", async () => {
    const harness = await startReceiver();
    const raw = '{ "repository": "ghcr.io/acme/shop",  "tag": "1.8.0", "note": "déjà vu 🚢" }';
    expect(
      (await post(`${harness.url}/registry/generic`, raw, { "X-Ferry-Signature-256": sign(raw) })).status,
    ).toBe(202);
    const reserialized = JSON.stringify(JSON.parse(raw));
    expect(
      (await post(`${harness.url}/registry/generic`, raw, { "X-Ferry-Signature-256": sign(reserialized) }))
        .status,
    ).toBe(401);
    await harness.receiver.flush();
    expect(harness.batches).toEqual([
      [{ registry: "ghcr.io", repository: "acme/shop", tag: "1.8.0", source: "generic" }],
    ]);
  });
});

describe("every route turns its provider's payload into a hint", () => {
  const cases: [string, string, Record<string, string>, RegistryHint][] = [
    [
      "/registry/distribution",
      "distribution-push-envelope.json",
      {
        Authorization: SECRETS.distribution,
        "Content-Type": "application/vnd.docker.distribution.events.v1+json",
      },
      {
        registry: "example.com",
        repository: "library/test",
        digest: "sha256:fea8895f450959fa676bcc1df0611ea93823a735a01205fd8622846041d0c7cf",
        source: "distribution",
      },
    ],
    [
      "/registry/harbor",
      "harbor-push-image-v1.json",
      { Authorization: SECRETS.harbor },
      {
        registry: "harbor.example.com",
        repository: "public/nginx",
        tag: "v1.10.0",
        digest: "sha256:89a42c3ba15f09a3fbe39856bddacdf9e94cd03df7403cad4fc1051d9f268fc9",
        source: "harbor",
      },
    ],
    [
      "/registry/harbor",
      "harbor-push-artifact.json",
      { Authorization: SECRETS.harbor },
      {
        registry: "localhost",
        repository: "harbor/alpine",
        digest: "sha256:954b378c375d852eb3c63ab88978f640b4348b01c1b3456a024a81536dafbbf4",
        source: "harbor",
      },
    ],
    [
      `/registry/dockerhub/${SECRETS.dockerhub}`,
      "dockerhub-push.json",
      {},
      { registry: "docker.io", repository: "svendowideit/testhook", tag: "latest", source: "dockerhub" },
    ],
    [
      `/registry/quay/${SECRETS.quay}`,
      "quay-repository-push.json",
      {},
      { registry: "quay.io", repository: "dgangaia/test", tag: "latest", source: "quay" },
    ],
  ];

  it.each(cases)("%s accepts %s", async (path, file, headers, expected) => {
    const harness = await startReceiver();
    const response = await post(`${harness.url}${path}`, fixtureBytes(file), headers);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: 1 });
    await harness.receiver.flush();
    expect(harness.batches).toEqual([[expected]]);
  });

  it("never fetches the Docker Hub callback_url", async () => {
    let callbacks = 0;
    const trap = createServer((_req, res) => {
      callbacks++;
      res.end();
    });
    await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => trap.close(() => resolve())));
    const harness = await startReceiver();
    const payload = JSON.parse(fixtureBytes("dockerhub-push.json").toString());
    payload.callback_url = `http://127.0.0.1:${(trap.address() as AddressInfo).port}/callback`;
    expect(
      (await post(`${harness.url}/registry/dockerhub/${SECRETS.dockerhub}`, JSON.stringify(payload))).status,
    ).toBe(202);
    await harness.receiver.flush();
    expect(harness.batches).toHaveLength(1);
    expect(callbacks).toBe(0);
  });
});

describe("bad requests", () => {
  it("refuses a non-JSON content type with 415", async () => {
    const harness = await startReceiver();
    for (const type of ["application/x-www-form-urlencoded", "text/plain", ""]) {
      const response = await fetch(`${harness.url}/registry/harbor`, {
        method: "POST",
        headers: { Authorization: SECRETS.harbor, "Content-Type": type },
        body: "{}",
      });
      expect(response.status).toBe(415);
    }
  });

  it("refuses malformed JSON with 400", async () => {
    const harness = await startReceiver();
    expect((await post(`${harness.url}/registry/quay/${SECRETS.quay}`, '{"docker_url": ')).status).toBe(400);
    const body = "not json";
    expect(
      (await post(`${harness.url}/registry/generic`, body, { "X-Ferry-Signature-256": sign(body) })).status,
    ).toBe(400);
  });

  it("refuses a signed generic payload with an invalid tag with 400", async () => {
    const harness = await startReceiver();
    const body = JSON.stringify({ repository: "acme/shop", tag: "v1\n---\nkind: Secret" });
    const response = await post(`${harness.url}/registry/generic`, body, {
      "X-Ferry-Signature-256": sign(body),
    });
    expect(response.status).toBe(400);
    await harness.receiver.flush();
    expect(harness.batches).toEqual([]);
  });

  it("answers 413 to a body over the cap, declared or chunked", async () => {
    const harness = await startReceiver({ maxBodyBytes: 1024 });
    const big = JSON.stringify({ padding: "x".repeat(4096) });
    expect((await post(`${harness.url}/registry/quay/${SECRETS.quay}`, big)).status).toBe(413);
    const chunked = await sendChunked(`${harness.url}/registry/quay/${SECRETS.quay}`, [
      Buffer.from(big.slice(0, 800)),
      Buffer.from(big.slice(800)),
    ]);
    expect(chunked).toBe(413);
    // A body of exactly the cap is fine.
    const exact = JSON.stringify({ docker_url: "quay.io/a/b", updated_tags: ["t"], pad: "" });
    const padded = exact.replace('"pad":""', `"pad":"${"y".repeat(1024 - exact.length)}"`);
    expect(Buffer.byteLength(padded)).toBe(1024);
    expect((await post(`${harness.url}/registry/quay/${SECRETS.quay}`, padded)).status).toBe(202);
  });

  it("answers 413 to a body over the default 3 MiB cap", async () => {
    const harness = await startReceiver();
    const status = await sendChunked(`${harness.url}/registry/dockerhub/${SECRETS.dockerhub}`, [
      Buffer.alloc(3 * 1024 * 1024 + 1, 0x20),
    ]);
    expect(status).toBe(413);
  });

  it("answers 408 when the body stalls past the body timeout", async () => {
    const harness = await startReceiver({ bodyTimeoutMs: 50 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${harness.url}/registry/quay/${SECRETS.quay}`,
        { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": "100" } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.write('{"docker_url":'); // and nothing more: a slow-drip sender
    });
    expect(status).toBe(408);
    await harness.receiver.flush();
    expect(harness.batches).toEqual([]);
  });

  it("acknowledges unknown shapes, pulls, deletes and scans with 202 and ignores them", async () => {
    const harness = await startReceiver();
    const auth = { Authorization: SECRETS.harbor };
    for (const file of ["harbor-pull-artifact.json", "harbor-delete-artifact.json"]) {
      const response = await post(`${harness.url}/registry/harbor`, fixtureBytes(file), auth);
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ accepted: 0 });
    }
    expect((await post(`${harness.url}/registry/harbor`, '{"type":"SCANNING_COMPLETED"}', auth)).status).toBe(
      202,
    );
    expect(
      (
        await post(`${harness.url}/registry/distribution`, fixtureBytes("distribution-pull.json"), {
          Authorization: SECRETS.distribution,
        })
      ).status,
    ).toBe(202);
    expect((await post(`${harness.url}/registry/quay/${SECRETS.quay}`, "[1,2,3]")).status).toBe(202);
    await harness.receiver.flush();
    expect(harness.batches).toEqual([]);
  });

  it("keeps answering when the hint consumer throws", async () => {
    const warnings: string[] = [];
    const harness = await startReceiver({
      coalesceMs: 0,
      onHints: () => {
        throw new Error("consumer failed");
      },
      log: { info: () => {}, warn: (_obj, msg) => warnings.push(msg) },
    });
    expect(
      (await post(`${harness.url}/registry/quay/${SECRETS.quay}`, fixtureBytes("quay-repository-push.json")))
        .status,
    ).toBe(202);
    expect(
      (await post(`${harness.url}/registry/quay/${SECRETS.quay}`, fixtureBytes("quay-repository-push.json")))
        .status,
    ).toBe(202);
    await harness.receiver.flush();
    expect(warnings).toContain("registry hint handler failed");
  });

  it("never logs the credentials it was sent", async () => {
    const lines: string[] = [];
    const log = {
      info: (obj: object, msg: string) => lines.push(JSON.stringify(obj) + msg),
      warn: (obj: object, msg: string) => lines.push(JSON.stringify(obj) + msg),
    };
    const harness = await startReceiver({ log });
    await post(`${harness.url}/registry/distribution`, "{}", { Authorization: "attacker-guess-777" });
    await post(`${harness.url}/registry/distribution`, fixtureBytes("distribution-push-envelope.json"), {
      Authorization: SECRETS.distribution,
    });
    await post(`${harness.url}/registry/quay/${SECRETS.quay}`, fixtureBytes("quay-repository-push.json"));
    expect(lines).toHaveLength(3);
    expect(lines.join("\n")).not.toMatch(/attacker-guess-777|dist-secret|quay-token-456/);
  });
});

describe("splitting and coalescing", () => {
  it("splits a multi-event distribution envelope and merges a burst for one repository into one call", async () => {
    const harness = await startReceiver();
    const push = (repository: string, tag: string, digest: string) => ({
      action: "push",
      target: {
        mediaType: MEDIA_TYPES.ociManifest,
        repository,
        tag,
        digest,
        url: `http://127.0.0.1:5000/v2/${repository}/manifests/${digest}`,
      },
    });
    const digest = (n: number) => `sha256:${createHash("sha256").update(String(n)).digest("hex")}`;
    const headers = { Authorization: SECRETS.distribution };
    await post(
      `${harness.url}/registry/distribution`,
      JSON.stringify({
        events: [push("acme/shop", "1.8.0", digest(1)), push("acme/api", "2.0.0", digest(2))],
      }),
      headers,
    );
    for (let n = 3; n < 13; n++) {
      await post(
        `${harness.url}/registry/distribution`,
        JSON.stringify({ events: [push("acme/shop", n % 2 ? "1.8.1" : "latest", digest(n))] }),
        headers,
      );
    }
    expect(harness.batches).toEqual([]);
    await harness.receiver.flush();

    expect(harness.batches).toHaveLength(2);
    const shop = harness.batches.find((batch) => batch[0]!.repository === "acme/shop")!;
    // One hint per tag, the latest digest wins, ordered by their latest arrival.
    expect(shop.map((hint) => [hint.tag, hint.digest])).toEqual([
      ["1.8.0", digest(1)],
      ["1.8.1", digest(11)],
      ["latest", digest(12)],
    ]);
    const api = harness.batches.find((batch) => batch[0]!.repository === "acme/api")!;
    expect(api).toEqual([
      {
        registry: "127.0.0.1:5000",
        repository: "acme/api",
        tag: "2.0.0",
        digest: digest(2),
        source: "distribution",
      },
    ]);
  });

  it("delivers a coalesced batch by itself once the window closes", async () => {
    let resolveDelivered!: (hints: RegistryHint[]) => void;
    const delivered = new Promise<RegistryHint[]>((resolve) => (resolveDelivered = resolve));
    const harness = await startReceiver({ coalesceMs: 5, onHints: (hints) => resolveDelivered(hints) });
    await post(`${harness.url}/registry/quay/${SECRETS.quay}`, fixtureBytes("quay-repository-push.json"));
    expect(await delivered).toEqual([
      { registry: "quay.io", repository: "dgangaia/test", tag: "latest", source: "quay" },
    ]);
  });
});

describe("embedded registry notifications reach the receiver", () => {
  it("turns a push to the embedded registry into a distribution hint", async () => {
    const harness = await startReceiver();
    const registry = await startEmbeddedRegistry({
      notifications: [
        {
          url: `${harness.url}/registry/distribution`,
          headers: { Authorization: `Bearer ${SECRETS.distribution}` },
        },
      ],
    });
    cleanups.push(() => registry.close());

    const config = Buffer.from('{"architecture":"amd64","os":"linux"}');
    const configDigest = `sha256:${createHash("sha256").update(config).digest("hex")}`;
    expect(
      (
        await fetch(`${registry.url}/v2/acme/shop/blobs/uploads/?digest=${configDigest}`, {
          method: "POST",
          body: config,
        })
      ).status,
    ).toBe(201);
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociManifest,
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: configDigest,
        size: config.length,
      },
      layers: [],
    });
    const put = await fetch(`${registry.url}/v2/acme/shop/manifests/1.8.0`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.ociManifest },
      body: manifest,
    });
    expect(put.status).toBe(201);

    await registry.notificationsIdle();
    await harness.receiver.flush();
    expect(harness.batches).toEqual([
      [
        {
          registry: registry.host,
          repository: "acme/shop",
          tag: "1.8.0",
          digest: put.headers.get("docker-content-digest")!,
          source: "distribution",
        },
      ],
    ]);
  });
});

/** Sends a body with Transfer-Encoding: chunked (no Content-Length) and returns the status. */
function sendChunked(url: string, chunks: Buffer[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", headers: { "Content-Type": "application/json", "Transfer-Encoding": "chunked" } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    // The server may close the connection before the whole body is written: that is the point.
    req.on("error", (error) =>
      String(error).includes("EPIPE") || String(error).includes("ECONNRESET") ? undefined : reject(error),
    );
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}
