/**
 * One keep-alive connection per API server for the scan Leases of `ferry serve` (`lease-membership.ts`,
 * on client-node's typed Lease client; the reconciler needs no client library). client-node 2.x builds a new
 * undici Agent, so a new TCP and TLS connection, for every request it authenticates; its own cache
 * holds only the https.Agent of WebSockets. Here every KubeConfig Ferry loads hands out one shared
 * dispatcher per API server, identity and TLS material: requests queue on a single connection
 * (HTTP/2 streams side by side where the server speaks it, as kube-apiserver over TLS does), and
 * watches, which hold a response open, share a second pool of their own (docs/architecture.md).
 */
import { createHash } from "node:crypto";
import type { AgentOptions } from "node:https";
import { createRequire } from "node:module";
import { KubeConfig, type RequestContext } from "@kubernetes/client-node";

// The undici client-node's fetch runs on (its own copy, newer than Ferry's): a dispatcher from
// another copy would mix two versions' handler protocols.
const clientNodeRequire = createRequire(createRequire(import.meta.url).resolve("@kubernetes/client-node"));
/** A dispatcher of that copy, as RequestContext takes it. */
type Dispatcher = NonNullable<Parameters<RequestContext["setDispatcher"]>[0]>;
const { Agent } = clientNodeRequire("undici") as {
  Agent: new (options: { connect: object; connections?: number; bodyTimeout?: number }) => Dispatcher;
};

/** What a dispatcher carries requests for: plain requests share one connection, watches a pool. */
export type ConnectionUse = "requests" | "watches";

const dispatchers = new Map<string, Dispatcher>();

export class SharedConnectionKubeConfig extends KubeConfig {
  constructor(private readonly use: ConnectionUse = "requests") {
    super();
  }

  /** The same kubeconfig, whose watches take connections of their own from the watch pool. */
  forWatches(): SharedConnectionKubeConfig {
    const copy = new SharedConnectionKubeConfig("watches");
    copy.loadFromOptions({
      clusters: this.getClusters(),
      users: this.getUsers(),
      contexts: this.getContexts(),
      currentContext: this.getCurrentContext(),
    });
    return copy;
  }

  // client-node's version sets the headers (token, exec plugin, basic auth) and a fresh dispatcher;
  // the headers stay, the dispatcher is swapped for the shared one.
  // Through a proxy (proxy-url), client-node's own dispatcher per request, as before.
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    if (this.getCurrentCluster()?.proxyUrl) return super.applySecurityAuthentication(context);
    const options: AgentOptions & { headers?: Record<string, unknown> } = {};
    await this.applyToHTTPSOptions(options);
    const user = this.getCurrentUser();
    if (user?.username) {
      const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
      context.setHeaderParam("Authorization", `Basic ${basic}`);
    }
    for (const [name, value] of Object.entries(options.headers ?? {}))
      context.setHeaderParam(name, String(value));
    context.setDispatcher(this.sharedDispatcher(options));
  }

  private sharedDispatcher(options: AgentOptions): Dispatcher {
    const cluster = this.getCurrentCluster();
    const tls: AgentOptions = {};
    for (const field of [
      "ca",
      "cert",
      "key",
      "pfx",
      "passphrase",
      "rejectUnauthorized",
      "servername",
    ] as const)
      if (options[field] !== undefined) (tls as Record<string, unknown>)[field] = options[field];
    const plan = this.createDispatcherOptions(cluster, tls);
    // Credentials only enter as a digest: the key lives as long as the process.
    const key = `${this.use}:${createHash("sha256")
      .update(JSON.stringify([this.use, cluster?.server, this.getCurrentUser()?.name, plan]))
      .digest("hex")}`;
    let dispatcher = dispatchers.get(key);
    if (!dispatcher) {
      dispatcher = makeDispatcher(plan, this.use);
      dispatchers.set(key, dispatcher);
    }
    return dispatcher;
  }
}

function makeDispatcher(plan: ReturnType<KubeConfig["createDispatcherOptions"]>, use: ConnectionUse) {
  const connect = {
    ...(plan.type === "agent" ? plan.connect : {}),
    keepAlive: true,
    keepAliveInitialDelay: 30_000,
  };
  // Requests: one connection per origin, requests waiting their turn (or multiplexed over HTTP/2).
  // Watches: a connection per open watch over HTTP/1.1, reused when a watch is reopened.
  // A watch may stay silent for long: its own idle timer (in KubeCluster) ends it, not undici.
  return new Agent(use === "requests" ? { connect, connections: 1 } : { connect, bodyTimeout: 0 });
}
