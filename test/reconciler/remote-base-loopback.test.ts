/**
 * Class: loopback reached through an allowed remote base. Kustomize and helm are Go programs, whose
 * HTTP client never proxies `localhost`, 127.0.0.1 or ::1; content fetched from an allowed
 * `--allow-remote-base` prefix is written by whoever can write there. Tried the attacker's way: an
 * allowed git base (a real `git http-backend` on loopback, standing in for a remote host through
 * the test-only `allowPrivateAddressesForTests`) whose kustomization names the pod's loopback in
 * every form kustomize fetches, a nested allowed base that does, and redirects from the allowed
 * prefix. A loopback listener counts every connection: it must see none, and the allowed base
 * must still render.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderPath } from "../../src/reconciler/render-folder.js";
import { makeBareRepo, serveGit, type GitServer } from "../support/git-smart-http.js";
import { configMapYaml, setupPerTest } from "../support/reconciler-harness.js";

const { temp, setup } = setupPerTest();

interface Trap {
  port: number;
  connections: () => number;
  close(): Promise<void>;
}

/** A listener on 127.0.0.1 (and ::1 where there is one) that answers a ConfigMap and counts connections. */
async function startTrap(): Promise<Trap> {
  let connections = 0;
  const servers: Server[] = [];
  const listen = (host: string, port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = createServer((_request, response) =>
        response.writeHead(200, { "content-type": "application/yaml" }).end(configMapYaml("trapped")),
      );
      server.on("connection", () => connections++);
      server.once("error", reject);
      server.listen(port, host, () => {
        servers.push(server);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen("127.0.0.1", 0);
  await listen("::1", port).catch(() => undefined);
  return {
    port,
    connections: () => connections,
    close: async () => {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

let trap: Trap;
let repos: string;
let git: GitServer;
/** The allowed prefix: `127.1` is loopback too, but not one Go exempts from a proxy. */
let allowed: string;

/** What an attacker who can write to the allowed base puts in its kustomization, one branch each. */
const ATTACKS = (loop: string): Record<string, string> => ({
  file: `resources: [ok.yaml, "http://127.0.0.1:${loop}/x.yaml"]\n`,
  localhost: `Resources: ["http://localhost:${loop}/x.yaml"]\n`,
  v6: `resources: ["http://[::1]:${loop}/x.yaml"]\n`,
  gitForced: `resources: ["git::http://127.0.0.1:${loop}/r.git//x?ref=main"]\n`,
  hostPath: `resources: ["127.0.0.1:${loop}/owner/repo//x?ref=main"]\n`,
  https: `resources: ["https://127.0.0.1:${loop}/owner/repo.git"]\n`,
  ssh: `resources: ["ssh://git@127.0.0.1:${loop}/r.git"]\n`,
  scp: `resources: ["git@127.0.0.1:owner/r.git"]\n`,
  fileUrl: `resources: ["file:///etc/"]\n`,
  patch: `resources: [ok.yaml]\npatchesStrategicMerge: ["http://127.0.0.1:${loop}/p.yaml"]\n`,
  generator: `configMapGenerator:\n  - name: g\n    files: ["k=http://localhost:${loop}/f"]\n`,
  helm: `helmCharts:\n  - name: x\n    repo: http://127.0.0.1:${loop}/charts\n    version: 1.0.0\n`,
  component: `COMPONENTS: ["http://127.0.0.1:${loop}/c.yaml"]\n`,
  nested: `resources: ["ALLOWEDinner.git//app?ref=file"]\n`,
  // Under the allowed prefix, but not something Ferry fetches: kustomize would, so it is refused.
  allowedChart: `helmCharts:\n  - name: x\n    repo: ALLOWEDcharts\n    version: 1.0.0\n`,
  allowedInGenerator: `generators: [gen.yaml]\n`,
});

beforeAll(async () => {
  trap = await startTrap();
  // Not a per-test folder: the repositories serve every test.
  repos = mkdtempSync(path.join(tmpdir(), "ferry-remote-repos-"));
  const loop = String(trap.port);
  const branches = (kustomization: (name: string) => string) =>
    Object.fromEntries(
      Object.keys(ATTACKS(loop)).map((name) => [
        name,
        {
          "app/kustomization.yaml": kustomization(name),
          "app/ok.yaml": configMapYaml("from-base"),
          "app/gen.yaml":
            `apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: g}\nfiles: ["ALLOWEDx.yaml"]\n`.replace(
              "ALLOWED",
              allowed,
            ),
        },
      ]),
    );
  // git serves first, so that the allowed prefix (its port) can be written into the repositories.
  git = await serveGit(repos, { "/acme/moved.git": `http://127.0.0.1:${loop}/moved.git` });
  allowed = `http://127.1:${git.port}/acme/`;
  const attacks = ATTACKS(loop);
  makeBareRepo(repos, "acme/base", {
    ...branches((name) => attacks[name]!.replace("ALLOWED", allowed)),
    good: { "app/kustomization.yaml": "resources: [ok.yaml]\n", "app/ok.yaml": configMapYaml("from-base") },
    goodNested: {
      "app/kustomization.yaml": `resources: ["${allowed}inner.git//app?ref=good"]\n`,
    },
  });
  makeBareRepo(repos, "acme/inner", {
    file: { "app/kustomization.yaml": attacks.file! },
    good: { "app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": configMapYaml("from-inner") },
  });
  makeBareRepo(repos, "acme/moved", { main: { "app/kustomization.yaml": "resources: []\n" } });
});

afterAll(async () => {
  await trap?.close();
  await git?.close();
  rmSync(repos, { recursive: true, force: true });
});

/** A config repo whose app kustomization names `reference`, rendered with the allowed prefix. */
async function render(reference: string) {
  const root = temp.make("ferry-config-");
  mkdirSync(path.join(root, "app"));
  writeFileSync(path.join(root, "app/kustomization.yaml"), `resources:\n  - ${JSON.stringify(reference)}\n`);
  return renderPath(root, "app", { allowRemoteBases: [allowed], allowPrivateAddressesForTests: true });
}

describe("loopback through an allowed remote base", () => {
  it("renders an allowed git base, and one nested in it, fetched by Ferry", async () => {
    const objects = await render(`${allowed}base.git//app?ref=good`);
    expect(objects.map((object) => object.object.metadata?.name)).toEqual(["from-base"]);
    const nested = await render(`${allowed}base.git//app?ref=goodNested`);
    expect(nested.map((object) => object.object.metadata?.name)).toEqual(["from-inner"]);
    expect(git.hits.some((hit) => hit.startsWith("/acme/base.git/"))).toBe(true);
  });

  it.each(Object.keys(ATTACKS("0")))(
    "refuses what the base names (%s) before kustomize runs: the loopback listener sees nothing",
    async (branch) => {
      await expect(render(`${allowed}base.git//app?ref=${branch}`)).rejects.toThrow(/ is a remote resource/);
      expect(trap.connections()).toBe(0);
    },
  );

  it("follows no redirect from the allowed prefix to loopback, for a git base or a file", async () => {
    await expect(render(`${allowed}moved.git//app?ref=main`)).rejects.toThrow(
      /git fetch failed: .*; the proxy refused GET http:\/\/127\.0\.0\.1:\d+\/moved\.git\/.* is not under an --allow-remote-base prefix/,
    );
    await expect(render(`${allowed}moved.git-file/x.yaml`)).rejects.toThrow(
      /HTTP 403: refused by Ferry: http:\/\/127\.0\.0\.1:\d+\/moved\.git-file\/x\.yaml is not under an --allow-remote-base prefix/,
    );
    expect(trap.connections()).toBe(0);
  });

  it("refuses the same attack through a reconcile cycle, and applies nothing from it", async () => {
    const env = await setup();
    env.repo.commit({
      "env/staging/kustomization.yaml": `resources: ["${allowed}base.git//app?ref=file"]\n`,
    });
    const render = { allowRemoteBases: [allowed], allowPrivateAddressesForTests: true };
    const refused = await env.reconciler({ render }).cycle();
    expect(refused.ok).toBe(false);
    expect(trap.connections()).toBe(0);
    expect(env.sim.get("v1", "ConfigMap", "shop", "trapped")).toBeUndefined();
    env.repo.commit({
      "env/staging/kustomization.yaml": `resources: ["${allowed}base.git//app?ref=good"]\n`,
    });
    const applied = await env.reconciler({ render }).cycle();
    expect(applied.errors).toEqual([]);
    expect(env.sim.get("v1", "ConfigMap", "shop", "from-base")).toBeDefined();
  });
});
