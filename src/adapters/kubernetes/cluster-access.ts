/**
 * Where the API server is and how Ferry proves who it is: a kubeconfig (given, named by
 * `KUBECONFIG`, or `~/.kube/config`) or, in a pod, its service account. Read here without
 * @kubernetes/client-node, whose import alone costs the reconciler about 75 MB (docs/capacity.md
 * "The reconciler at 1,000 and 5,000 objects"). The one part left to client-node is a credential
 * plugin (`exec`, `auth-provider`): it is loaded only for a kubeconfig whose user names one.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { parseUnique } from "../../core/yaml/unique-keys.js";
import { SERVICE_ACCOUNT_DIR } from "./membership.js";

/** A kubeconfig is a few kilobytes; a bigger file is not one. */
const MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024;
/** A token file is read again after this long, as client-go does: bound tokens rotate. */
const TOKEN_FILE_REFRESH_MS = 60_000;

type Pem = string | Buffer;

/** What a request carries to prove who Ferry is. */
export interface Credentials {
  /** The `Authorization` header, if any. */
  authorization?: string;
  /** A client certificate and its key, if any. */
  cert?: Pem;
  key?: Pem;
}

export interface ClusterAccess {
  /** `https://host:port`, perhaps with a path prefix, never a trailing slash. */
  readonly server: string;
  /** The context's namespace (or the pod's), if it names one. */
  readonly namespace: string | undefined;
  /** The server's CA; unset means the system's. */
  readonly ca: Pem | undefined;
  readonly rejectUnauthorized: boolean;
  /** `tls-server-name`: the name the server's certificate is checked against, if not the host. */
  readonly servername: string | undefined;
  /** `proxy-url`: an http(s) proxy the connection tunnels through (CONNECT). */
  readonly proxyUrl: string | undefined;
  /** The credentials of the next request: a token file re-read, a plugin's token renewed. */
  credentials(): Promise<Credentials>;
}

export interface ClusterAccessOptions {
  /** Kubeconfig YAML (e.g. the simulator's); otherwise `kubeconfigFile`, otherwise the default places. */
  kubeconfig?: string;
  kubeconfigFile?: string;
  /** Where a pod's service account is mounted (tests point it elsewhere). */
  serviceAccountDir?: string;
  /** Where the default places are found: `KUBECONFIG`, `HOME`, `KUBERNETES_SERVICE_HOST`/`_PORT` (the entry point passes its own). */
  env?: NodeJS.ProcessEnv;
}

type Entry = Record<string, unknown>;

/** One kubeconfig's text and the directory its relative paths are relative to. */
interface Source {
  text: string;
  dir: string;
}

/** The named entries of every source merged, the first source to name one winning (kubectl's rule). */
interface Named {
  /** The item as written: `{name, cluster}`, `{name, user}` or `{name, context}`. */
  item: Entry;
  /** Its `cluster`, `user` or `context` mapping. */
  entry: Entry;
  dir: string;
}

interface Merged {
  clusters: Map<string, Named>;
  users: Map<string, Named>;
  contexts: Map<string, Named>;
  currentContext: string | undefined;
}

function readBounded(file: string): string {
  const size = statSync(file).size;
  if (size > MAX_KUBECONFIG_BYTES) throw new Error(`${file} is ${size} bytes, more than a kubeconfig holds`);
  return readFileSync(file, "utf8");
}

