import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { registryTokenSigner, type RegistryTokenSigner } from "../registry-token-issuer.js";
import { selfSignedCertificate } from "../self-signed.js";

/**
 * Loopback stand-ins for Azure Container Registry's token endpoints and for Entra ID, in front of
 * the real CNCF registry (token auth). Built from the documented exchanges:
 *
 * - Entra ID, over HTTPS (MSAL refuses a plain-HTTP authority): the OpenID configuration
 *   `GET /{tenant}/v2.0/.well-known/openid-configuration` and the client credentials grant
 *   `POST /{tenant}/oauth2/v2.0/token` (`client_id`, `client_secret`, `scope`,
 *   `grant_type=client_credentials` → `{"token_type":"Bearer","expires_in","access_token"}`, an
 *   `{"error":"invalid_client","error_description":"AADSTS7000215: ..."}` 401 for a wrong secret)
 *   (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow,
 *   https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc#find-your-apps-openid-configuration-document-uri).
 * - ACR, "Azure Container Registry authentication - OAuth2 / token exchange"
 *   (https://github.com/Azure/acr/blob/main/docs/AAD-OAuth.md, REST reference
 *   https://learn.microsoft.com/en-us/rest/api/containerregistry/refresh-tokens/get-from-exchange and
 *   https://learn.microsoft.com/en-us/rest/api/containerregistry/access-tokens/get):
 *   `POST /oauth2/exchange` with `grant_type=access_token&service&tenant&access_token` →
 *   `{"refresh_token"}`; `/oauth2/token` with the refresh token (`POST grant_type=refresh_token&
 *   service&scope&refresh_token`, or `GET ?service&scope` with Basic auth of user
 *   `00000000-0000-0000-0000-000000000000`, as the Docker client does after `az acr login`) →
 *   `{"access_token"}`, a registry token the distribution registry verifies. Refusals are
 *   `{"errors":[{"code":"UNAUTHORIZED","message":...}]}` with 401.
 *
 * Every other request on the ACR origin goes to the real registry, as on one ACR login server.
 */
export interface FakeAcr {
  /** The ACR login server origin (plain HTTP on loopback): the registry's `loopbackOrigins` value. */
  origin: string;
  /** What distribution's `auth.token` must name (realm on this origin, service = the ACR host). */
  tokenService: { realm: string; service: string; issuer: string; rootCertBundlePath: string };
  /** The Entra authority (https://127.0.0.1:PORT), the value of AZURE_AUTHORITY_HOST. */
  authorityHost: string;
  /** PEM of the authority's self-signed certificate. */
  authorityCa: string;
  tenant: string;
  clientId: string;
  /** Where the real registry listens; set once it runs. */
  setUpstream(url: string): void;
  counts(): { entraTokens: number; exchanges: number; accessTokens: number };
  /** Access tokens Entra issued, refresh tokens ACR issued (canaries for logs and PRs). */
  issued(): string[];
  set(
    answer: Partial<{ clientSecret: string; refreshLifetimeSeconds: number; entraExpiresIn: number }>,
  ): void;
  /** ACR stops accepting every refresh token issued so far (the identity lost AcrPull). */
  revokeRefreshTokens(): void;
  close(): Promise<void>;
}

export const ACR_NULL_USER = "00000000-0000-0000-0000-000000000000";

