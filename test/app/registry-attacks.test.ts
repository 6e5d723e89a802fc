/**
 * A config repo, a collaborator or a registry trying to steer Ferry's registry client, end to end:
 * the real server (Probot, signed webhooks) against the GitHub emulator, the embedded registry and
 * a loopback listener that stands for an attacker's host.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { serverOptionsFromEnv } from "../../src/server/server-options.js";
import { startWorld, type World } from "../support/app-e2e-world.js";

interface Attacker {
  host: string;
  seen: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** Answers every request with a Basic challenge, as a registry asking for credentials does, and keeps the headers. */
async function startAttacker(): Promise<Attacker> {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(401, {
      "www-authenticate": 'Basic realm="registry"',
      "content-type": "application/json",
    });
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

/** Every credential an Authorization header carried, decoded (Basic) or as sent (Bearer). */
function credentialsSeen(attacker: Attacker): string[] {
  return attacker.seen.flatMap((headers) => {
    const value = headers.authorization;
    if (!value) return [];
    const basic = /^Basic\s+(.+)$/i.exec(value);
    return [basic ? Buffer.from(basic[1]!, "base64").toString("utf8") : value];
  });
}

async function readText(world: World, path: string): Promise<string> {
  const { data } = await world.as.mona.rest.repos.getContent({ owner: "acme", repo: "config", path });
  return Buffer.from((data as { content: string }).content, "base64").toString("utf8");
}

/** mona opens a PR that changes these files; returns its number and head SHA once Ferry has checked it. */
async function proposeFiles(
  world: World,
  files: Record<string, string>,
): Promise<{ number: number; head: string }> {
  const { data: main } = await world.as.mona.rest.git.getRef({
    owner: "acme",
    repo: "config",
    ref: "heads/main",
  });
  await world.as.mona.rest.git.createRef({
    owner: "acme",
    repo: "config",
    ref: "refs/heads/registry-change",
    sha: main.object.sha,
  });
  for (const [path, text] of Object.entries(files)) {
    const { data: current } = await world.as.mona.rest.repos.getContent({
      owner: "acme",
      repo: "config",
      path,
      ref: "registry-change",
    });
    await world.as.mona.rest.repos.createOrUpdateFileContents({
      owner: "acme",
      repo: "config",
      path,
      branch: "registry-change",
      message: `Change ${path}`,
      content: Buffer.from(text).toString("base64"),
      sha: (current as { sha: string }).sha,
    });
  }
  const { data: pull } = await world.as.mona.rest.pulls.create({
    owner: "acme",
    repo: "config",
    title: "Use another registry",
    head: "registry-change",
    base: "main",
  });
  await world.settle();
  return { number: pull.number, head: pull.head.sha };
}

async function configCheck(world: World, ref: string) {
  const { data } = await world.as.mona.rest.checks.listForRef({ owner: "acme", repo: "config", ref });
  const run = data.check_runs.find((candidate) => candidate.name === "ferry/config");
  if (!run) return undefined;
  const { data: annotations } = await world.as.mona.rest.checks.listAnnotations({
    owner: "acme",
    repo: "config",
    check_run_id: run.id,
  });
  return { conclusion: run.conclusion, annotations };
}

describe("registry credentials under attack (end to end)", () => {
  let world: World;
  let attacker: Attacker;
  afterEach(async () => {
    await world.close();
    await attacker.close();
  });

  /**
   * mona proposes an image on the attacker's host, referenced by the staging overlay, with
   * `registry` as its registries entry; Ferry checks the PR; the PR is merged anyway (ferry/config
   * is not a required check here) and Ferry syncs on the push and on a scan.
   */
  async function mergeAttack(registry: string) {
    const attack = (await readText(world, ".github/ferry.yml"))
      .replace("environments:", `  evil:\n    repository: ${attacker.host}/acme/evil\nenvironments:`)
      .concat(`registries:\n  "${attacker.host}": ${registry}\n`);
    const overlay = `${await readText(world, "overlays/staging/kustomization.yaml")}  - name: ${attacker.host}/acme/evil\n    newTag: "1.0.0"\n`;
    const pull = await proposeFiles(world, {
      ".github/ferry.yml": attack,
      "overlays/staging/kustomization.yaml": overlay,
    });
    const pullCheck = await configCheck(world, pull.head);
    await world.as.mona.rest.pulls.merge({
      owner: "acme",
      repo: "config",
      pull_number: pull.number,
      merge_method: "merge",
    });
    await world.settle();
    await world.server.scanNow();
    await world.settle();
    const { data: main } = await world.as.mona.rest.repos.getBranch({
      owner: "acme",
      repo: "config",
      branch: "main",
    });
    const line = attack.split("\n").findIndex((candidate) => candidate.includes(registry)) + 1;
    return { pullCheck, mainCheck: await configCheck(world, main.commit.sha), line };
  }

  it("never sends the installation token to a host a merged config names with auth: github, and fails the ferry/config check of the PR that adds it", async () => {
    world = await startWorld({ ci: true });
    attacker = await startAttacker();
    const { pullCheck, mainCheck, line } = await mergeAttack("{ auth: github }");

    expect(pullCheck?.conclusion).toBe("failure");
    expect(pullCheck?.annotations).toContainEqual(
      expect.objectContaining({
        path: ".github/ferry.yml",
        start_line: line,
        annotation_level: "failure",
        message: expect.stringContaining("auth: github"),
      }),
    );
    expect(credentialsSeen(attacker).filter((credential) => /ghs_|x-access-token/.test(credential))).toEqual(
      [],
    );
    expect(mainCheck?.conclusion).toBe("failure");
  });

  it("never lets a merged config's passwordEnv read a server variable outside the FERRY_REGISTRY_ allowlist", async () => {
    // The server's environment as `ferry serve` reads it: a database URL beside Ferry's own variables.
    const fromEnv = serverOptionsFromEnv({
      APP_ID: "1",
      PRIVATE_KEY: "unused",
      DATABASE_URL: "postgres://ferry:db-canary-secret@db/ferry",
      FERRY_REGISTRY_PASSWORD: "registry-canary-secret",
    });
    world = await startWorld({ ci: true, server: { ferry: fromEnv.ferry! } });
    attacker = await startAttacker();
    const { pullCheck, mainCheck, line } = await mergeAttack("{ username: u, passwordEnv: DATABASE_URL }");

    expect(pullCheck?.conclusion).toBe("failure");
    expect(pullCheck?.annotations).toContainEqual(
      expect.objectContaining({
        start_line: line,
        annotation_level: "failure",
        message: expect.stringContaining("FERRY_REGISTRY_"),
      }),
    );
    expect(credentialsSeen(attacker).filter((credential) => credential.includes("db-canary-secret"))).toEqual(
      [],
    );
    expect(mainCheck?.conclusion).toBe("failure");
  });

  it("fails the ferry/config check of a PR that names a registry at the metadata address in any spelling", async () => {
    world = await startWorld({ ci: true });
    attacker = await startAttacker();
    const config = (await readText(world, ".github/ferry.yml")).replace(
      "environments:",
      `  meta:\n    repository: "[::ffff:169.254.169.254]/latest/meta-data"\nenvironments:`,
    );
    const pull = await proposeFiles(world, { ".github/ferry.yml": config });
    const check = await configCheck(world, pull.head);
    expect(check?.conclusion).toBe("failure");
    const line = config.split("\n").findIndex((candidate) => candidate.includes("169.254")) + 1;
    expect(check?.annotations).toContainEqual(
      expect.objectContaining({ start_line: line, message: expect.stringContaining("link-local") }),
    );
  });
});
