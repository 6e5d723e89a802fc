/**
 * Which outbound requests an allowlist of URL prefixes admits: the one decision behind the render
 * proxy (docs/security.md, "Render network"), meant to serve any later outbound call Ferry makes
 * for the config repo (chart downloads, key services). A prefix is compared parsed, never as text:
 * same scheme, host and port, and a path under the prefix's path, so `https://github.com/acme`
 * never admits `https://github.com@evil.example/acme`. Only `http:` and `https:` prefixes admit
 * anything. Pure; the address guard (the address a name resolves to) is applied where the
 * connection is made.
 */

interface ParsedPrefix {
  protocol: "http:" | "https:";
  host: string;
  port: number;
  path: string;
}

const DEFAULT_PORTS = { "http:": 80, "https:": 443 } as const;

/** A prefix as a URL; one written without a scheme (`github.com/acme/`) is fetched by kustomize over HTTPS. */
export function parsePrefix(prefix: string): ParsedPrefix | undefined {
  const text = prefix.trim();
  if (text === "") return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username !== "" || url.password !== "") return undefined;
  return {
    protocol: url.protocol,
    host: url.hostname.toLowerCase(),
    port: url.port === "" ? DEFAULT_PORTS[url.protocol] : Number(url.port),
    path: url.pathname,
  };
}

/** The URL schemes the prefixes admit (what git may use: `GIT_ALLOW_PROTOCOL`). */
export function admittedProtocols(prefixes: readonly string[]): ("http" | "https")[] {
  const protocols = new Set(prefixes.map(parsePrefix).flatMap((parsed) => (parsed ? [parsed.protocol] : [])));
  return (["https", "http"] as const).filter((name) => protocols.has(`${name}:`));
}

/** Why a request for `target` (an absolute URL) is refused, or undefined when a prefix admits it. */
export function requestRefusal(target: string, prefixes: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return `${JSON.stringify(target)} is not an absolute URL`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${url.protocol} is not HTTP`;
  const port = url.port === "" ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  const admitted = prefixes.some((prefix) => {
    const parsed = parsePrefix(prefix);
    return (
      parsed !== undefined &&
      parsed.protocol === url.protocol &&
      parsed.host === url.hostname.toLowerCase() &&
      parsed.port === port &&
      url.pathname.startsWith(parsed.path)
    );
  });
  return admitted ? undefined : `${url.origin}${url.pathname} is not under an --allow-remote-base prefix`;
}

/**
 * Why a tunnel (HTTP CONNECT) to `host:port` is refused, or undefined when an `https:` prefix
 * names that host and port. Inside a TLS tunnel nothing more can be seen: each tunnel is checked
 * when it is opened, and a redirect elsewhere needs a new one.
 */
export function tunnelRefusal(host: string, port: number, prefixes: readonly string[]): string | undefined {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  const admitted = prefixes.some((prefix) => {
    const parsed = parsePrefix(prefix);
    return (
      parsed?.protocol === "https:" && parsed.host.replace(/^\[|\]$/g, "") === bare && parsed.port === port
    );
  });
  return admitted ? undefined : `${host}:${port} is not the host of an https --allow-remote-base prefix`;
}

/**
 * The host a remote kustomize reference would connect to (`https://h/…`, `git::https://h/…`,
 * `h/owner/repo`, `git@h:owner/repo`), or undefined when none can be read.
 */
export function referenceHost(value: string): string | undefined {
  const text = value.trim().replace(/^git::/i, "");
  const scp = /^[\w.-]+@(\[[^\]]+\]|[^:/]+):/.exec(text);
  if (scp && !text.includes("://")) return scp[1];
  try {
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`).hostname || undefined;
  } catch {
    return undefined;
  }
}
