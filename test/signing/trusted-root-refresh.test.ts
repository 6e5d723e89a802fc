import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRegistryClient, readTrustedRootFile } from "../../src/adapters/registry/index.js";
import type { VerifyPolicy } from "../../src/core/policy/verify.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import { startFerryServer, type FerryServer } from "../../src/server/ferry-server.js";
import { serverOptionsFromEnv } from "../../src/server/server-options.js";
import { startTrustedRootRefresh } from "../../src/server/trusted-root-refresh.js";
import { startDistribution, type RunningDistribution } from "../support/registry-distribution.js";
import { startTufRepository, type TufRepository } from "../support/tuf-repository.js";
import {
  BUNDLE_MEDIA_TYPE,
  createTestSigstore,
  pushReferrer,
  type TestSigstore,
} from "./sigstore-fixtures.js";
import { runFerry } from "../support/cli-io.js";

/**
 * The Sigstore trusted root refreshed through TUF, on the operator's two routes: `ferry serve` with
 * FERRY_SIGSTORE_TUF_MIRROR (at start, then on its interval) and `ferry trust-root refresh --out`
 * (for FERRY_SIGSTORE_TRUSTED_ROOT). The TUF repository is served on 127.0.0.1 (`@tufjs/repo-mock`
 * keys and handlers); the roots are test Sigstore instances (`@sigstore/mock`): a keyless
 * signature from a CA only in the refreshed root must verify once the refresh is in, and a
 * tampered target or expired or unsigned metadata must leave the previous root in use.
 */
const ISSUER = "https://token.actions.githubusercontent.com";
const SUBJECT = "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v1.9.0";
const policy: VerifyPolicy = {
  issuer: ISSUER,
  subject: "https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/*",
  tlog: true,
};
const target = (sigstore: TestSigstore) => ({
  name: "trusted_root.json",
  content: JSON.stringify(sigstore.trustedRoot),
});

/** The same length, one byte of a key changed: only the signed hash tells it apart. */
const tampered = (json: string): string => {
  const at = json.indexOf('"rawBytes":"') + '"rawBytes":"'.length;
  return json.slice(0, at) + (json[at] === "M" ? "N" : "M") + json.slice(at + 1);
};

let distribution: RunningDistribution;
let before: TestSigstore;
let after: TestSigstore;
let name: string;
const digests: Record<string, string> = {};

beforeAll(async () => {
  before = await createTestSigstore();
  after = await createTestSigstore();
  distribution = await startDistribution("none");
  name = `${distribution.host}/acme/shop`;
  for (const [tag, by] of [
    ["old-ca", before],
    ["new-ca", after],
  ] as const) {
    const digest = (await pushImage(distribution.url, "acme/shop", tag, { content: tag })).digest;
    digests[tag] = digest;
    const bundle = await by.bundle({ digest, identity: { issuer: ISSUER, subject: SUBJECT } });
    await pushReferrer(
      distribution.url,
      "acme/shop",
      digest,
      BUNDLE_MEDIA_TYPE,
      Buffer.from(JSON.stringify(bundle)),
    );
  }
});

afterAll(async () => {
  await distribution?.close();
});

