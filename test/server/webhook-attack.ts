/**
 * An attacker's client for the GitHub webhook route, shared by the route's tests and
 * `npm run bench`: posts a large body and stops sending once it is answered.
 */
import { request } from "node:http";

export interface Answer {
  /** 0: the connection was cut off before an answer could be read. */
  status: number;
  retryAfter?: string;
  body: string;
  /** Body bytes the client had written when the answer arrived. */
  sentBeforeAnswer: number;
}

/**
 * Posts a body of `size` bytes (Content-Length declared) and stops sending as soon as an answer
 * arrives, as an attacker that is refused would have to. With `gate`, only the first chunk is sent
 * until it resolves (so that every body is in flight at once).
 */
export function postBody(
  url: string,
  headers: Record<string, string>,
  size: number,
  gate?: Promise<void>,
  onAnswer?: () => void,
  /** The client's source address (any of 127.0.0.0/8 on Linux), as an attacker with many addresses. */
  localAddress?: string,
): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        method: "POST",
        path: "/api/github/webhooks",
        headers: { ...headers, "content-length": String(size) },
        agent: false,
        ...(localAddress ? { localAddress } : {}),
      },
      (res) => {
        answered = true;
        onAnswer?.();
        const sentBeforeAnswer = sent;
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          resolve({
            status: res.statusCode ?? 0,
            ...(res.headers["retry-after"] ? { retryAfter: String(res.headers["retry-after"]) } : {}),
            body: Buffer.concat(chunks).toString("utf8"),
            sentBeforeAnswer,
          });
          outgoing.destroy();
        });
      },
    );
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      if (answered) return;
      // Cut off mid-body: the server closed the connection before its answer could be read.
      if (error.code === "EPIPE" || error.code === "ECONNRESET")
        resolve({ status: 0, body: "", sentBeforeAnswer: sent });
      else reject(error);
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let held = gate !== undefined;
    const pump = (): void => {
      if (held && sent >= chunk.length) {
        held = false;
        void gate!.then(pump);
        return;
      }
      while (!answered && sent < size) {
        const piece = size - sent >= chunk.length ? chunk : chunk.subarray(0, size - sent);
        sent += piece.length;
        if (!outgoing.write(piece)) {
          outgoing.once("drain", pump);
          return;
        }
      }
      if (!answered) outgoing.end();
    };
    pump();
  });
}
