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
  /** Delivers what was held, in order, and forwards again. */
  thaw(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let blocked = false;
  let frozen = false;
  let held: (() => void)[] = [];
  const relay = (from: Socket, to: Socket) =>
    from.on("data", (chunk: Buffer) => {
      if (frozen) held.push(() => to.write(chunk));
      else to.write(chunk);
    });
  const server = createServer((client) => {
    if (blocked) {
      client.destroy();
      return;
    }
    accepted++;
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
    upstream.on("error", end).on("close", end);
    relay(client, upstream);
    relay(upstream, client);
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
    thaw() {
      frozen = false;
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
