/** Raw HTTP for the reliability suite: exact headers (duplicates too), keep-alive, status and body back. */
import { Agent, request } from "node:http";

export interface RawRequest {
  method?: string;
  path: string;
  /** Header pairs in order; a name given twice is sent twice. */
  headers: [string, string][];
  body?: Buffer | string;
}

export interface RawResponse {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

export function keepAliveAgent(): Agent {
  return new Agent({ keepAlive: true, maxSockets: 8 });
}

export function send(baseUrl: string, req: RawRequest, agent?: Agent): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    // A name given twice becomes an array, which node sends as two header lines.
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of req.headers) {
      const existing = headers[name];
      headers[name] =
        existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
    const body =
      req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
    if (
      body &&
      !req.headers.some(
        ([name]) => name.toLowerCase() === "content-length" || name.toLowerCase() === "transfer-encoding",
      )
    ) {
      headers["Content-Length"] = String(body.length);
    }
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method ?? "POST",
        path: req.path,
        headers,
        agent: agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
            headers: res.headers,
          }),
        );
        res.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}
