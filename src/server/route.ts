import type { IncomingMessage, ServerResponse } from "node:http";

/** One route of the server: answers and returns true, or returns false to let the next route try. */
export type Route = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;

export function sendText(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": type });
  res.end(body);
}