export async function startFakeAcr(options: {
  host: string;
  tenant: string;
  clientId: string;
  clientSecret: string;
}): Promise<FakeAcr> {
  const dir = mkdtempSync(join(tmpdir(), "ferry-fake-acr-"));
  const entraCert = selfSignedCertificate(dir, "entra", {
    subject: "/CN=127.0.0.1",
    altName: "IP:127.0.0.1",
  });
  const signer: RegistryTokenSigner = registryTokenSigner(dir, options.host);
  let clientSecret = options.clientSecret;
  let refreshLifetimeSeconds = 3 * 3600;
  let entraExpiresIn = 3599;
  const counts = { entraTokens: 0, exchanges: 0, accessTokens: 0 };
  const entraTokens = new Set<string>();
  const refreshTokens = new Set<string>();
  let upstream = "";

  const entra = createHttpsServer(
    { key: readFileSync(entraCert.keyPath), cert: readFileSync(entraCert.certPath) },
    (req, res) => {
      void readBody(req).then((body) => {
        const path = (req.url ?? "").split("?")[0]!;
        const base = `https://${req.headers.host}/${options.tenant}`;
        if (req.method === "GET" && path === `/${options.tenant}/v2.0/.well-known/openid-configuration`) {
          return json(res, 200, {
            token_endpoint: `${base}/oauth2/v2.0/token`,
            authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
            end_session_endpoint: `${base}/oauth2/v2.0/logout`,
            jwks_uri: `${base}/discovery/v2.0/keys`,
            issuer: `${base}/v2.0`,
            token_endpoint_auth_methods_supported: ["client_secret_post", "private_key_jwt"],
          });
        }
        if (req.method === "POST" && path === `/${options.tenant}/oauth2/v2.0/token`) {
          counts.entraTokens += 1;
          const form = new URLSearchParams(body);
          if (form.get("client_id") !== options.clientId || form.get("client_secret") !== clientSecret)
            return json(res, 401, {
              error: "invalid_client",
              error_description: `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${options.clientId}'.`,
              error_codes: [7000215],
            });
          const token = fakeJwt({
            aud: "https://containerregistry.azure.net",
            tid: options.tenant,
            appid: options.clientId,
            exp: Math.floor(Date.now() / 1000) + entraExpiresIn,
            jti: `entra-access-token-canary-${counts.entraTokens}`,
          });
          entraTokens.add(token);
          return json(res, 200, {
            token_type: "Bearer",
            expires_in: entraExpiresIn,
            ext_expires_in: entraExpiresIn,
            access_token: token,
          });
        }
        return json(res, 404, { error: "not_found" });
      });
    },
  );

  const acr = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0]!;
    if (path === "/oauth2/exchange" || path === "/oauth2/token") {
      void readBody(req).then((body) => {
        const form = new URLSearchParams(body);
        if (path === "/oauth2/exchange") {
          counts.exchanges += 1;
          const token = form.get("access_token") ?? "";
          if (
            req.method !== "POST" ||
            form.get("grant_type") !== "access_token" ||
            form.get("service") !== options.host ||
            !entraTokens.has(token)
          )
            return unauthorized(res);
          const refresh = fakeJwt({
            aud: options.host,
            tenant: form.get("tenant"),
            grant_type: "refresh_token",
            exp: Math.floor(Date.now() / 1000) + refreshLifetimeSeconds,
            jti: `acr-refresh-token-canary-${counts.exchanges}`,
          });
          refreshTokens.add(refresh);
          return json(res, 200, { refresh_token: refresh });
        }
        counts.accessTokens += 1;
        const query = new URL(req.url ?? "/", "http://127.0.0.1").searchParams;
        const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? "");
        const [user, password] = basic
          ? Buffer.from(basic[1]!, "base64").toString("utf8").split(/:(.*)/s)
          : [ACR_NULL_USER, form.get("refresh_token") ?? ""];
        const fields = req.method === "POST" ? form : query;
        if (
          user !== ACR_NULL_USER ||
          !refreshTokens.has(password ?? "") ||
          fields.get("service") !== options.host ||
          (req.method === "POST" && form.get("grant_type") !== "refresh_token")
        )
          return unauthorized(res);
        return json(res, 200, { access_token: signer.sign(ACR_NULL_USER, fields.getAll("scope"), 300) });
      });
      return;
    }
    // Everything else is the registry API: forwarded to the real registry as is.
    const target = new URL(req.url ?? "/", upstream);
    const forward = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.writeHead(502).end());
    req.pipe(forward);
  });

  await new Promise<void>((resolve) => entra.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => acr.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(acr.address() as AddressInfo).port}`;
  return {
    origin,
    tokenService: {
      realm: `${origin}/oauth2/token`,
      service: options.host,
      issuer: signer.issuer,
      rootCertBundlePath: signer.rootCertBundlePath,
    },
    authorityHost: `https://127.0.0.1:${(entra.address() as AddressInfo).port}`,
    authorityCa: readFileSync(entraCert.certPath, "utf8"),
    tenant: options.tenant,
    clientId: options.clientId,
    setUpstream: (url) => (upstream = url),
    counts: () => ({ ...counts }),
    issued: () => [...entraTokens, ...refreshTokens],
    set: (answer) => {
      if (answer.clientSecret !== undefined) clientSecret = answer.clientSecret;
      if (answer.refreshLifetimeSeconds !== undefined) refreshLifetimeSeconds = answer.refreshLifetimeSeconds;
      if (answer.entraExpiresIn !== undefined) entraExpiresIn = answer.entraExpiresIn;
    },
    revokeRefreshTokens: () => refreshTokens.clear(),
    close: async () => {
      entra.closeAllConnections();
      acr.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => entra.close(() => resolve())),
        new Promise<void>((resolve) => acr.close(() => resolve())),
      ]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A JWT-shaped token (the fakes only need its claims to be readable, as ACR's and Entra's are). */
function fakeJwt(claims: Record<string, unknown>): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${encode({ alg: "RS256", typ: "JWT" })}.${encode(claims)}.${Buffer.from(String(claims.jti)).toString("base64url")}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function unauthorized(res: ServerResponse): void {
  json(res, 401, { errors: [{ code: "UNAUTHORIZED", message: "authentication required", detail: null }] });
}

/**
 * A refresh token for the Entra client of the environment (the AZURE_* variables the test stubs),
 * got by hand as `az acr login --expose-token` gets it: an Entra token for
 * containerregistry.azure.net, exchanged at `/oauth2/exchange` for `service`.
 */
export async function acrRefreshToken(acr: FakeAcr, service: string): Promise<string> {
  const { DefaultAzureCredential } = await import("@azure/identity");
  const entra = await new DefaultAzureCredential({
    disableInstanceDiscovery: true,
    tlsOptions: { ca: acr.authorityCa },
  }).getToken("https://containerregistry.azure.net/.default");
  const answer = await fetch(`${acr.origin}/oauth2/exchange`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "access_token", service, access_token: entra.token }),
  });
  return ((await answer.json()) as { refresh_token: string }).refresh_token;
}
