/**
 * Webhook intake attacks (docs/reliability.md rows 1–5, 11; goal G1) as fast-check arbitraries: every
 * generated request is unauthenticated, mis-signed, or authenticated but malformed, so every one
 * must be answered 4xx with no side effect. Shared by the test (fixed seed, modest count) and
 * `npm run bench` (larger counts).
 */
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`../fixtures/registry-webhooks/${name}`, import.meta.url));

/** Payloads that WOULD produce hints or handler work if they were accepted: a leak shows up as a side effect. */
export const REGISTRY_PAYLOADS = {
  distribution: fixture("distribution-push-envelope.json"),
  harbor: fixture("harbor-push-artifact.json"),
  dockerhub: fixture("dockerhub-push.json"),
  quay: fixture("quay-repository-push.json"),
  generic: Buffer.from('{"repository":"ghcr.io/acme/shop","tag":"1.8.0"}'),
};

export interface RouteSecrets {
  distribution: string;
  harbor: string;
  dockerhub: string;
  quay: string;
  generic: string;
  github: string;
}

export interface Attack {
  /** The attack class, for the figures. */
  klass: string;
  path: string;
  headers: [string, string][];
  body: Buffer;
}

const hmac256 = (secret: string, body: Buffer | string) =>
  createHmac("sha256", secret).update(body).digest("hex");
const hmac1 = (secret: string, body: Buffer | string) =>
  createHmac("sha1", secret).update(body).digest("hex");

/** Ways to spoil a correct `sha256=<hex>` signature; each yields a header value that must be refused. */
function spoiledSignatures(
  secret: string,
  body: Buffer,
): fc.Arbitrary<{ name: string; value: string | undefined }> {
  const good = hmac256(secret, body);
  return fc.oneof(
    fc.constant({ name: "missing signature", value: undefined }),
    fc.nat({ max: 63 }).map((i) => ({
      name: "one hex digit flipped",
      value: `sha256=${good.slice(0, i)}${flipHex(good[i]!)}${good.slice(i + 1)}`,
    })),
    fc
      .integer({ min: 0, max: 63 })
      .map((n) => ({ name: "truncated signature", value: `sha256=${good.slice(0, n)}` })),
    fc.constant({ name: "uppercase hex", value: `sha256=${good.toUpperCase()}` }),
    fc.constant({ name: "sha1= prefix", value: `sha1=${hmac1(secret, body)}` }),
    fc.constant({ name: "bogus= prefix", value: `bogus=${good}` }),
    fc.constant({ name: "no algorithm prefix", value: good }),
    fc.constant({ name: "extra hex digit", value: `sha256=${good}0` }),
    fc
      .string({ minLength: 1, maxLength: 80 })
      .map((s) => ({ name: "random text", value: s.replace(/[^\x21-\x7e]/g, "x") })),
    fc.stringMatching(/^[0-9a-f]{64}$/).map((hex) => ({ name: "random hex", value: `sha256=${hex}` })),
    fc.string({ minLength: 1, maxLength: 24 }).map((other) => ({
      name: "signed with another secret",
      value: `sha256=${hmac256(`${secret}${other}`, body)}`,
    })),
    // Only meaningful when the bytes differ from their re-serialization (the re-encoded bodies).
    ...(reserialize(body) === body.toString("utf8")
      ? []
      : [
          fc.constant({
            name: "signed over re-serialized JSON",
            value: `sha256=${hmac256(secret, reserialize(body))}`,
          }),
        ]),
  );
}

/** XOR with 1 always gives another hex digit. */
function flipHex(digit: string): string {
  return (parseInt(digit, 16) ^ 1).toString(16);
}

/**
 * The body re-encoded the way a careless verifier would see it after JSON.parse/stringify; the
 * attack body is made to differ from it (spaces, escaped Unicode) so the two never coincide.
 */
function reserialize(body: Buffer): string {
  return JSON.stringify(JSON.parse(body.toString("utf8")));
}
/** Same JSON value, different bytes: spaces and \u-escaped emoji. */
export function reencoded(body: Buffer): Buffer {
  const value = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  const text = JSON.stringify({ ...value, note: "🚢 ferry" }, null, 1).replace(/🚢/g, "\\ud83d\\udea2");
  return Buffer.from(text);
}

