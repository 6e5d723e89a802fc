/**
 * What the config repo can make the renderer do, tried through the reconciler on the cluster
 * simulator: an alias bomb, a renderer past its memory or time limit, a remote resource, a base
 * outside the repo. Each fails the cycle cleanly with nothing pruned.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli.js";
import type { DeploymentReport } from "../../src/reconciler/ports.js";
import { findRenderer } from "../../src/adapters/render/render-tools.js";
import {
  configMapYaml,
  reconcileIo,
  type Setup,
  setupPerTest,
  writesOf,
} from "../support/reconciler-harness.js";

const { temp, setup } = setupPerTest();
let env: Setup | undefined;
let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/**
 * A ~300-byte ConfigMap whose nested aliases expand to 9^9 (387 million) strings: what made
 * `kubectl kustomize` use over 4.9 GB.
 */
function aliasBomb(): string {
  const levels = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
  const lines = [`  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`];
  for (let index = 1; index < levels.length; index++) {
    const previous = `*${levels[index - 1]}`;
    lines.push(`  ${levels[index]}: &${levels[index]} [${Array(9).fill(previous).join(",")}]`);
  }
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n${lines.join("\n")}\n`;
}

/**
 * A renderer script that leaves a mark when it runs, then does `body`. Spawned as `kubectl`, so
 * the reconciler calls it with `kustomize DIR` arguments.
 */
function renderer(body: string): { command: string; ran: () => boolean } {
  const dir = temp.make("ferry-renderer-");
  const marker = path.join(dir, "ran");
  const command = path.join(dir, "kubectl");
  writeFileSync(command, `#!/bin/sh\ntouch '${marker}'\n${body}\n`);
  chmodSync(command, 0o755);
  return { command, ran: () => existsSync(marker) };
}

/**
 * The installed renderer behind a mark and a 1 GiB memory (data) cap, so a bomb cannot take the
 * machine even when the reconciler under test sets no limit of its own.
 */
function spiedKubectl() {
  const installed = findRenderer(process.env.PATH);
  if (!installed) throw new Error("these tests need kubectl or kustomize on PATH");
  const run =
    installed.name === "kustomize build"
      ? `shift\nexec '${installed.command}' build "$@"`
      : `exec '${installed.command}' "$@"`;
  return renderer(`ulimit -d 1048576\n${run}`);
}

function kustomization(...resources: string[]): string {
  return `resources:\n${resources.map((resource) => `  - ${resource}`).join("\n")}\n`;
}

/** A first commit the reconciler applies: ConfigMaps keep and drop (drop leaves Git next). */
async function appliedBaseline(current: Setup): Promise<void> {
  current.repo.commit({
    "env/staging/kustomization.yaml": kustomization("keep.yaml", "drop.yaml"),
    "env/staging/keep.yaml": configMapYaml("keep"),
    "env/staging/drop.yaml": configMapYaml("drop"),
  });
  const first = await current.reconciler().cycle();
  expect(first.errors).toEqual([]);
  expect(current.sim.get("v1", "ConfigMap", "shop", "drop")).toBeDefined();
}

function deletesOf(current: Setup) {
  return writesOf(current.sim.requests()).filter((request) => request.verb === "delete");
}