function merge(sources: Source[]): Merged {
  const merged: Merged = {
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: undefined,
  };
  for (const source of sources) {
    const config = (parseUnique(source.text) ?? {}) as Entry;
    if (typeof config !== "object" || Array.isArray(config))
      throw new Error("the kubeconfig is not a YAML mapping");
    const named = (key: string, field: string, into: Map<string, Named>) => {
      const list = config[key];
      if (list === undefined || list === null) return;
      if (!Array.isArray(list)) throw new Error(`the kubeconfig's ${key} is not a list`);
      for (const item of list as Entry[]) {
        const name = item?.name;
        if (typeof name !== "string") throw new Error(`an entry of the kubeconfig's ${key} has no name`);
        if (!into.has(name)) into.set(name, { item, entry: (item[field] ?? {}) as Entry, dir: source.dir });
      }
    };
    named("clusters", "cluster", merged.clusters);
    named("users", "user", merged.users);
    named("contexts", "context", merged.contexts);
    const current = config["current-context"];
    if (merged.currentContext === undefined && typeof current === "string" && current !== "")
      merged.currentContext = current;
  }
  return merged;
}

function text(entry: Entry, key: string): string | undefined {
  const value = entry[key];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new Error(`${key} must be a string`);
  return value;
}

/** `X-data` (base64) or the file `X` names (relative to its kubeconfig). */
function material(entry: Entry, key: string, dir: string): Buffer | undefined {
  const data = text(entry, `${key}-data`);
  if (data !== undefined) return Buffer.from(data, "base64");
  const file = text(entry, key);
  return file === undefined ? undefined : readFileSync(path.resolve(dir, file));
}

/** A file read again once `TOKEN_FILE_REFRESH_MS` have passed since the last read. */
function refreshingFile(file: string): () => string {
  let value = "";
  let readAt = -Infinity;
  return () => {
    if (Date.now() - readAt >= TOKEN_FILE_REFRESH_MS) {
      value = readFileSync(file, "utf8").trim();
      readAt = Date.now();
    }
    return value;
  };
}

function staticCredentials(user: Entry, dir: string): () => Promise<Credentials> {
  const token = text(user, "token");
  const tokenFile = text(user, "tokenFile");
  const readToken = tokenFile === undefined ? undefined : refreshingFile(path.resolve(dir, tokenFile));
  const username = text(user, "username");
  const basic =
    username === undefined
      ? undefined
      : `Basic ${Buffer.from(`${username}:${text(user, "password") ?? ""}`).toString("base64")}`;
  const cert = material(user, "client-certificate", dir);
  const key = material(user, "client-key", dir);
  return async () => {
    const bearer = token ?? readToken?.();
    const authorization = bearer ? `Bearer ${bearer}` : basic;
    return {
      ...(authorization ? { authorization } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
    };
  };
}

/**
 * A user whose credentials come from a plugin: client-node runs it (and caches what it answers),
 * given the context, its cluster and its user as the kubeconfig wrote them, loaded the first time
 * credentials are asked for.
 */
function pluginCredentials(context: Entry, cluster: Entry, user: Entry): () => Promise<Credentials> {
  let loading: Promise<{ applyToHTTPSOptions(options: object): Promise<void> }> | undefined;
  const load = async () => {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const config = new KubeConfig();
    config.loadFromString(
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [cluster],
        users: [user],
        contexts: [context],
        "current-context": context.name,
      }),
    );
    return config;
  };
  return async () => {
    loading ??= load();
    loading.catch(() => (loading = undefined));
    const options: { headers?: Record<string, unknown>; cert?: Pem; key?: Pem } = {};
    await (await loading).applyToHTTPSOptions(options);
    const authorization = options.headers?.Authorization ?? options.headers?.authorization;
    return {
      ...(typeof authorization === "string" ? { authorization } : {}),
      ...(options.cert ? { cert: options.cert } : {}),
      ...(options.key ? { key: options.key } : {}),
    };
  };
}

