import { createSign, X509Certificate } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { selfSignedCertificate } from "./self-signed.js";

/**
 * A Docker token server for distribution's `auth: token` (docs: "Token Authentication
 * Specification" / "Token Authentication Implementation"). It signs RS256 JWTs with a
 * self-signed certificate and puts that certificate in the `x5c` header: distribution 2.8
 * verifies an x5c chain against `rootcertbundle` (registry/auth/token/token.go), so no libtrust
 * key id is needed.
 */
export interface TokenIssuer {
  /** `http://127.0.0.1:PORT/token` — the realm. */
  realm: string;
  /** `127.0.0.1:PORT` */
  host: string;
  service: string;
  issuer: string;
  /** PEM bundle to give distribution as `rootcertbundle`. */
  rootCertBundlePath: string;
  /** Tokens issued so far. */
  issued(): number;
  close(): Promise<void>;
}

/** Signs registry tokens (RS256, certificate in `x5c`) that distribution trusts through `rootcertbundle`. */
export interface RegistryTokenSigner {
  service: string;
  issuer: string;
  rootCertBundlePath: string;
  /** A token for `subject` granting the `scope` parameters of a token request. */
  sign(subject: string, scopes: string[], ttlSeconds: number): string;
}

export function registryTokenSigner(dir: string, service = "ferry-test-registry"): RegistryTokenSigner {
  const { keyPath, certPath } = selfSignedCertificate(dir, "token", {
    subject: "/CN=ferry-test-token-issuer",
  });
  const privateKey = readFileSync(keyPath, "utf8");
  const certificate = new X509Certificate(readFileSync(certPath));
  const x5c = certificate.raw.toString("base64");
  const issuer = "ferry-test-issuer";
  const rootCertBundlePath = join(dir, "rootcertbundle.pem");
  writeFileSync(rootCertBundlePath, readFileSync(certPath));
  let signed = 0;
  return {
    service,
    issuer,
    rootCertBundlePath,
    sign(subject, scopes, ttlSeconds) {
      const access = scopes.flatMap((scope) => {
        const parts = /^(repository|registry):(.+):([^:]+)$/.exec(scope);
        return parts ? [{ type: parts[1]!, name: parts[2]!, actions: parts[3]!.split(",") }] : [];
      });
      const nowSeconds = Math.floor(Date.now() / 1000);
      signed += 1;
      const claims = {
        iss: issuer,
        sub: subject,
        aud: service,
        exp: nowSeconds + ttlSeconds,
        nbf: nowSeconds - 10,
        iat: nowSeconds,
        jti: `${nowSeconds}-${signed}`,
        access,
      };
      return signJwt({ alg: "RS256", typ: "JWT", x5c: [x5c] }, claims, privateKey);
    },
  };
}

export async function startTokenIssuer(options: {
  dir: string;
  users: Record<string, string>;
  ttlSeconds?: number;
}): Promise<TokenIssuer> {
  const signer = registryTokenSigner(options.dir);
  const { service, issuer } = signer;
  let issued = 0;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/token") {
      res.writeHead(404).end();
      return;
    }
    const match = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    const [user, password] = match ? Buffer.from(match[1]!, "base64").toString("utf8").split(/:(.*)/s) : [];
    if (!user || options.users[user] === undefined || options.users[user] !== password) {
      res
        .writeHead(401, { "content-type": "application/json" })
        .end(JSON.stringify({ details: "bad credentials" }));
      return;
    }
    const nowSeconds = Math.floor(Date.now() / 1000);
    const ttl = options.ttlSeconds ?? 300;
    const token = signer.sign(user, url.searchParams.getAll("scope"), ttl);
    issued += 1;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        token,
        access_token: token,
        expires_in: ttl,
        issued_at: new Date(nowSeconds * 1000).toISOString(),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    realm: `http://127.0.0.1:${port}/token`,
    host: `127.0.0.1:${port}`,
    service,
    issuer,
    rootCertBundlePath: signer.rootCertBundlePath,
    issued: () => issued,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function signJwt(header: object, claims: object, privateKey: string): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signingInput = `${encode(header)}.${encode(claims)}`;
  const signature = createSign("RSA-SHA256").update(signingInput).sign(privateKey).toString("base64url");
  return `${signingInput}.${signature}`;
}
