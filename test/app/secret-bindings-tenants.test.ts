/**
 * The attacker's route through `ferry serve`: one Ferry serves two installations, acme and globex.
 * The operator holds acme's registry password, bound to acme's registry and to acme. globex's
 * config names that password, for a host of globex's choosing and for acme's own registry. Ferry
 * refuses both lines in the `ferry/config` check and sends nothing to globex's host: a loopback
 * listener that asks for credentials counts every request it gets.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { accounts, repos } from "../../packages/sandbox/src/github/index.js";
import { serverOptionsFromEnv } from "../../src/server/server-options.js";
import { shopOverlay } from "../support/app-fakes.js";
import { startWorld, type World } from "../support/app-e2e-world.js";

const PASSWORD = "acme-registry-password-canary-77e1";

interface Listener {
  host: string;
  seen: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** Answers every request with a Basic challenge, as a registry asking for credentials does. */
async function startListener(): Promise<Listener> {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(401, { "www-authenticate": 'Basic realm="registry"', "content-type": "application/json" });
    res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** globex's config: one image on its own host, one on acme's registry, both with acme's password. */
function globexConfig(own: string, acme: string): string {
  return `images:
  shop:
    repository: ${own}/acme/shop
  theirs:
    repository: ${acme}/acme/shop
environments:
  staging:
    paths: [overlays/staging]
registries:
  "${own}": { username: u, passwordEnv: FERRY_REGISTRY_ACME_PASSWORD }
  "${acme}": { username: u, passwordEnv: FERRY_REGISTRY_ACME_PASSWORD }
`;
}

describe("a secret bound to one installation, named by another's config (ferry serve)", () => {
  let world: World;
  let listener: Listener;
  afterEach(async () => {
    await world.close();
    await listener.close();
  });

  it("refuses the lines in globex's ferry/config check and sends nothing to globex's host", async () => {
    // The operator's environment: acme's password, bound to acme's registry and to acme.
    world = await startWorld({
      ci: true,
      server: (host) => ({
        ferry: serverOptionsFromEnv({
          APP_ID: "1",
          PRIVATE_KEY: "unused",
          FERRY_REGISTRY_ACME_PASSWORD: PASSWORD,
          FERRY_REGISTRY_ACME_PASSWORD_HOSTS: host,
          FERRY_REGISTRY_ACME_PASSWORD_OWNERS: "acme",
        }).ferry!,
      }),
    });
    listener = await startListener();
    const config = globexConfig(listener.host, world.registry.host);
    accounts.createOrg(world.emu, "globex");
    await repos.createRepo(world.emu, "globex", "config", {
      files: {
        ".github/ferry.yml": config,
        "overlays/staging/kustomization.yaml":
          shopOverlay(listener.host, "1.0.0") +
          `  - name: ${world.registry.host}/acme/shop\n    newTag: "1.0.0"\n`,
        "overlays/staging/deployment.yaml": "kind: Deployment\n",
      },
      collaborators: { mona: "maintain" },
    });
    accounts.installApp(world.emu, world.appId, "globex");
    // A push that touches the config (the check of the default branch), then a scan of everything.
    const { data: current } = await world.as.mona.rest.repos.getContent({
      owner: "globex",
      repo: "config",
      path: ".github/ferry.yml",
    });
    const { data: pushed } = await world.as.mona.rest.repos.createOrUpdateFileContents({
      owner: "globex",
      repo: "config",
      path: ".github/ferry.yml",
      branch: "main",
      message: "Read our images",
      content: Buffer.from(`${config}# our registries\n`).toString("base64"),
      sha: (current as { sha: string }).sha,
    });
    await world.settle();
    await world.server.scanNow();
    await world.settle();

    expect(listener.seen).toEqual([]);
    const { data: checks } = await world.as.mona.rest.checks.listForRef({
      owner: "globex",
      repo: "config",
      ref: pushed.commit.sha!,
    });
    const run = checks.check_runs.find((candidate) => candidate.name === "ferry/config");
    expect(run?.conclusion).toBe("failure");
    const { data: annotations } = await world.as.mona.rest.checks.listAnnotations({
      owner: "globex",
      repo: "config",
      check_run_id: run!.id,
    });
    const lines = config.split("\n");
    const lineOf = (host: string) => lines.findIndex((line) => line.startsWith(`  "${host}"`)) + 1;
    const refusal = expect.stringContaining(
      "passwordEnv FERRY_REGISTRY_ACME_PASSWORD is not available to installation globex",
    );
    expect(annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: ".github/ferry.yml",
          start_line: lineOf(listener.host),
          message: refusal,
        }),
        expect.objectContaining({
          path: ".github/ferry.yml",
          start_line: lineOf(world.registry.host),
          message: refusal,
        }),
      ]),
    );
    // Nothing globex can read says where acme's password may go.
    for (const annotation of annotations) expect(annotation.message).not.toContain("is bound to");
  });

  it("refuses globex's auth: dockerconfig and auth: aws, bound to acme, and sends the Docker credentials nowhere", async () => {
    listener = await startListener();
    // The operator's Docker config.json holds a credential for the listener's host; it and the
    // AWS identity are bound to acme only.
    const dir = mkdtempSync(join(tmpdir(), "ferry-tenants-"));
    const dockerConfig = join(dir, "config.json");
    const auth = Buffer.from(`acme:${PASSWORD}`).toString("base64");
    writeFileSync(dockerConfig, JSON.stringify({ auths: { [listener.host]: { auth } } }));
    world = await startWorld({
      ci: true,
      server: (host) => ({
        ferry: serverOptionsFromEnv({
          APP_ID: "1",
          PRIVATE_KEY: "unused",
          FERRY_DOCKER_CONFIG: dockerConfig,
          FERRY_DOCKER_CONFIG_HOSTS: `${host},${listener.host}`,
          FERRY_DOCKER_CONFIG_OWNERS: "acme",
          FERRY_CLOUD_AUTH_AWS_HOSTS: ECR,
          FERRY_CLOUD_AUTH_AWS_OWNERS: "acme",
        }).ferry!,
      }),
    });
    const config = `images:
  shop:
    repository: ${listener.host}/acme/shop
environments:
  staging:
    paths: [overlays/staging]
registries:
  "${listener.host}": { auth: dockerconfig }
  "${ECR}": { auth: aws }
`;
    accounts.createOrg(world.emu, "globex");
    await repos.createRepo(world.emu, "globex", "config", {
      files: {
        ".github/ferry.yml": config,
        "overlays/staging/kustomization.yaml": shopOverlay(listener.host, "1.0.0"),
        "overlays/staging/deployment.yaml": "kind: Deployment\n",
      },
      collaborators: { mona: "maintain" },
    });
    accounts.installApp(world.emu, world.appId, "globex");
    const pushed = await pushConfig(world, `${config}# our registries\n`);
    await world.settle();
    await world.server.scanNow();
    await world.settle();

    expect(listener.seen).toEqual([]);
    const annotations = await configAnnotations(world, pushed);
    const lines = config.split("\n");
    const lineOf = (host: string) => lines.findIndex((line) => line.startsWith(`  "${host}"`)) + 1;
    expect(annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          start_line: lineOf(listener.host),
          message: expect.stringContaining(
            "auth: dockerconfig uses the operator's own credentials: FERRY_DOCKER_CONFIG is not available to installation globex",
          ),
        }),
        expect.objectContaining({
          start_line: lineOf(ECR),
          message: expect.stringContaining(
            "auth: aws uses the operator's own credentials: FERRY_CLOUD_AUTH_AWS is not available to installation globex",
          ),
        }),
      ]),
    );
    for (const annotation of annotations) expect(annotation.message).not.toContain("is bound to");
  });
});

const ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com";

/** Pushes globex's config to main (a push that touches it: the check of the default branch); its commit. */
async function pushConfig(world: World, text: string): Promise<string> {
  const { data: current } = await world.as.mona.rest.repos.getContent({
    owner: "globex",
    repo: "config",
    path: ".github/ferry.yml",
  });
  const { data: pushed } = await world.as.mona.rest.repos.createOrUpdateFileContents({
    owner: "globex",
    repo: "config",
    path: ".github/ferry.yml",
    branch: "main",
    message: "Read our images",
    content: Buffer.from(text).toString("base64"),
    sha: (current as { sha: string }).sha,
  });
  return pushed.commit.sha!;
}

/** The annotations of the failed `ferry/config` check run on `sha`. */
async function configAnnotations(world: World, sha: string) {
  const { data: checks } = await world.as.mona.rest.checks.listForRef({
    owner: "globex",
    repo: "config",
    ref: sha,
  });
  const run = checks.check_runs.find((candidate) => candidate.name === "ferry/config");
  expect(run?.conclusion).toBe("failure");
  const { data: annotations } = await world.as.mona.rest.checks.listAnnotations({
    owner: "globex",
    repo: "config",
    check_run_id: run!.id,
  });
  return annotations;
}