function fromKubeconfig(sources: Source[]): ClusterAccess {
  const merged = merge(sources);
  const contextName = merged.currentContext;
  if (contextName === undefined) throw new Error("the kubeconfig sets no current-context");
  const context = merged.contexts.get(contextName)?.entry;
  if (!context) throw new Error(`the kubeconfig has no context named ${JSON.stringify(contextName)}`);
  const clusterName = text(context, "cluster");
  const cluster = clusterName === undefined ? undefined : merged.clusters.get(clusterName);
  if (!cluster) throw new Error(`context ${JSON.stringify(contextName)} names no cluster the kubeconfig has`);
  const server = text(cluster.entry, "server");
  if (server === undefined) throw new Error(`cluster ${JSON.stringify(clusterName)} has no server`);
  if (!/^https?:\/\//.test(server))
    throw new Error(`cluster ${JSON.stringify(clusterName)}: server must be an http(s) URL`);
  const userName = text(context, "user");
  const user = userName === undefined ? undefined : merged.users.get(userName);
  const ca = material(cluster.entry, "certificate-authority", cluster.dir);
  const usesPlugin = user !== undefined && (user.entry.exec != null || user.entry["auth-provider"] != null);
  // The plugin's cluster carries the CA read here: a path relative to the kubeconfig means nothing there.
  const pluginCluster = {
    ...cluster.item,
    cluster: {
      ...cluster.entry,
      "certificate-authority": undefined,
      "certificate-authority-data": ca?.toString("base64"),
    },
  };
  const credentials = !user
    ? async () => ({})
    : usesPlugin
      ? pluginCredentials(merged.contexts.get(contextName)!.item, pluginCluster, user.item)
      : staticCredentials(user.entry, user.dir);
  return {
    server: server.replace(/\/+$/, ""),
    namespace: text(context, "namespace"),
    ca,
    rejectUnauthorized: cluster.entry["insecure-skip-tls-verify"] !== true,
    servername: text(cluster.entry, "tls-server-name"),
    proxyUrl: text(cluster.entry, "proxy-url"),
    credentials,
  };
}

function inCluster(dir: string, env: NodeJS.ProcessEnv): ClusterAccess | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(path.join(dir, "token"))) return undefined;
  const readToken = refreshingFile(path.join(dir, "token"));
  const namespaceFile = path.join(dir, "namespace");
  return {
    server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    namespace: existsSync(namespaceFile)
      ? readFileSync(namespaceFile, "utf8").trim() || undefined
      : undefined,
    ca: existsSync(path.join(dir, "ca.crt")) ? readFileSync(path.join(dir, "ca.crt")) : undefined,
    rejectUnauthorized: true,
    servername: undefined,
    proxyUrl: undefined,
    credentials: async () => ({ authorization: `Bearer ${readToken()}` }),
  };
}

/** A pod's own API server and service account; a one-line error outside a pod. */
export function inClusterAccess(dir: string, env: NodeJS.ProcessEnv): ClusterAccess {
  const pod = inCluster(dir, env);
  if (!pod)
    throw new Error(
      `not in a pod: KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT or ${path.join(dir, "token")} is missing`,
    );
  return pod;
}

/**
 * The API server and credentials: the given kubeconfig, else the files `KUBECONFIG` lists (those
 * that exist), else `~/.kube/config`, else the pod's service account; one-line errors otherwise.
 */
export function loadClusterAccess(options: ClusterAccessOptions): ClusterAccess {
  const env = options.env ?? {};
  if (options.kubeconfig !== undefined)
    return fromKubeconfig([{ text: options.kubeconfig, dir: process.cwd() }]);
  const fileSource = (file: string): Source => ({
    text: readBounded(file),
    dir: path.dirname(path.resolve(file)),
  });
  if (options.kubeconfigFile !== undefined) return fromKubeconfig([fileSource(options.kubeconfigFile)]);
  const listed = (env.KUBECONFIG ?? "").split(path.delimiter).filter((file) => file && existsSync(file));
  if (listed.length > 0) return fromKubeconfig(listed.map(fileSource));
  const home = env.HOME || env.USERPROFILE || homedir();
  const own = path.join(home, ".kube", "config");
  if (existsSync(own)) return fromKubeconfig([fileSource(own)]);
  const pod = inCluster(options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR, env);
  if (pod) return pod;
  throw new Error(
    "no kubeconfig found: pass --kubeconfig FILE, set KUBECONFIG, or run in a pod with a service account",
  );
}
