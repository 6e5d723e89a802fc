import type { SecretRedactor } from "../../core/redact.js";
import type { Authenticator } from "./auth.js";
import { RegistryNotFoundError, RegistryProtocolError } from "./errors.js";
import type { RegistryState } from "./transport.js";

/**
 * A file of a Helm chart repository served over HTTP(S) (its `index.yaml`, a chart archive the
 * index names), fetched the way the registry client fetches anything: the host through the
 * address guard before the request and after DNS, redirects checked (no https→http downgrade,
 * no credentials to another host), the body under a size cap, bounded retries, and the
 * credentials the client holds for exactly that host (and installation), sent on the host's
 * Basic challenge as `helm repo add --username` would send them. Plain HTTP only where the
 * registry client uses it (loopback, or `insecure: true` for the host).
 */
export function createRepositoryFileReader(deps: {
  auth: Authenticator;
  secrets: SecretRedactor;
  stateFor: (registry: string) => RegistryState;
}): (target: string, maxBytes: number) => Promise<Buffer> {
  const { auth, secrets, stateFor } = deps;
  return async (target, maxBytes) => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new RegistryProtocolError("repository-url-invalid", `${JSON.stringify(target)} is not a URL`);
    }
    const shown = `${url.origin}${url.pathname}`;
    if (url.protocol !== "https:" && url.protocol !== "http:")
      throw new RegistryProtocolError("repository-url-invalid", `${shown}: not an http(s) URL`);
    if (url.username !== "" || url.password !== "")
      throw new RegistryProtocolError(
        "repository-url-invalid",
        `${url.protocol}//${url.host}${url.pathname}: credentials in the URL are refused (give them in the operator's Docker config)`,
      );
    const state = stateFor(url.host.toLowerCase());
    const origin = new URL(state.origin);
    if (origin.protocol !== url.protocol)
      throw new RegistryProtocolError(
        "repository-url-refused",
        `${shown}: ${url.host} is reached over ${origin.protocol.slice(0, -1)} only (plain http is for loopback or a registry marked insecure)`,
      );
    const request = new URL(`${url.pathname}${url.search}`, origin);
    const response = await auth.request(
      state,
      url.pathname.replace(/^\/+|\/+$/g, "") || "/",
      request,
      "GET",
      "*/*",
      maxBytes,
    );
    if (response.status >= 200 && response.status < 300) return response.body;
    const message = secrets.redact(`${shown}: HTTP ${response.status}`);
    if (response.status === 404) throw new RegistryNotFoundError(message);
    throw new RegistryProtocolError("repository-request-failed", message);
  };
}
