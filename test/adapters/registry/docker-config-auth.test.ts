import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createRegistryClient } from "../../../src/adapters/registry/index.js";
import { ambientBindings, contextWithAmbient } from "../../support/ambient-bindings.js";
import { registryRuleProblems } from "../../../src/core/config/registry-rules.js";
import { REDACTED, SecretRedactor } from "../../../src/core/redact.js";
import { serverOptionsFromEnv } from "../../../src/server/server-options.js";
import { pushImage } from "../../../packages/sandbox/src/registry/push-image.js";
import { startDistribution, type RunningDistribution } from "../../support/registry-distribution.js";

/**
 * `auth: dockerconfig` against the real CNCF registry (htpasswd): a Docker config.json given by
 * path, its `auths` entries, and the credential-helper protocol (`docker-credential-<name> get`,
 * host on stdin, `{"Username","Secret"}` on stdout, as docker/docker-credential-helpers documents)
 * with a helper script on PATH that records each call.
 */

let registry: RunningDistribution;
let dir: string;

beforeAll(async () => {
  registry = await startDistribution("basic");
  for (const tag of ["1.0.0", "1.1.0"])
    await pushImage(registry.url, "shop", tag, { auth: registry.credentials });
  dir = mkdtempSync(join(tmpdir(), "ferry-dockerconfig-"));
  const helper = join(dir, "docker-credential-ferrytest");
  // Answers for the host it is asked about, only to `get`; records each host asked.
  writeFileSync(
    helper,
    `#!/bin/sh
[ "$1" = get ] || exit 2
read host
echo "$host" >> "${join(dir, "calls")}"
if [ "$host" = "${registry.host}" ]; then
  printf '{"ServerURL":"%s","Username":"%s","Secret":"%s"}' "$host" "$(cat ${join(dir, "user")})" "$(cat ${join(dir, "secret")})"
else
  echo "credentials not found in native keychain" >&2; exit 1
fi
`,
  );
  chmodSync(helper, 0o755);
});

