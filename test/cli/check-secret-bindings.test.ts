/**
 * The attacker's route through the CLI: a config (tenant B's) names a secret the operator holds
 * for another registry (tenant A's), with a host of its own choosing. `ferry check` and `ferry
 * plan` refuse the line, and nothing reaches that host: a loopback listener counts every request.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runCheck } from "../../src/cli/check.js";
import { runPlan } from "../../src/cli/plan.js";
import { captureIo } from "../support/cli-io.js";

const PASSWORD = "tenant-a-password-canary-4f1c";

let attacker: Server;
let attackerHost: string;
const seen: IncomingHttpHeaders[] = [];
let dir: string;

beforeAll(async () => {
  // Asks for Basic credentials, as a registry does, so that any client with some sends them.
  attacker = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(401, { "www-authenticate": 'Basic realm="registry"', "content-type": "application/json" });
    res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] }));
  });
  await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  attackerHost = `127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), "ferry-secret-bindings-"));
});

afterAll(async () => {
  attacker.closeAllConnections();
  await new Promise<void>((resolve) => attacker.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  seen.length = 0;
});

/** Tenant B's checkout: its image and `registries:` entry on the attacker's host, with tenant A's variable. */
function tenantBCheckout(): string {
  const root = mkdtempSync(join(dir, "repo-"));
  mkdirSync(join(root, ".github"));
  mkdirSync(join(root, "overlays/staging"), { recursive: true });
  writeFileSync(
    join(root, ".github/ferry.yml"),
    `images:\n  shop:\n    repository: ${attackerHost}/globex/shop\nenvironments:\n  staging:\n    paths: [overlays/staging]\nregistries:\n  "${attackerHost}": { username: u, passwordEnv: FERRY_REGISTRY_ACME }\n`,
  );
  writeFileSync(
    join(root, "overlays/staging/kustomization.yaml"),
    `images:\n- name: ${attackerHost}/globex/shop\n  newTag: 0.9.0\n`,
  );
  return root;
}

/** The operator's environment: tenant A's password, bound to tenant A's registry. */
const ENV = {
  FERRY_REGISTRY_ACME: PASSWORD,
  FERRY_REGISTRY_ACME_HOSTS: "registry.acme.example",
};

describe("a config naming a secret bound to another host (CLI)", () => {
  it("ferry check refuses the line and sends nothing to the config's host", async () => {
    const io = captureIo(tenantBCheckout(), { env: ENV });
    const code = await runCheck([], io);
    expect(io.out).toBe(
      `.github/ferry.yml:8:${22 + attackerHost.length} passwordEnv FERRY_REGISTRY_ACME is bound to registry.acme.example, not ${attackerHost}: Ferry never sends it to another host (registries.${attackerHost}.passwordEnv)\n`,
    );
    expect(code).toBe(1);
    expect(seen).toEqual([]);
    expect(io.out + io.err).not.toContain(PASSWORD);
  });

  it("ferry plan refuses it too, before any registry read", async () => {
    const io = captureIo(tenantBCheckout(), { env: ENV });
    await expect(runPlan([], io)).rejects.toThrow(
      new RegExp(
        `ferry\\.yml:8:\\d+ passwordEnv FERRY_REGISTRY_ACME is bound to registry\\.acme\\.example, not ${attackerHost.replace(/\./g, "\\.")}`,
      ),
    );
    expect(seen).toEqual([]);
  });

  it("reads the config's host once the operator binds the secret to it (the listener is reachable)", async () => {
    const io = captureIo(tenantBCheckout(), {
      env: { ...ENV, FERRY_REGISTRY_ACME_HOSTS: `registry.acme.example,${attackerHost}` },
    });
    expect(await runCheck([], io)).toBe(1);
    expect(io.out).toMatch(/unauthorized for globex\/shop/);
    expect(seen.length).toBeGreaterThan(0);
  });
});