describe("ferry serve with FERRY_SIGSTORE_TUF_MIRROR", () => {
  let tuf: TufRepository;
  let server: FerryServer;
  const logs: { level: number; msg: string }[] = [];
  const warnings = () => logs.filter((line) => line.level === 40).map((line) => line.msg);

  beforeAll(async () => {
    tuf = await startTufRepository([target(before)]);
    const options = serverOptionsFromEnv({
      APP_ID: "1",
      PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
        type: "pkcs1",
        format: "pem",
      }) as string,
      WEBHOOK_SECRET: "trusted-root-refresh-test",
      FERRY_SCAN_INTERVAL: "off",
      FERRY_SIGSTORE_TUF_MIRROR: tuf.url,
      FERRY_SIGSTORE_TUF_ROOT: tuf.rootPath,
    });
    server = await startFerryServer({
      ...options,
      host: "127.0.0.1",
      port: 0,
      baseUrl: "http://127.0.0.1:9",
      Octokit: UnthrottledOctokit,
      log: pino(
        { level: "info" },
        new Writable({
          write(chunk, _encoding, done) {
            logs.push(JSON.parse(String(chunk)) as { level: number; msg: string });
            done();
          },
        }),
      ),
    });
  });

  afterAll(async () => {
    await server?.close();
    await tuf?.close();
  });

  // The same trusted root every registry client of the server checks with.
  const client = () => createRegistryClient({ trustedRoot: () => server.ferry.trustedRoot() });

  it("says at start which root it uses and refreshes it through TUF before serving", async () => {
    expect(logs.map((line) => line.msg)).toContain(
      `sigstore trusted root: shipped with @sigstore/tuf (public-good instance), refreshed through TUF from ${tuf.url}`,
    );
    expect(logs.map((line) => line.msg)).toContain("sigstore trusted root refreshed through TUF");
    expect(tuf.requests).toContain("/targets/trusted_root.json");
    const checker = client();
    expect(await checker.checkSignature(name, digests["old-ca"]!, policy)).toMatchObject({ verified: true });
    expect(await checker.checkSignature(name, digests["new-ca"]!, policy)).toEqual({
      verified: false,
      reason: expect.stringMatching(/^its certificate is not trusted/),
    });
  });

  it("uses a refreshed root for the next check: a CA only in the new root verifies, one it dropped no longer does", async () => {
    const checker = client();
    // Checked (and remembered) under the first root.
    expect(await checker.checkSignature(name, digests["new-ca"]!, policy)).toMatchObject({ verified: false });
    expect(await checker.checkSignature(name, digests["old-ca"]!, policy)).toMatchObject({ verified: true });
    tuf.publish([target(after)]);
    expect(await server.refreshTrustedRoot()).toBe(true);
    expect(await checker.checkSignature(name, digests["new-ca"]!, policy)).toMatchObject({ verified: true });
    expect(await checker.checkSignature(name, digests["old-ca"]!, policy)).toEqual({
      verified: false,
      reason: expect.stringMatching(/^its certificate is not trusted/),
    });
  });

  it.each([
    [
      "a tampered trusted_root.json target",
      () => {
        tuf.publish([target(before)]);
        tuf.tamper("trusted_root.json", tampered(target(before).content));
      },
      /Expected hash [0-9a-f]{64} but got [0-9a-f]{64}$/,
    ],
    ["an expired timestamp.json", () => tuf.publishExpired([target(before)]), /timestamp\.json is expired$/],
    ["an unsigned timestamp.json", () => tuf.publishUnsigned([target(before)]), /signed by 0\/1 keys/],
  ])("refuses %s, keeps the last good root and logs why", async (_what, serve, why) => {
    const warned = warnings().length;
    serve();
    expect(await server.refreshTrustedRoot()).toBe(false);
    const warning = warnings().slice(warned);
    expect(warning).toHaveLength(1);
    expect(warning[0]).toMatch(
      /^sigstore trusted root refresh failed, keeping the last good root: TUF mirror /,
    );
    expect(warning[0]).toMatch(why);
    expect(warning[0]).not.toContain("\n");
    const checker = client();
    expect(await checker.checkSignature(name, digests["new-ca"]!, policy)).toMatchObject({ verified: true });
    expect(await checker.checkSignature(name, digests["old-ca"]!, policy)).toMatchObject({ verified: false });
  });
});

