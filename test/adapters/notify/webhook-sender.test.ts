import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { webhookPoster } from "../../../src/adapters/notify/webhook-sender.js";

/** The notification poster: the address guard, a per-request timeout, a bounded answer. */
describe("webhook poster", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  async function listen(
    handler: Parameters<typeof createServer>[1],
  ): Promise<{ url: string; connections: () => number }> {
    let connections = 0;
    const server = createServer(handler);
    server.on("connection", () => connections++);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
      connections: () => connections,
    };
  }

  it("posts to loopback only where private addresses are allowed (tests), never in production", async () => {
    const receiver = await listen((_req, res) => res.writeHead(204).end());
    expect(await webhookPoster({ refusePrivate: false }).post(receiver.url, "{}", {})).toEqual({
      kind: "answered",
      status: 204,
    });
    const refused = await webhookPoster({ refusePrivate: true }).post(receiver.url, "{}", {});
    expect(refused.kind).toBe("refused");
    expect(receiver.connections()).toBe(1);
  });

  it("always refuses cloud metadata and link-local addresses, before connecting", async () => {
    for (const url of [
      "http://169.254.169.254/latest",
      "http://[::ffff:a9fe:a9fe]/",
      "http://168.63.129.16/",
    ]) {
      const outcome = await webhookPoster({ refusePrivate: false, timeoutMs: 2000 }).post(url, "{}", {});
      expect(outcome.kind, url).toBe("refused");
    }
  });

  it("gives up on a receiver that never answers, and reads no more than 4 KiB of a long answer", async () => {
    const silent = await listen(() => {});
    expect(
      await webhookPoster({ refusePrivate: false, timeoutMs: 300 }).post(silent.url, "{}", {}),
    ).toMatchObject({
      kind: "unreachable",
    });
    let written = 0;
    const flood = await listen((_req, res) => {
      res.writeHead(500);
      const chunk = Buffer.alloc(64 * 1024, 120);
      const push = () => {
        while (written < 64 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (written < 64 * 1024 * 1024) res.once("drain", push);
        else res.end();
      };
      push();
      res.on("close", () => {});
    });
    expect(await webhookPoster({ refusePrivate: false }).post(flood.url, "{}", {})).toEqual({
      kind: "answered",
      status: 500,
    });
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });
});