describe("the reconciler's render safeguards", () => {
  it("refuses a kustomization with a YAML alias bomb before running kustomize, and prunes nothing", async () => {
    env = await setup();
    await appliedBaseline(env);
    env.repo.commit({
      "env/staging/kustomization.yaml": kustomization("keep.yaml", "bomb.yaml"),
      "env/staging/bomb.yaml": aliasBomb(),
      "env/staging/drop.yaml": null,
    });
    const spy = spiedKubectl();
    const reports: DeploymentReport[] = [];
    const reconciler = env.reconciler(
      { render: { kubectl: spy.command } },
      { reporter: { report: async (report) => void reports.push(report) } },
    );
    const writesBefore = writesOf(env.sim.requests()).length;
    const result = await reconciler.cycle();
    expect(result.ok).toBe(false);
    expect(result.phase).toBe("render");
    expect(result.errors.join("\n")).toMatch(
      /env\/staging\/bomb\.yaml: .*YAML alias.*refused before rendering/,
    );
    expect(spy.ran()).toBe(false);
    expect(writesOf(env.sim.requests()).length).toBe(writesBefore);
    expect(env.sim.get("v1", "ConfigMap", "shop", "drop")).toBeDefined();
    expect(reports.at(-1)).toMatchObject({ state: "failure", description: expect.stringMatching(/alias/) });
  });

  it("refuses an alias bomb in a base outside the rendered folder, reached through resources", async () => {
    env = await setup();
    env.repo.commit({
      "env/base/kustomization.yaml": kustomization("bomb.yaml"),
      "env/base/bomb.yaml": aliasBomb(),
      "env/staging/kustomization.yaml": kustomization("../base"),
    });
    const spy = spiedKubectl();
    const result = await env.reconciler({ render: { kubectl: spy.command } }).cycle();
    expect(result.errors.join("\n")).toMatch(/env\/base\/bomb\.yaml: .*YAML alias/);
    expect(spy.ran()).toBe(false);
    expect(writesOf(env.sim.requests())).toEqual([]);
  });

  it("refuses a kustomization file that is itself an alias bomb", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/kustomization.yaml": `${kustomization("keep.yaml")}${aliasBomb().replace(/^[\s\S]*?data:\n/, "x-bomb:\n")}`,
      "env/staging/keep.yaml": configMapYaml("keep"),
    });
    const spy = spiedKubectl();
    const result = await env.reconciler({ render: { kubectl: spy.command } }).cycle();
    expect(result.errors.join("\n")).toMatch(/kustomization\.yaml: .*YAML alias/);
    expect(spy.ran()).toBe(false);
    expect(writesOf(env.sim.requests())).toEqual([]);
  });

  it("refuses a file over the per-file size limit before rendering", async () => {
    env = await setup();
    await appliedBaseline(env);
    env.repo.commit({
      "env/staging/kustomization.yaml": kustomization("keep.yaml", "big.yaml"),
      "env/staging/big.yaml": configMapYaml("big", { blob: "x".repeat(64 * 1024) }),
      "env/staging/drop.yaml": null,
    });
    const spy = spiedKubectl();
    const result = await env
      .reconciler({ render: { kubectl: spy.command, inputLimits: { maxFileBytes: 32 * 1024 } } })
      .cycle();
    expect(result.errors.join("\n")).toMatch(/big\.yaml: \d+ bytes \(limit 32768 per file\)/);
    expect(spy.ran()).toBe(false);
    expect(deletesOf(env)).toEqual([]);
  });

  it("kills a renderer that runs past its memory limit, reports it, and prunes nothing", async () => {
    env = await setup();
    await appliedBaseline(env);
    env.repo.commit({
      "env/staging/kustomization.yaml": kustomization("keep.yaml"),
      "env/staging/drop.yaml": null,
    });
    // Builds a 128 MiB string, then prints a ConfigMap: fine without a limit, fatal under 64 MiB.
    const hog = renderer(
      `exec awk 'BEGIN { s = "x"; for (i = 0; i < 27; i++) s = s s; printf "apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: hog\\n" }'`,
    );
    const reports: DeploymentReport[] = [];
    const result = await env
      .reconciler(
        { render: { kubectl: hog.command, memoryLimitBytes: 64 * 1024 * 1024 } },
        { reporter: { report: async (report) => void reports.push(report) } },
      )
      .cycle();
    expect(hog.ran()).toBe(true);
    expect(result.phase).toBe("render");
    expect(result.errors).toEqual([expect.stringMatching(/ran out of its 64 MiB memory limit/)]);
    expect(deletesOf(env)).toEqual([]);
    expect(env.sim.get("v1", "ConfigMap", "shop", "hog")).toBeUndefined();
    expect(env.sim.get("v1", "ConfigMap", "shop", "drop")).toBeDefined();
    expect(reports.at(-1)).toMatchObject({
      state: "failure",
      description: expect.stringMatching(/memory limit/),
    });
  });

  it("kills a renderer that runs past its time limit", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/kustomization.yaml": kustomization("keep.yaml"),
      "env/staging/keep.yaml": configMapYaml("keep"),
    });
    const slow = renderer("exec sleep 60");
    const result = await env
      .reconciler({ render: { kubectl: slow.command, kustomizeTimeoutMs: 300 } })
      .cycle();
    expect(result.errors).toEqual([expect.stringMatching(/kustomize build timed out after 300 ms/)]);
  });

  it("refuses a remote resource by default: kustomize never fetches it and nothing is applied", async () => {
    env = await setup();
    const remote = await serveConfigMap("fetched");
    await appliedBaseline(env);
    env.repo.commit({
      "env/staging/kustomization.yaml": kustomization("keep.yaml", `${remote.url}/remote.yaml`),
      "env/staging/drop.yaml": null,
    });
    const spy = spiedKubectl();
    const result = await env.reconciler({ render: { kubectl: spy.command } }).cycle();
    expect(result.errors.join("\n")).toMatch(
      /kustomization\.yaml: resources ".*remote\.yaml" is a remote resource; refused .*--allow-remote-base/,
    );
    expect(spy.ran()).toBe(false);
    expect(remote.hits()).toBe(0);
    expect(env.sim.get("v1", "ConfigMap", "shop", "fetched")).toBeUndefined();
    expect(deletesOf(env)).toEqual([]);
  });

  it("refuses remote bases in the forms kustomize fetches (git URLs, ?ref=, host paths, file://)", async () => {
    env = await setup();
    const spy = spiedKubectl();
    for (const reference of [
      "https://github.com/acme/bases//shop?ref=v1",
      "github.com/acme/bases/shop",
      "git@github.com:acme/bases.git",
      "ssh://git@github.com/acme/bases",
      "file:///etc/kubernetes",
    ]) {
      env.repo.commit({ "env/staging/kustomization.yaml": `components:\n  - ${reference}\n` });
      const result = await env.reconciler({ render: { kubectl: spy.command } }).cycle();
      expect(result.errors.join("\n")).toContain(`components "${reference}" is a remote resource; refused`);
    }
    expect(spy.ran()).toBe(false);
  });

  it("fetches a remote resource allowed with --allow-remote-base, never from a loopback address", async () => {
    env = await setup();
    const remote = await serveConfigMap("fetched");
    env.repo.commit({
      "env/staging/kustomization.yaml": kustomization("keep.yaml", `${remote.url}/remote.yaml`),
      "env/staging/keep.yaml": configMapYaml("keep"),
    });
    const io = reconcileIo(env.repo.dir);
    const kubeconfig = path.join(temp.make(), "kubeconfig");
    await env.sim.writeKubeconfig(kubeconfig);
    const args = ["reconcile", "--repo", env.repo.dir, "--path", "env/staging", "--namespace", "shop"];
    const rest = ["--once", "--kubeconfig", kubeconfig, "--work-dir", temp.make()];
    expect(await main([...args, ...rest], io)).toBe(1);
    expect(io.err).toMatch(/is a remote resource; refused/);
    // Allowed by prefix, but 127.0.0.1 is loopback: the address guard refuses it before rendering.
    expect(await main([...args, "--allow-remote-base", `${remote.url}/`, ...rest], io)).toBe(1);
    expect(io.err).toMatch(
      /remote\.yaml": 127\.0\.0\.1 is a private or loopback address; refused before rendering/,
    );
    expect(remote.hits()).toBe(0);
    // A test-only switch stands a loopback server in for a remote base.
    const result = await env
      .reconciler({ render: { allowRemoteBases: [`${remote.url}/`], allowPrivateAddressesForTests: true } })
      .cycle();
    expect(result.errors).toEqual([]);
    expect(remote.hits()).toBe(1);
    expect(env.sim.get("v1", "ConfigMap", "shop", "fetched")).toBeDefined();
  });

  it("refuses a base outside the config repo", async () => {
    env = await setup();
    const outside = temp.make("ferry-outside-");
    writeFileSync(path.join(outside, "kustomization.yaml"), kustomization("secret.yaml"));
    writeFileSync(path.join(outside, "secret.yaml"), configMapYaml("outside"));
    mkdirSync(path.join(env.repo.dir, "env/staging"), { recursive: true });
    env.repo.commit({ "env/staging/kustomization.yaml": kustomization(outside) });
    const spy = spiedKubectl();
    const result = await env.reconciler({ render: { kubectl: spy.command } }).cycle();
    expect(result.errors.join("\n")).toMatch(/leaves the config repo/);
    expect(spy.ran()).toBe(false);
    expect(env.sim.get("v1", "ConfigMap", "shop", "outside")).toBeUndefined();
  });
});

async function serveConfigMap(name: string): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  server = createServer((request, response) => {
    hits++;
    response.writeHead(200, { "content-type": "application/yaml" });
    response.end(configMapYaml(name));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits: () => hits };
}
