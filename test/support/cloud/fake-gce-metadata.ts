import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for the GCE metadata server, reached by `google-auth-library` through
 * `GCE_METADATA_HOST`. It answers what the documentation describes: every request needs
 * `Metadata-Flavor: Google` and every answer carries it; `GET /computeMetadata/v1/instance` (the
 * library's availability probe), `/project/project-id` and `GET /computeMetadata/v1/instance/service-accounts/default/token`
 * → `{"access_token","expires_in","token_type":"Bearer"}`
 * (https://cloud.google.com/compute/docs/metadata/querying-metadata,
 * https://cloud.google.com/compute/docs/access/authenticate-workloads#applications).
 */
export interface FakeGceMetadata {
  /** `127.0.0.1:PORT`, the value for GCE_METADATA_HOST. */
  host: string;
  tokenRequests(): number;
  set(answer: { token: string; expiresIn: number } | { status: number }): void;
  close(): Promise<void>;
}

export async function startFakeGceMetadata(initial: {
  token: string;
  expiresIn: number;
}): Promise<FakeGceMetadata> {
  let answer: { token: string; expiresIn: number } | { status: number } = initial;
  let tokens = 0;
  const server = createServer((req, res) => {
    const headers = { "metadata-flavor": "Google", "content-type": "application/json" };
    if (req.headers["metadata-flavor"] !== "Google") {
      res.writeHead(403, headers);
      res.end("Missing Metadata-Flavor:Google header.");
      return;
    }
    const path = (req.url ?? "").split("?")[0];
    if (path === "/computeMetadata/v1/instance" || path === "/computeMetadata/v1/instance/") {
      res.writeHead(200, { ...headers, "content-type": "application/text" });
      res.end("attributes/\nid\n");
      return;
    }
    if (path === "/computeMetadata/v1/project/project-id") {
      res.writeHead(200, { ...headers, "content-type": "application/text" });
      res.end("ferry-test-project");
      return;
    }
    if (path === "/computeMetadata/v1/instance/service-accounts/default/token") {
      tokens += 1;
      if ("status" in answer) {
        res.writeHead(answer.status, headers);
        res.end("service account is disabled");
        return;
      }
      res.writeHead(200, headers);
      res.end(
        JSON.stringify({ access_token: answer.token, expires_in: answer.expiresIn, token_type: "Bearer" }),
      );
      return;
    }
    res.writeHead(404, headers);
    res.end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    tokenRequests: () => tokens,
    set: (next) => (answer = next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