describe("ferry trust-root refresh --out", () => {
  let tuf: TufRepository;
  const dir = mkdtempSync(join(tmpdir(), "ferry-trust-root-cli-"));
  const run = (args: string[]) => runFerry(["trust-root", ...args], dir);

  beforeAll(async () => {
    tuf = await startTufRepository([target(after)]);
  });
  afterAll(async () => {
    await tuf?.close();
  });

  it("writes the verified trusted root, which FERRY_SIGSTORE_TRUSTED_ROOT then verifies keyless signatures with", async () => {
    const result = await run([
      "refresh",
      "--out",
      "trusted_root.json",
      "--mirror",
      tuf.url,
      "--tuf-root",
      tuf.rootPath,
    ]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(
      /^wrote trusted_root\.json: 1 certificate authorities, 1 transparency logs\n$/,
    );
    const written = readFileSync(join(dir, "trusted_root.json"), "utf8");
    expect(written).toBe(target(after).content);
    const checker = createRegistryClient({
      trustedRoot: readTrustedRootFile(join(dir, "trusted_root.json")),
    });
    expect(await checker.checkSignature(name, digests["new-ca"]!, policy)).toMatchObject({ verified: true });
  });

  it("refuses a tampered target with one line and leaves the previous file as it was", async () => {
    const out = join(dir, "kept.json");
    writeFileSync(out, "previous");
    tuf.publish([target(before)]);
    tuf.tamper("trusted_root.json", tampered(target(before).content));
    const result = await run(["refresh", "--out", out, "--mirror", tuf.url, "--tuf-root", tuf.rootPath]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^ferry trust-root: TUF mirror http:\/\/127\.0\.0\.1:\d+: .*Expected hash \w+ but got \w+\n$/,
    );
    expect(readFileSync(out, "utf8")).toBe("previous");
  });

  it("refuses a signed trusted root larger than 1 MiB", async () => {
    const out = join(dir, "large.json");
    tuf.publish([{ name: "trusted_root.json", content: target(after).content + " ".repeat(1024 * 1024) }]);
    const result = await run(["refresh", "--out", out, "--mirror", tuf.url, "--tuf-root", tuf.rootPath]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/trusted root is larger than 1048576 bytes\n$/);
    expect(existsSync(out)).toBe(false);
  });

  it("gives up on a mirror that accepts the connection and never answers, within --timeout", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const result = await run([
        "refresh",
        "--out",
        "silent.json",
        "--mirror",
        `http://127.0.0.1:${port}`,
        "--tuf-root",
        tuf.rootPath,
        "--timeout",
        "1",
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^ferry trust-root: TUF mirror http:\/\/127\.0\.0\.1:\d+: .*time/i);
      expect(existsSync(join(dir, "silent.json"))).toBe(false);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("asks for the TUF root to start from when the mirror is not the public-good one", async () => {
    const result = await run(["refresh", "--out", "x.json", "--mirror", tuf.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--tuf-root .* is required with --mirror/);
  });
});

describe("the FERRY_SIGSTORE_TUF_* settings of ferry serve", () => {
  const base = { APP_ID: "1", PRIVATE_KEY: "key", WEBHOOK_SECRET: "secret" };
  const settings = (env: Record<string, string>) =>
    serverOptionsFromEnv({ ...base, ...env }).trustedRootRefresh;
  const root = join(mkdtempSync(join(tmpdir(), "ferry-tuf-settings-")), "root.json");
  writeFileSync(root, "{}");

  it("refreshes from the public-good mirror with the TUF root @sigstore/tuf ships, every 24 h unless told", () => {
    expect(settings({ FERRY_SIGSTORE_TUF_MIRROR: "https://tuf-repo-cdn.sigstore.dev" })).toEqual({
      mirrorURL: "https://tuf-repo-cdn.sigstore.dev",
    });
    expect(
      settings({
        FERRY_SIGSTORE_TUF_MIRROR: "https://tuf.example.com",
        FERRY_SIGSTORE_TUF_ROOT: root,
        FERRY_SIGSTORE_TUF_REFRESH_INTERVAL: "off",
      }),
    ).toEqual({ mirrorURL: "https://tuf.example.com", rootPath: root, intervalMs: false });
    expect(settings({})).toBeUndefined();
  });

  it.each([
    [{ FERRY_SIGSTORE_TUF_MIRROR: "https://tuf.example.com" }, /FERRY_SIGSTORE_TUF_ROOT .* is required/],
    [{ FERRY_SIGSTORE_TUF_ROOT: root }, /need FERRY_SIGSTORE_TUF_MIRROR/],
    [{ FERRY_SIGSTORE_TUF_MIRROR: "not a url" }, /FERRY_SIGSTORE_TUF_MIRROR is not a URL/],
    [{ FERRY_SIGSTORE_TUF_MIRROR: "file:///etc", FERRY_SIGSTORE_TUF_ROOT: root }, /must be an http\(s\) URL/],
    [
      {
        FERRY_SIGSTORE_TUF_MIRROR: "https://tuf.example.com",
        FERRY_SIGSTORE_TUF_ROOT: join(root, "missing"),
      },
      /cannot read FERRY_SIGSTORE_TUF_ROOT .*: (ENOENT|ENOTDIR)/,
    ],
    [
      {
        FERRY_SIGSTORE_TUF_MIRROR: "https://tuf-repo-cdn.sigstore.dev",
        FERRY_SIGSTORE_TUF_REFRESH_INTERVAL: "5s",
      },
      /between 1m and 7d/,
    ],
    [
      {
        FERRY_SIGSTORE_TUF_MIRROR: "https://tuf-repo-cdn.sigstore.dev",
        FERRY_SIGSTORE_TUF_REFRESH_INTERVAL: "30d",
      },
      /between 1m and 7d/,
    ],
  ])("stops at start with one line for %j", (env, message) => {
    expect(() => settings(env)).toThrow(message);
  });
});

describe("a TUF mirror URL with credentials", () => {
  it("never reaches the log: neither the start line nor a failed refresh's warning", async () => {
    const tuf = await startTufRepository([target(before)]);
    const logs: string[] = [];
    const mirror = tuf.url.replace("http://", "http://ferry:mirror-password@");
    const server = await startFerryServer({
      ...serverOptionsFromEnv({
        APP_ID: "1",
        PRIVATE_KEY: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
          type: "pkcs1",
          format: "pem",
        }) as string,
        WEBHOOK_SECRET: "trusted-root-refresh-test",
        FERRY_SCAN_INTERVAL: "off",
        FERRY_SIGSTORE_TUF_MIRROR: mirror,
        FERRY_SIGSTORE_TUF_ROOT: tuf.rootPath,
      }),
      host: "127.0.0.1",
      port: 0,
      baseUrl: "http://127.0.0.1:9",
      Octokit: UnthrottledOctokit,
      log: pino(
        { level: "info" },
        new Writable({
          write(chunk, _encoding, done) {
            logs.push(String(chunk));
            done();
          },
        }),
      ),
    });
    try {
      tuf.publishExpired([target(after)]);
      expect(await server.refreshTrustedRoot()).toBe(false);
      expect(logs.join("")).toContain(`refreshed through TUF from ${tuf.url}`);
      expect(logs.join("")).toContain("keeping the last good root");
      expect(logs.join("")).not.toContain("mirror-password");
    } finally {
      await server.close();
      await tuf.close();
    }
  });
});

describe("the periodic refresh", () => {
  it("applies a root published after the start on its own, without a request, and runs one refresh at a time", async () => {
    const tuf = await startTufRepository([target(before)]);
    const applied: TrustedRoot[] = [];
    const refresher = startTrustedRootRefresh(
      { mirrorURL: tuf.url, rootPath: tuf.rootPath, intervalMs: 50 },
      (root) => applied.push(root),
      { info: () => {}, warn: () => {} },
    );
    try {
      expect(refresher.refresh()).toBe(refresher.refresh());
      await refresher.refresh();
      tuf.publish([target(after)]);
      const fresh = TrustedRoot.fromJSON(after.trustedRoot);
      await vi.waitFor(() => expect(applied.at(-1)).toEqual(fresh), { timeout: 30_000, interval: 20 });
    } finally {
      refresher.stop();
      await tuf.close();
    }
  });
});
