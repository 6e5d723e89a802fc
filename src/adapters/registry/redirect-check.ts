import { classifyHost } from "../../core/net-address.js";
import { RegistryProtocolError } from "./errors.js";
import { isPrivateHost } from "./hosts.js";

/**
 * The check of a registry's redirect, followed by hand in transport.ts: no https→http downgrade, no scheme
 * but http(s), no link-local target, and no private target unless the registry itself is private.
 */

/** Where a redirect goes, refused when it leaves http(s), downgrades https, or reaches a link-local or private address. */
export function checkedRedirect(registry: string, current: URL, location: string): URL {
  const next = new URL(location, current);
  if (next.protocol !== "https:" && next.protocol !== "http:")
    throw new RegistryProtocolError(
      "registry-redirect-refused",
      `${registry}: redirect to a ${next.protocol} URL refused`,
    );
  if (current.protocol === "https:" && next.protocol === "http:")
    throw new RegistryProtocolError(
      "registry-redirect-refused",
      `${registry}: redirect from https to plain http refused`,
    );
  if (next.host !== current.host) {
    if (classifyHost(next.hostname) === "link-local")
      throw new RegistryProtocolError(
        "registry-redirect-refused",
        `${registry}: redirect to link-local address ${next.hostname} refused`,
      );
    if (isPrivateHost(next.hostname) && !isPrivateHost(current.hostname))
      throw new RegistryProtocolError(
        "registry-redirect-refused",
        `${registry}: redirect to private address ${next.hostname} refused`,
      );
  }
  return next;
}
