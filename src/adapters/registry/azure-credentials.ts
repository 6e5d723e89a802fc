import type { ExpiringCredentials } from "./credential-cache.js";
import { RegistryAuthError } from "./errors.js";
import { distributionErrorCode } from "./response-errors.js";
import type { Exchange } from "./transport.js";

/**
 * Azure Container Registry credentials for `auth: azure`: an Entra ID access token from
 * `@azure/identity`'s DefaultAzureCredential in Ferry's own environment (AZURE_CLIENT_ID /
 * AZURE_TENANT_ID with a secret, certificate or AKS workload identity token file, or the managed
 * identity), exchanged at the registry's `POST /oauth2/exchange`
 * (`grant_type=access_token&service=<registry>&tenant=<tenant>&access_token=<Entra token>`) for
 * an ACR refresh token (https://github.com/Azure/acr/blob/main/docs/AAD-OAuth.md,
 * https://learn.microsoft.com/en-us/rest/api/containerregistry/refresh-tokens/get-from-exchange).
 * The refresh token is the password of the null-GUID user, as `az acr login --expose-token`
 * documents (https://learn.microsoft.com/en-us/azure/container-registry/container-registry-authentication);
 * the registry's Bearer challenge then points at its own `/oauth2/token`, which trades it for an
 * access token per scope (auth.ts, the distribution token flow).
 */

/** The Entra scope for ACR's data plane (https://learn.microsoft.com/en-us/azure/container-registry/container-registry-authentication). */
const ACR_SCOPE = "https://containerregistry.azure.net/.default";
export const ACR_REFRESH_TOKEN_USER = "00000000-0000-0000-0000-000000000000";
/** ACR refresh tokens live about 3 hours; when neither token names an expiry, assume less. */
const DEFAULT_LIFETIME_MS = 60 * 60_000;
const MAX_EXCHANGE_BYTES = 64 * 1024;

export interface AzureCredentialOptions {
  now: () => number;
  /** The registry's origin (`https://<name>.azurecr.io`; a loopback stand-in in tests). */
  origin: string;
  /** One POST through the registry client's transport (address guard, timeouts, no redirects). */
  exchange: (url: URL, headers: Record<string, string>, body: string, maxBytes: number) => Promise<Exchange>;
  /** Tests only: the CA of a loopback stand-in for the Entra authority (AZURE_AUTHORITY_HOST). */
  authorityCa?: string;
  /** AZURE_CLIENT_ID and AZURE_TENANT_ID, to name the identity in errors. */
  identityEnv: Record<string, string | undefined>;
}

/** How `ferry check` and errors name who Ferry is at Entra ID, without a secret (a client id is not one). */
export function azureIdentity(env: Record<string, string | undefined>): string {
  const client = env.AZURE_CLIENT_ID;
  if (!client) return "the Azure default credential chain";
  return `Entra client ${client}${env.AZURE_TENANT_ID ? ` in tenant ${env.AZURE_TENANT_ID}` : ""}`;
}

export async function fetchAzureCredentials(
  registry: string,
  options: AzureCredentialOptions,
): Promise<ExpiringCredentials> {
  const where = `${registry}: auth: azure as ${azureIdentity(options.identityEnv)}`;
  // Loaded on first use: deployments without ACR never load the SDK.
  const { DefaultAzureCredential } = await import("@azure/identity");
  let entra: { token: string; expiresOnTimestamp: number };
  try {
    const credential = new DefaultAzureCredential({
      // The authority host comes from AZURE_AUTHORITY_HOST (the operator's environment): no
      // instance discovery request to login.microsoftonline.com for it.
      disableInstanceDiscovery: true,
      ...(options.authorityCa ? { tlsOptions: { ca: options.authorityCa } } : {}),
    });
    const token = await credential.getToken(ACR_SCOPE);
    if (!token?.token) throw new Error("no access token");
    entra = token;
  } catch (error) {
    throw new RegistryAuthError(`${where}: no Entra ID token: ${azureErrorText(error)}`);
  }
  const tenant = jwtClaims(entra.token).tid;
  const form = new URLSearchParams({
    grant_type: "access_token",
    service: registry,
    ...(typeof tenant === "string" ? { tenant } : {}),
    access_token: entra.token,
  });
  const response = await options.exchange(
    new URL("/oauth2/exchange", options.origin),
    { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    form.toString(),
    MAX_EXCHANGE_BYTES,
  );
  if (response.status !== 200) {
    const code = distributionErrorCode(response.body);
    throw new RegistryAuthError(
      `${where}: the registry's /oauth2/exchange refused the Entra ID token (HTTP ${response.status}${code ? `, ${code}` : ""})`,
    );
  }
  let refreshToken: unknown;
  try {
    refreshToken = (JSON.parse(response.body.toString("utf8")) as { refresh_token?: unknown }).refresh_token;
  } catch {
    refreshToken = undefined;
  }
  if (typeof refreshToken !== "string" || !refreshToken)
    throw new RegistryAuthError(`${where}: the registry's /oauth2/exchange answered no refresh_token`);
  const exp = jwtClaims(refreshToken).exp;
  const expiresAt =
    typeof exp === "number"
      ? Math.min(exp * 1000, entra.expiresOnTimestamp || Infinity)
      : entra.expiresOnTimestamp || options.now() + DEFAULT_LIFETIME_MS;
  return { username: ACR_REFRESH_TOKEN_USER, password: refreshToken, expiresAt };
}

/** The claims of a JWT, unverified: only its expiry and tenant are read, to schedule the refresh. */
function jwtClaims(token: string): Record<string, unknown> {
  const payload = token.split(".")[1];
  if (!payload) return {};
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as unknown;
    return typeof claims === "object" && claims !== null ? (claims as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * One line of an Identity error: Entra's own `AADSTS<code>: ...` sentence when the SDK carries
 * one (it names the error and the client, never the secret:
 * https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes), else the
 * error's first line.
 */
function azureErrorText(error: unknown): string {
  if (!(error instanceof Error)) return "unknown error";
  const description = (error as { errorResponse?: { errorDescription?: unknown } }).errorResponse
    ?.errorDescription;
  const lines = [
    ...(typeof description === "string" ? description.split(/\r?\n/) : []),
    ...error.message.split(/\r?\n/),
  ].map((line) => line.trim());
  const entra = lines.map((line) => /AADSTS\d+:[^\r\n]*/.exec(line)?.[0]).find(Boolean);
  const line = entra ?? lines.find((part) => part !== "") ?? "";
  return `${error.name && error.name !== "Error" ? `${error.name}: ` : ""}${line.slice(0, 300)}`;
}
