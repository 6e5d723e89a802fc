/**
 * A loopback TCP relay in front of an API server, so a test can cut every open connection (what a
 * load balancer or an API server restart does to a watch) without touching TLS or the server.
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
  close(): Promise<void>;
}

export async function startTcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let blocked = false;
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
    client.pipe(upstream).pipe(client);
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
