import type { ExpiringCredentials } from "./credential-cache.js";
import { RegistryAuthError } from "./errors.js";

/**
 * Google credentials for `auth: gcp`: an OAuth access token from Application Default Credentials
 * of Ferry's environment (`GOOGLE_APPLICATION_CREDENTIALS`, workload identity federation, the GCE/GKE
 * metadata server) through `google-auth-library`, sent as the password of user `oauth2accesstoken`
 * (https://cloud.google.com/artifact-registry/docs/docker/authentication#token). The metadata
 * server answers `{"access_token","expires_in","token_type"}`
 * (https://cloud.google.com/compute/docs/access/authenticate-workloads#applications).
 */

const SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** Google access tokens live about an hour; when the library names no expiry, assume less. */
const DEFAULT_LIFETIME_MS = 30 * 60_000;

export const GCP_IDENTITY = "Google Application Default Credentials";

export async function fetchGcpCredentials(
  registry: string,
  options: { now: () => number },
): Promise<ExpiringCredentials> {
  const { GoogleAuth } = await import("google-auth-library");
  try {
    const client = await new GoogleAuth({ scopes: [SCOPE] }).getClient();
    const { token } = await client.getAccessToken();
    if (!token) throw new Error("no access token");
    const expiry = client.credentials.expiry_date;
    return {
      username: "oauth2accesstoken",
      password: token,
      expiresAt: typeof expiry === "number" ? expiry : options.now() + DEFAULT_LIFETIME_MS,
    };
  } catch (error) {
    const message =
      error instanceof Error ? (error.message.split("\n")[0] ?? "").slice(0, 300) : "unknown error";
    throw new RegistryAuthError(`${registry}: auth: gcp as ${GCP_IDENTITY}: no access token: ${message}`);
  }
}