afterAll(async () => {
  await registry?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

afterEach(() => vi.unstubAllEnvs());

function writeConfig(config: unknown): string {
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify(config));
  return path;
}

function helperCalls(): string[] {
  try {
    return readFileSync(join(dir, "calls"), "utf8").trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

describe("auth: dockerconfig", () => {
  it("reads an auths entry (base64 user:password) of the config.json the operator gave", async () => {
    const { username, password } = registry.credentials!;
    const path = writeConfig({
      auths: { [registry.host]: { auth: Buffer.from(`${username}:${password}`).toString("base64") } },
    });
    const secrets = new SecretRedactor();
    const client = createRegistryClient({
      registries: { [registry.host]: { auth: "dockerconfig" } },
      secretBindings: ambientBindings([registry.host]),
      dockerConfigPath: path,
      secrets,
    });
    expect((await client.listTags(`${registry.host}/shop`)).sort()).toEqual(["1.0.0", "1.1.0"]);
    expect(secrets.redact(password)).toBe(REDACTED);
  });

  it("reads no credential for a host or an installation the operator did not bind it to (behind the config check)", async () => {
    const { username, password } = registry.credentials!;
    const path = writeConfig({
      auths: { [registry.host]: { auth: Buffer.from(`${username}:${password}`).toString("base64") } },
    });
    const read = (secretBindings: ReturnType<typeof ambientBindings>, secretOwner?: string) =>
      createRegistryClient({
        registries: { [registry.host]: { auth: "dockerconfig" } },
        secretBindings,
        ...(secretOwner ? { secretOwner } : {}),
        dockerConfigPath: path,
      }).listTags(`${registry.host}/shop`);
    await expect(read(ambientBindings(["registry.example.com"]))).rejects.toThrow(
      `${registry.host}: FERRY_DOCKER_CONFIG is bound to registry.example.com, not ${registry.host}: Ferry never sends it to another host`,
    );
    await expect(read(ambientBindings([registry.host], "acme"), "globex")).rejects.toThrow(
      `${registry.host}: FERRY_DOCKER_CONFIG is not available to installation globex`,
    );
    expect((await read(ambientBindings([registry.host], "acme"), "acme")).sort()).toEqual(["1.0.0", "1.1.0"]);
  });

  it("runs the credential helper named in credHelpers once for concurrent requests, with the host on stdin", async () => {
    vi.stubEnv("PATH", `${dir}:${process.env.PATH ?? ""}`);
    writeFileSync(join(dir, "user"), registry.credentials!.username);
    writeFileSync(join(dir, "secret"), registry.credentials!.password);
    rmSync(join(dir, "calls"), { force: true });
    const path = writeConfig({ credHelpers: { [registry.host]: "ferrytest" } });
    const client = createRegistryClient({
      registries: { [registry.host]: { auth: "dockerconfig" } },
      secretBindings: ambientBindings([registry.host]),
      dockerConfigPath: path,
      limits: { tagCacheTtlMs: 0 },
    });
    const results = await Promise.all(
      Array.from({ length: 6 }, () => client.listTags(`${registry.host}/shop`)),
    );
    expect(results.map((tags) => tags.length)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(helperCalls()).toEqual([registry.host]);
  });

  it("runs the helper again once for concurrent requests after its answer's five minutes of reuse", async () => {
    vi.stubEnv("PATH", `${dir}:${process.env.PATH ?? ""}`);
    writeFileSync(join(dir, "user"), registry.credentials!.username);
    writeFileSync(join(dir, "secret"), registry.credentials!.password);
    rmSync(join(dir, "calls"), { force: true });
    const clock = { now: Date.parse("2026-01-01T00:00:00Z") };
    const client = createRegistryClient({
      registries: { [registry.host]: { auth: "dockerconfig" } },
      secretBindings: ambientBindings([registry.host]),
      dockerConfigPath: writeConfig({ credHelpers: { [registry.host]: "ferrytest" } }),
      now: () => clock.now,
      limits: { tagCacheTtlMs: 0 },
    });
    await Promise.all(Array.from({ length: 6 }, () => client.listTags(`${registry.host}/shop`)));
    clock.now += 4 * 60_000;
    await client.listTags(`${registry.host}/shop`);
    expect(helperCalls()).toEqual([registry.host]);
    clock.now += 2 * 60_000;
    await Promise.all(Array.from({ length: 6 }, () => client.listTags(`${registry.host}/shop`)));
    expect(helperCalls()).toEqual([registry.host, registry.host]);
  });

  it("explains a refused helper credential in one line without the secret", async () => {
    vi.stubEnv("PATH", `${dir}:${process.env.PATH ?? ""}`);
    writeFileSync(join(dir, "user"), "ferry");
    writeFileSync(join(dir, "secret"), "revoked-helper-secret-canary");
    const path = writeConfig({ credHelpers: { [registry.host]: "ferrytest" } });
    const client = createRegistryClient({
      registries: { [registry.host]: { auth: "dockerconfig" } },
      secretBindings: ambientBindings([registry.host]),
      dockerConfigPath: path,
    });
    const error = await client.listTags(`${registry.host}/shop`).catch((caught: Error) => caught);
    expect((error as Error).message).toBe(
      `${registry.host}: unauthorized for shop after re-authenticating with auth: dockerconfig from ${path}; the registry said UNAUTHORIZED`,
    );
    // The refused answer was dropped: the next cycle runs the helper again and gets the restored one.
    writeFileSync(join(dir, "secret"), registry.credentials!.password);
    await expect(client.listTags(`${registry.host}/shop`)).resolves.toHaveLength(2);
  });

  it("says what the helper said when it has no credentials for the host", async () => {
    vi.stubEnv("PATH", `${dir}:${process.env.PATH ?? ""}`);
    const path = writeConfig({ credsStore: "ferrytest" });
    const client = createRegistryClient({
      registries: { "127.0.0.2:1": { auth: "dockerconfig" } },
      secretBindings: ambientBindings(["127.0.0.2:1"]),
      loopbackOrigins: { "127.0.0.2:1": registry.url },
      dockerConfigPath: path,
    });
    await expect(client.listTags("127.0.0.2:1/shop")).rejects.toThrow(
      `127.0.0.2:1: auth: dockerconfig from ${path}: docker-credential-ferrytest get failed (exit 1): credentials not found in native keychain`,
    );
  });

  it("refuses without a config.json path from the operator", async () => {
    const client = createRegistryClient({
      registries: { [registry.host]: { auth: "dockerconfig" } },
      secretBindings: ambientBindings([registry.host]),
    });
    await expect(client.listTags(`${registry.host}/shop`)).rejects.toThrow(
      `${registry.host}: auth: dockerconfig from (FERRY_DOCKER_CONFIG not set): the operator has not set FERRY_DOCKER_CONFIG`,
    );
  });

  it("is refused next to a secret named in the config", () => {
    const { errors } = registryRuleProblems(
      {
        registries: {
          "registry.example.com": { auth: "dockerconfig", username: "u", passwordEnv: "FERRY_REGISTRY_X" },
        },
      },
      contextWithAmbient(["registry.example.com"]),
    );
    expect(errors.map((e) => e.path.join("."))).toEqual([
      "registries.registry.example.com.username",
      "registries.registry.example.com.passwordEnv",
    ]);
  });

  it("takes the config.json path from the operator's FERRY_DOCKER_CONFIG only", () => {
    const base = { APP_ID: "7", PRIVATE_KEY: "k", WEBHOOK_SECRET: "s" };
    expect(
      serverOptionsFromEnv({ ...base, FERRY_DOCKER_CONFIG: "/etc/ferry/config.json" }).ferry
        ?.dockerConfigPath,
    ).toBe("/etc/ferry/config.json");
    expect(serverOptionsFromEnv(base).ferry?.dockerConfigPath).toBeUndefined();
  });
});
