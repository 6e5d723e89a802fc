/**
 * A loopback HTTP relay in front of an API server that records every request the reconciler
 * sends (method, path, query), so a test counts requests the same way on kube-apiserver (TLS to
 * the upstream, with the kubeconfig's CA) and on the simulator.
 */
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";

export interface RecordedRequest {
  method: string;
  path: string;
  dryRun: boolean;
}

export interface CountingProxy {
  /** A kubeconfig whose requests go through the proxy (same token). */
  kubeconfig: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startCountingProxy(kubeconfig: string): Promise<CountingProxy> {
  const config = new KubeConfig();
  config.loadFromString(kubeconfig);
  const cluster = config.getCurrentCluster()!;
  const token = config.getCurrentUser()?.token ?? "";
  const upstream = new URL(cluster.server);
  const ca = cluster.caData ? Buffer.from(cluster.caData, "base64") : undefined;
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming: IncomingMessage, outgoing) => {
    const url = new URL(incoming.url ?? "/", "http://proxy");
    requests.push({
      method: incoming.method ?? "GET",
      path: url.pathname,
      dryRun: url.searchParams.get("dryRun") === "All",
    });
    const send = upstream.protocol === "https:" ? httpsRequest : httpRequest;
    const forwarded = send(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: upstream.host },
        ...(ca ? { ca } : {}),
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const proxied = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `  - name: proxied`,
    `    cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}`,
    "users:",
    `  - name: proxied`,
    `    user: {token: "${token}"}`,
    "contexts:",
    `  - name: proxied`,
    `    context: {cluster: proxied, user: proxied}`,
    "current-context: proxied",
    "",
  ].join("\n");
  return {
    kubeconfig: proxied,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
