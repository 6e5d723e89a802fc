import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { RegistryHttpError } from "./registry-errors.js";

export interface RegistryAuthOptions {
  kind: "basic" | "bearer";
  /** user → password, like an htpasswd file in clear text (sandbox only). */
  users: Record<string, string>;
  /** Lifetime of bearer tokens; tests set it low (or move `now`) to see expiry. Default 300. */
  tokenTtlSeconds?: number;
  /** Bearer only: answer as GHCR does (see GhcrModel). */
  ghcr?: GhcrModel;
}

/**
 * GitHub's container registry as it treats tokens: anyone gets a pull token for public packages;
 * a GitHub App installation token logs in (the token endpoint accepts it) but pulling a private
 * package is denied with 403 `{"errors":[{"code":"DENIED","message":"permission_denied: read_package"}]}`,
 * while a personal access token (classic, read:packages) of a user with access pulls it.
 * Observed answers: RightNow-AI/openfang#12 (the 403 DENIED body on tags/list after a token
 * exchange), jikig-ai/soleur#6073 (installation token: login succeeds, pull denied),
 * akuity/kargo#2391 (a GitHub App cannot read GHCR images).
 */
export interface GhcrModel {
  /** Repositories (`owner/name`) that are private packages. */
  privateRepositories: string[];
  /** Whether a Basic password is a GitHub App installation token. */
  isInstallationToken: (password: string) => boolean;
}

const ANONYMOUS = "<anonymous>";
const INSTALLATION = "<installation>";

/** What a request needs: `pull` (GET/HEAD), `push` (writes), `delete`, or registry-wide access. */
export interface AccessNeed {
  repository?: string;
  actions: string[];
}

interface IssuedToken {
  user: string;
  /** repository → granted actions. */
  grants: Map<string, Set<string>>;
  expiresAtMs: number;
}

export const TOKEN_SERVICE = "ferry-embedded-registry";

/**
 * Basic auth or the Docker token flow (distribution `auth: token`), with the registry as its own
 * token server. Tokens are opaque random strings held in memory.
 */
export class RegistryAuth {
  private readonly tokens = new Map<string, IssuedToken>();

  constructor(
    private readonly options: RegistryAuthOptions,
    private readonly now: () => number,
  ) {}

  /** Returns the authenticated user name or throws 401 UNAUTHORIZED with a WWW-Authenticate challenge. */
  authorize(req: IncomingMessage, need: AccessNeed, baseUrl: string): string {
    const header = req.headers.authorization ?? "";
    if (this.options.kind === "basic") {
      const user = this.checkBasic(header);
      if (user === undefined) {
        throw new RegistryHttpError("UNAUTHORIZED", {
          detail: need.repository
            ? [{ Type: "repository", Name: need.repository, Action: need.actions[0] }]
            : null,
          headers: { "WWW-Authenticate": `Basic realm="${TOKEN_SERVICE}"` },
        });
      }
      return user;
    }
    const challenge = this.bearerChallenge(need, baseUrl);
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const token = match ? this.tokens.get(match[1]!) : undefined;
    if (!token || token.expiresAtMs <= this.now()) {
      if (token) this.tokens.delete(match![1]!);
      throw new RegistryHttpError("UNAUTHORIZED", {
        message: token ? "authentication required: token expired" : "authentication required",
        detail: need.repository
          ? [{ Type: "repository", Name: need.repository, Action: need.actions.join(",") }]
          : null,
        headers: { "WWW-Authenticate": challenge },
      });
    }
    if (
      this.options.ghcr &&
      need.repository !== undefined &&
      this.options.ghcr.privateRepositories.includes(need.repository) &&
      (token.user === ANONYMOUS || token.user === INSTALLATION)
    ) {
      throw new RegistryHttpError("DENIED", { message: "permission_denied: read_package" });
    }
    if (need.repository !== undefined) {
      const granted = token.grants.get(need.repository);
      if (!need.actions.every((action) => granted?.has(action) || granted?.has("*"))) {
        throw new RegistryHttpError("UNAUTHORIZED", {
          message: "authentication required: insufficient scope",
          detail: [{ Type: "repository", Name: need.repository, Action: need.actions.join(",") }],
          headers: { "WWW-Authenticate": `${challenge},error="insufficient_scope"` },
        });
      }
    }
    return token.user;
  }

  /**
   * `GET /token?service=…&scope=repository:<name>:pull,push` with Basic credentials: the Docker
   * token spec's response. Unknown or missing credentials → 401, as Docker Hub's auth server does.
   */
  issueToken(req: IncomingMessage, url: URL): { status: number; body: object } {
    const user = this.ghcrUser(req.headers.authorization) ?? this.checkBasic(req.headers.authorization ?? "");
    if (user === undefined) {
      return {
        status: 401,
        body: { errors: [{ code: "UNAUTHORIZED", message: "authentication required", detail: null }] },
      };
    }
    const grants = new Map<string, Set<string>>();
    for (const scope of url.searchParams.getAll("scope").flatMap((value) => value.split(" "))) {
      const parts = scope.split(":");
      if (parts.length < 3) continue;
      const [type, ...rest] = parts;
      const actions = rest.pop()!;
      const name = rest.join(":");
      if (type !== "repository" && type !== "registry") continue;
      const set = grants.get(name) ?? new Set<string>();
      // GHCR: anonymous and installation logins may only ever pull.
      const allowed =
        user === ANONYMOUS || user === INSTALLATION ? ["pull"] : ["pull", "push", "delete", "*"];
      for (const action of actions.split(",")) if (allowed.includes(action)) set.add(action);
      grants.set(name, set);
    }
    const ttlSeconds = this.options.tokenTtlSeconds ?? 300;
    const token = randomBytes(24).toString("base64url");
    this.tokens.set(token, { user, grants, expiresAtMs: this.now() + ttlSeconds * 1000 });
    return {
      status: 200,
      body: {
        token,
        access_token: token,
        expires_in: ttlSeconds,
        issued_at: new Date(this.now()).toISOString(),
      },
    };
  }

  private bearerChallenge(need: AccessNeed, baseUrl: string): string {
    const scope =
      need.repository !== undefined ? `,scope="repository:${need.repository}:${need.actions.join(",")}"` : "";
    return `Bearer realm="${baseUrl}/token",service="${TOKEN_SERVICE}"${scope}`;
  }

  /** GHCR: no credentials is an anonymous login, an installation token a login of its own. */
  private ghcrUser(header: string | undefined): string | undefined {
    const ghcr = this.options.ghcr;
    if (!ghcr) return undefined;
    if (!header) return ANONYMOUS;
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    const decoded = match ? Buffer.from(match[1]!, "base64").toString("utf8") : "";
    const password = decoded.slice(decoded.indexOf(":") + 1);
    return decoded.includes(":") && ghcr.isInstallationToken(password) ? INSTALLATION : undefined;
  }

  private checkBasic(header: string): string | undefined {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    if (!match) return undefined;
    const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return undefined;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const expected = Object.hasOwn(this.options.users, user) ? this.options.users[user] : undefined;
    if (expected === undefined) return undefined;
    const given = Buffer.from(password);
    const wanted = Buffer.from(expected);
    return given.length === wanted.length && timingSafeEqual(given, wanted) ? user : undefined;
  }
}
