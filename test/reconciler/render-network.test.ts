/**
 * The renderer's network, tried the way an attacker with write access to the config repo would:
 * a remote base spelled as kustomize also reads it (`Resources:`, `RESOURCES:`…), a loopback
 * listener behind an allowed prefix, a redirect out of an allowed prefix, git's other transports
 * and config. The real kustomize (kubectl's) renders; the loopback servers count what reaches them.
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { startFilteringProxy } from "../../src/adapters/egress/filtering-proxy.js";
import { renderPath } from "../../src/reconciler/render-folder.js";
import { confinementScript, confinementVariables } from "../../src/reconciler/render-environment.js";
import { configMapYaml, setupPerTest } from "../support/reconciler-harness.js";

const { temp, setup } = setupPerTest();
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A loopback server that answers ConfigMap `name`, or a redirect for the paths in `redirects`. */
async function serve(name: string, redirects: Record<string, string> = {}) {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    hits.push(request.url ?? "");
    const location = redirects[request.url ?? ""];
    if (location) return response.writeHead(302, { location }).end();
    response.writeHead(200, { "content-type": "application/yaml" }).end(configMapYaml(name));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, hits };
}

const SPELLINGS = ["Resources", "RESOURCES", "rEsOuRcEs", "re\u017fources", "Components", "Bases"];

describe("the render network", () => {
  it("refuses a remote base under any spelling of its field, with and without --allow-remote-base for another prefix", async () => {
    const env = await setup();
    const remote = await serve("fetched");
    for (const allowRemoteBases of [[], ["https://github.com/acme/"]])
      for (const field of [...SPELLINGS, "PatchesStrategicMerge", "CRDs"]) {
        env.repo.commit({
          "env/staging/kustomization.yaml": `${field}:\n  - http://127.0.0.1:${remote.port}/remote.yaml\n`,
        });
        const result = await env.reconciler({ render: { allowRemoteBases } }).cycle();
        expect(result.ok, field).toBe(false);
        expect(result.errors.join("\n"), field).toMatch(/is a remote resource; refused/);
      }
    expect(remote.hits).toEqual([]);
    expect(env.sim.get("v1", "ConfigMap", "shop", "fetched")).toBeUndefined();
  });

  it("refuses two spellings of one field, where kustomize would keep one of them", async () => {
    const env = await setup();
    const remote = await serve("fetched");
    env.repo.commit({
      "env/staging/kustomization.yaml": `resources: [keep.yaml]\nResources: ["http://127.0.0.1:${remote.port}/x.yaml"]\n`,
      "env/staging/keep.yaml": configMapYaml("keep"),
    });
    const result = await env.reconciler().cycle();
    expect(result.errors.join("\n")).toMatch(
      /"resources" and "Resources" are the same field to kustomize; refused/,
    );
    expect(remote.hits).toEqual([]);
  });

  it("checks a base reached through a capitalised field before rendering (an alias bomb there is refused)", async () => {
    const env = await setup();
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (const [index, name] of ["b", "c", "d", "e", "f", "g", "h"].entries())
      bomb.push(`${name}: &${name} [${Array(9).fill(`*${"abcdefgh"[index]}`).join(", ")}]`);
    env.repo.commit({
      "env/staging/kustomization.yaml": "Bases: [../../base]\n",
      "base/kustomization.yaml": "resources: [bomb.yaml]\n",
      "base/bomb.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  ${bomb.join("\n  ")}\n`,
    });
    const result = await env.reconciler().cycle();
    expect(result.errors.join("\n")).toMatch(/base\/bomb\.yaml: .*YAML alias.*refused before rendering/);
  });

  it("refuses a remote base named in a generator's configuration file", async () => {
    const env = await setup();
    env.repo.commit({
      "env/staging/kustomization.yaml": "generators: [chart.yaml]\n",
      "env/staging/chart.yaml":
        "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata: {name: x}\nChartRepoURL: http://127.0.0.1:9/charts\n",
    });
    const result = await env.reconciler().cycle();
    expect(result.errors.join("\n")).toMatch(
      /chartRepoUrl "http:\/\/127\.0\.0\.1:9\/charts" is a remote resource; refused/,
    );
  });

  it("follows no redirect out of an allowed prefix: Ferry's fetch goes through the proxy, which checks each request", async () => {
    const root = temp.make("ferry-render-");
    const elsewhere = await serve("elsewhere");
    // `127.1` is not exempt from Go's proxy settings (127.0.0.1 and `localhost` are).
    const allowed = await serve("allowed", {
      "/bases/moved.yaml": `http://127.1:${elsewhere.port}/x.yaml`,
    });
    const base = `http://127.1:${allowed.port}/bases/`;
    mkdirSync(path.join(root, "app"));
    writeFileSync(path.join(root, "app/kustomization.yaml"), `resources:\n  - ${base}moved.yaml\n`);
    await expect(
      renderPath(root, "app", { allowRemoteBases: [base], allowPrivateAddressesForTests: true }),
    ).rejects.toThrow(
      /HTTP 403: refused by Ferry: http:\/\/127\.0\.0\.1:\d+\/x\.yaml is not under an --allow-remote-base prefix/,
    );
    expect(allowed.hits).toContain("/bases/moved.yaml");
    expect(elsewhere.hits).toEqual([]);
  });

  it("gives git only the admitted protocols, Ferry's proxy and no system or user config", async () => {
    const remote = await serve("fetched");
    const home = temp.make("ferry-user-home-");
    writeFileSync(
      path.join(home, ".gitconfig"),
      `[url "http://127.0.0.1:${remote.port}/"]\n\tinsteadOf = https://github.com/\n`,
    );
    const proxy = await startFilteringProxy({ allowedPrefixes: ["https://github.com/acme/"] });
    try {
      // git run as the renderer's wrapper runs it, from an environment with the user's HOME.
      const script = [
        ...confinementScript(
          confinementVariables(proxy.url, temp.make("ferry-home-"), ["https://github.com/acme/"]),
        ),
        'exec git "$@"',
      ].join("\n");
      const run = (...args: string[]) =>
        promisify(execFile)("/bin/sh", ["-c", script, "git", ...args], {
          env: { ...process.env, HOME: home, NO_PROXY: "*", GIT_CONFIG_PARAMETERS: "'http.proxy='" },
          cwd: home,
          timeout: 30_000,
        });
      const git = (...args: string[]) =>
        run(...args).then(
          () => "ok",
          (error: { stderr?: string }) => error.stderr ?? "failed",
        );
      const config = await run("config", "--list", "--show-origin");
      expect(config.stdout.trim()).toBe(`command line:\thttp.proxy=${proxy.url}`);
      for (const url of [
        `http://127.0.0.1:${remote.port}/acme/x.git`,
        `git://127.0.0.1:${remote.port}/acme/x.git`,
        `ssh://git@127.0.0.1:${remote.port}/acme/x.git`,
        `file://${home}`,
        `ext::sh -c touch% ${home}/ran`,
      ])
        expect(await git("ls-remote", url), url).toMatch(/transport '\w+' not allowed|not allowed/);
      // https goes through the proxy, which refuses a host that is not an allowed prefix's.
      expect(await git("ls-remote", `https://127.0.0.1:${remote.port}/acme/x.git`)).toMatch(/403|CONNECT/);
      expect(proxy.refusals().join("\n")).toMatch(/CONNECT 127\.0\.0\.1:\d+: .*not the host/);
    } finally {
      await proxy.close();
    }
    expect(remote.hits).toEqual([]);
  });
});
