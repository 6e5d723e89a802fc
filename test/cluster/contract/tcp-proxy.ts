/**
 * A loopback TCP relay in front of an API server, so a test can cut every open connection (what a
 * load balancer or an API server restart does to a watch) without touching TLS or the server, or
 * freeze it: connections stay open and are accepted, but no byte moves (a hung API server or etcd).
 */
import { createConnection, createServer, type Socket } from "node:net";

export interface TcpProxy {
  /** The target URL with the proxy's port (same scheme; TLS passes through untouched). */
  url: string;
  /** Connections open now. */
  open(): number;
  /** Connections accepted since the last cut. */
  accepted(): number;
  /** Destroys every open connection. */
  cutAll(): void;
  /** Refuses every connection (and cuts the open ones) until `unblock`: a network partition. */
  block(): void;
  unblock(): void;
  /** Stops forwarding in both directions, holding what arrives, until `thaw`. */
  freeze(): void;
  /**
   * Freezes only the connections open now; new ones forward as usual (a connection a load
   * balancer has silently forgotten). `thaw` ends it too.
   */
  freezeOpen(): void;
  /** Delivers what was held, in order, and forwards again. */
  thaw(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let blocked = false;
  let frozen = false;
  let connections = 0;
  /** Connections numbered up to this one are frozen (`freezeOpen`). */
  let frozenUpTo = 0;
  let held: (() => void)[] = [];
  const server = createServer((client) => {
    if (blocked) {
      client.destroy();
      return;
    }
    accepted++;
    const id = ++connections;
    const isFrozen = () => frozen || id <= frozenUpTo;
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    // A server closing after its (held) answer must look, to the client, as if it were still thinking.
    const upstreamEnd = () => (isFrozen() ? held.push(end) : end());
    upstream.on("error", upstreamEnd).on("close", upstreamEnd);
    // Frozen, the server still gets every request but its answers are held: over TLS only once
    // the handshake is done, so the client has sent a request and waits (a hung server, not a dead one).
    const requests = new ClientRecords();
    client.on("data", (chunk: Buffer) => {
      requests.add(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (isFrozen() && requests.handshakeDone()) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  const url = new URL(target.href);
  url.port = String(port);
  return {
    url: url.origin,
    open: () => sockets.size / 2,
    accepted: () => accepted,
    cutAll() {
      accepted = 0;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    block() {
      blocked = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    unblock() {
      blocked = false;
    },
    freeze() {
      frozen = true;
    },
    freezeOpen() {
      frozenUpTo = connections;
    },
    thaw() {
      frozen = false;
      frozenUpTo = 0;
      const pending = held;
      held = [];
      for (const deliver of pending) deliver();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Follows the client's side of a connection: plain HTTP, or TLS records (5-byte headers: type,
 * version, length). The client's second application-data record (TLS 1.3 sends its Finished as
 * one, then the request) means the handshake is over.
 */
class ClientRecords {
  private tls: boolean | undefined;
  private header = Buffer.alloc(0);
  private skip = 0;
  private applicationRecords = 0;

  add(chunk: Buffer): void {
    this.tls ??= chunk[0] === 0x16;
    if (!this.tls) return;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.skip > 0) {
        const step = Math.min(this.skip, chunk.length - offset);
        this.skip -= step;
        offset += step;
        continue;
      }
      const need = 5 - this.header.length;
      this.header = Buffer.concat([this.header, chunk.subarray(offset, offset + need)]);
      offset += Math.min(need, chunk.length - offset);
      if (this.header.length < 5) return;
      if (this.header[0] === 0x17) this.applicationRecords++;
      this.skip = this.header.readUInt16BE(3);
      this.header = Buffer.alloc(0);
    }
  }

  handshakeDone(): boolean {
    return this.tls === false || this.applicationRecords >= 2;
  }
}