function authorizationAttacks(secret: string): fc.Arbitrary<{ name: string; headers: [string, string][] }> {
  return fc.oneof(
    fc.constant({ name: "missing Authorization", headers: [] as [string, string][] }),
    fc.string({ maxLength: 60 }).map((s) => ({
      name: "random Authorization",
      headers: [["Authorization", s.replace(/[^\x20-\x7e]/g, "x")]] as [string, string][],
    })),
    fc.nat({ max: secret.length - 1 }).map((i) => ({
      name: "secret with one character changed",
      headers: [
        ["Authorization", `${secret.slice(0, i)}${secret[i] === "x" ? "y" : "x"}${secret.slice(i + 1)}`],
      ] as [string, string][],
    })),
    fc.nat({ max: secret.length - 1 }).map((n) => ({
      name: "truncated secret",
      headers: [["Authorization", secret.slice(0, n)]] as [string, string][],
    })),
    fc.constant({
      name: "secret plus a suffix",
      headers: [["Authorization", `${secret}x`]] as [string, string][],
    }),
    fc.constant({
      name: "Basic-encoded secret",
      headers: [["Authorization", `Basic ${Buffer.from(`ferry:${secret}`).toString("base64")}`]] as [
        string,
        string,
      ][],
    }),
    fc.constant({
      name: "Bearer with the secret lower-cased",
      headers: [["Authorization", `Bearer ${secret.toLowerCase()}X`]] as [string, string][],
    }),
    // Node keeps the first of duplicated Authorization headers: a wrong first value must lose.
    fc.constant({
      name: "duplicated Authorization (wrong first)",
      headers: [
        ["Authorization", "wrong"],
        ["Authorization", secret],
      ] as [string, string][],
    }),
  );
}

function tokenPathAttacks(token: string): fc.Arbitrary<{ name: string; segment: string }> {
  return fc.oneof(
    fc.constant({ name: "empty token", segment: "" }),
    fc.nat({ max: token.length - 1 }).map((n) => ({ name: "token prefix", segment: token.slice(0, n) })),
    fc.constant({ name: "token plus suffix", segment: `${token}x` }),
    fc.constant({ name: "token upper-cased", segment: token.toUpperCase() }),
    fc.constant({ name: "percent-encoded wrong token", segment: encodeURIComponent(`${token}/`) }),
    fc.constant({ name: "traversal segment", segment: "..%2F.." }),
    fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/).map((segment) => ({ name: "random token", segment })),
    fc.constant({ name: "malformed percent-encoding", segment: "%E0%A4%A" }),
  );
}

const JSON_TYPE: [string, string] = ["Content-Type", "application/json"];

/** Malformed or truncated bodies, sent WITH valid credentials: must be 400, never 500. */
function malformedBodies(payload: Buffer): fc.Arbitrary<{ name: string; body: Buffer }> {
  return fc.oneof(
    fc
      .integer({ min: 1, max: Math.max(1, payload.length - 1) })
      .map((n) => ({ name: "truncated JSON", body: payload.subarray(0, n) }))
      // Cutting only trailing whitespace leaves valid JSON: that is not a malformed body.
      .filter(({ body }) => !parsesAsJson(body)),
    fc.constant({ name: "empty body", body: Buffer.alloc(0) }),
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => ({
      name: "random bytes",
      body: Buffer.concat([Buffer.from("{"), Buffer.from(bytes)]),
    })),
    fc.constant({ name: "JSON with a trailing comma", body: Buffer.from('{"repository": "acme/shop",}') }),
  );
}

function parsesAsJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString("utf8"));
    return true;
  } catch {
    return false;
  }
}

