/**
 * An attacker's slow clients for the webhook routes, shared by the server's tests and `npm run
 * bench`: raw loopback connections, each bound to its own 127.x.y.z source address (Linux routes
 * all of 127.0.0.0/8 to the loopback interface), that send plausible GitHub headers with a
 * well-formed signature and a small declared body, then one byte of it every few seconds.
 */
import { connect, type Socket } from "node:net";

export interface SlowSenders {
  /** Connections whose server has answered or closed them. */
  answered(): number;
  /** What each connection has been answered so far (empty when closed without an answer). */
  answers(): string[];
  /** Each connection has written its headers and first body byte. */
  started: Promise<void>;
  close(): void;
}

/** The `index`-th source address of 127.0.0.0/8, skipping 127.0.0.1 (the real sender's). */
export function sourceAddress(index: number): string {
  const n = index + 2;
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

export function openSlowSenders(
  url: string,
  count: number,
  options: { dripMs?: number; declaredBytes?: number; headersOnly?: "half" } = {},
): SlowSenders {
  const { hostname, port } = new URL(url);
  const declared = options.declaredBytes ?? 200;
  let answered = 0;
  const answers: string[] = Array<string>(count).fill("");
  const sockets: Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const started = Promise.all(
    Array.from(
      { length: count },
      (_, i) =>
        new Promise<void>((resolve, reject) => {
          const socket = connect({ host: hostname, port: Number(port), localAddress: sourceAddress(i) });
          sockets.push(socket);
          let done = false;
          const settle = () => {
            if (!done) answered++;
            done = true;
          };
          socket.on("data", (chunk: Buffer) => {
            answers[i] += chunk.toString("latin1");
            settle();
          });
          socket.on("close", settle);
          socket.on("error", () => {});
          socket.once("connect", () => {
            const headers =
              `POST /api/github/webhooks HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
              `Content-Type: application/json\r\nX-GitHub-Event: push\r\nX-GitHub-Delivery: slow-${i}\r\n` +
              `X-Hub-Signature-256: sha256=${"0".repeat(64)}\r\nContent-Length: ${declared}\r\n`;
            if (options.headersOnly === "half") {
              socket.write(headers, () => resolve());
              return;
            }
            socket.write(`${headers}\r\n{`, () => resolve());
            let sent = 1;
            const timer = setInterval(() => {
              if (sent < declared - 1 && !socket.destroyed) {
                socket.write(" ");
                sent++;
              }
            }, options.dripMs ?? 4_000);
            timers.push(timer);
          });
          socket.once("error", (error) => {
            if (!done) reject(error);
          });
        }),
    ),
  ).then(() => undefined);
  return {
    answered: () => answered,
    answers: () => [...answers],
    started,
    close() {
      for (const timer of timers) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
    },
  };
}