/** Every attack on every registry receiver route. */
export function registryAttacks(secrets: RouteSecrets): fc.Arbitrary<Attack> {
  const signed = (body: Buffer): [string, string] => [
    "X-Ferry-Signature-256",
    `sha256=${hmac256(secrets.generic, body)}`,
  ];
  const genericSignature = fc.tuple(fc.boolean(), fc.constant(0)).chain(([reencode]) => {
    const body = reencode ? reencoded(REGISTRY_PAYLOADS.generic) : REGISTRY_PAYLOADS.generic;
    return spoiledSignatures(secrets.generic, body).map((sig): Attack => ({
      klass: `generic: ${sig.name}`,
      path: "/registry/generic",
      headers: sig.value === undefined ? [JSON_TYPE] : [JSON_TYPE, ["X-Ferry-Signature-256", sig.value]],
      body,
    }));
  });
  const duplicatedSignature = fc.constant<Attack>({
    klass: "generic: duplicated signature header",
    path: "/registry/generic",
    headers: [JSON_TYPE, signed(REGISTRY_PAYLOADS.generic), signed(REGISTRY_PAYLOADS.generic)],
    body: REGISTRY_PAYLOADS.generic,
  });
  const replayedSignature = fc.constant<Attack>({
    klass: "generic: signature replayed on another body",
    path: "/registry/generic",
    headers: [JSON_TYPE, signed(Buffer.from('{"repository":"ghcr.io/acme/shop","tag":"1.0.0"}'))],
    body: REGISTRY_PAYLOADS.generic,
  });
  const headerAuth = fc.constantFrom("distribution" as const, "harbor" as const).chain((route) =>
    authorizationAttacks(secrets[route]).map((auth): Attack => ({
      klass: `${route}: ${auth.name}`,
      path: `/registry/${route}`,
      headers: [JSON_TYPE, ...auth.headers],
      body: REGISTRY_PAYLOADS[route],
    })),
  );
  const urlToken = fc.constantFrom("dockerhub" as const, "quay" as const).chain((route) =>
    tokenPathAttacks(secrets[route]).map((token): Attack => ({
      klass: `${route}: ${token.name}`,
      path: `/registry/${route}/${token.segment}`,
      headers: [JSON_TYPE],
      body: REGISTRY_PAYLOADS[route],
    })),
  );
  const malformedWithAuth = fc
    .constantFrom(
      "distribution" as const,
      "harbor" as const,
      "dockerhub" as const,
      "quay" as const,
      "generic" as const,
    )
    .chain((route) =>
      malformedBodies(REGISTRY_PAYLOADS[route]).map((bad): Attack => {
        const headers: [string, string][] = [JSON_TYPE];
        let path = `/registry/${route}`;
        if (route === "distribution" || route === "harbor") headers.push(["Authorization", secrets[route]]);
        if (route === "dockerhub" || route === "quay") path += `/${secrets[route]}`;
        if (route === "generic") headers.push(signed(bad.body));
        return { klass: `${route}: ${bad.name} (authenticated)`, path, headers, body: bad.body };
      }),
    );
  const wrongContentType = fc
    .constantFrom("distribution" as const, "harbor" as const)
    .map((route): Attack => ({
      klass: `${route}: form-urlencoded (authenticated)`,
      path: `/registry/${route}`,
      headers: [
        ["Content-Type", "application/x-www-form-urlencoded"],
        ["Authorization", secrets[route]],
      ],
      body: REGISTRY_PAYLOADS[route],
    }));
  return fc.oneof(
    { weight: 4, arbitrary: genericSignature },
    { weight: 1, arbitrary: duplicatedSignature },
    { weight: 1, arbitrary: replayedSignature },
    { weight: 3, arbitrary: headerAuth },
    { weight: 3, arbitrary: urlToken },
    { weight: 2, arbitrary: malformedWithAuth },
    { weight: 1, arbitrary: wrongContentType },
  );
}

/** A GitHub event that would make Ferry call the API if it were accepted. */
export const GITHUB_PAYLOAD = Buffer.from(
  JSON.stringify({
    action: "created",
    comment: {
      id: 1,
      body: "/promote prod",
      user: { login: "mona", type: "User" },
      author_association: "OWNER",
    },
    issue: { number: 1, pull_request: {}, state: "open", user: { login: "mona" } },
    repository: {
      id: 1,
      name: "config",
      full_name: "acme/config",
      owner: { login: "acme" },
      default_branch: "main",
    },
    installation: { id: 1 },
    sender: { login: "mona", type: "User" },
  }),
);

/** Attacks on Probot's `/api/github/webhooks` (signature `X-Hub-Signature-256`). */
export function githubAttacks(secret: string): fc.Arbitrary<Attack> {
  const base = (event: string, id: string): [string, string][] => [
    JSON_TYPE,
    ["X-GitHub-Event", event],
    ["X-GitHub-Delivery", id],
  ];
  const spoiled = fc.tuple(fc.boolean(), fc.uuid()).chain(([reencode, id]) => {
    const body = reencode ? reencoded(GITHUB_PAYLOAD) : GITHUB_PAYLOAD;
    return spoiledSignatures(secret, body).map((sig): Attack => ({
      klass: `github: ${sig.name}`,
      path: "/api/github/webhooks",
      headers:
        sig.value === undefined
          ? base("issue_comment", id)
          : [...base("issue_comment", id), ["X-Hub-Signature-256", sig.value]],
      body,
    }));
  });
  const missingHeaders = fc.constantFrom("X-GitHub-Event", "X-GitHub-Delivery").map((drop): Attack => ({
    klass: `github: missing ${drop}`,
    path: "/api/github/webhooks",
    headers: [
      ...base("issue_comment", "d-1"),
      ["X-Hub-Signature-256", `sha256=${hmac256(secret, GITHUB_PAYLOAD)}`],
    ].filter(([name]) => name !== drop) as [string, string][],
    body: GITHUB_PAYLOAD,
  }));
  const formEncoded = fc.constant<Attack>({
    klass: "github: form-urlencoded",
    path: "/api/github/webhooks",
    headers: [
      ["Content-Type", "application/x-www-form-urlencoded"],
      ["X-GitHub-Event", "issue_comment"],
      ["X-GitHub-Delivery", "d-2"],
      ["X-Hub-Signature-256", `sha256=${hmac256(secret, GITHUB_PAYLOAD)}`],
    ],
    body: GITHUB_PAYLOAD,
  });
  return fc.oneof(
    { weight: 8, arbitrary: spoiled },
    { weight: 1, arbitrary: missingHeaders },
    { weight: 1, arbitrary: formEncoded },
  );
}

export const sign256 = hmac256;
