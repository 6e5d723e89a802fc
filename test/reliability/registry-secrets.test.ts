/**
 * A registry that answers with the Authorization header it refused, echoed in its error body (as
 * a misconfigured proxy or a hostile registry does): no form of the installation token may reach
 * a comment, a check run, an issue, a commit, a log line or `/status` (row 25, G10).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { CanaryWatch } from "../support/canary.js";
import { startAppWorld, type AppWorld } from "../support/reliability-app-world.js";

interface EchoRegistry {
  host: string;
  authorizations: string[];
  close(): Promise<void>;
}

/** 401 with a Basic challenge, then 403 DENIED whose message repeats the credentials it was sent. */
async function startEchoRegistry(): Promise<EchoRegistry> {
  const authorizations: string[] = [];
  const server: Server = createServer((req, res) => {
    const authorization = req.headers.authorization;
    if (!authorization) {
      res.writeHead(401, { "www-authenticate": 'Basic realm="echo"', "content-type": "application/json" });
      res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] }));
      return;
    }
    authorizations.push(authorization);
    res.writeHead(403, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        errors: [{ code: "DENIED", message: `credentials refused: ${authorization}`, detail: authorization }],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function commit(world: AppWorld, path: string, text: (current: string) => string): Promise<void> {
  const { data } = await world.mona.rest.repos.getContent({ owner: "acme", repo: "config", path });
  const file = data as { content: string; sha: string };
  await world.mona.rest.repos.createOrUpdateFileContents({
    owner: "acme",
    repo: "config",
    path,
    message: `Change ${path}`,
    content: Buffer.from(text(Buffer.from(file.content, "base64").toString("utf8"))).toString("base64"),
    sha: file.sha,
  });
}

describe("registry errors that echo credentials (row 25)", () => {
  let world: AppWorld | undefined;
  let echo: EchoRegistry | undefined;
  afterEach(async () => {
    await world?.close();
    await echo?.close();
  });

  it("keeps every form of the installation token out of the command reply, check runs, logs and /status when GHCR echoes it back", async () => {
    const canary = new CanaryWatch();
    echo = await startEchoRegistry();
    // The echo registry stands for this GitHub's container registry, the one host auth: github may name.
    const ghcr = echo.host;
    world = await startAppWorld(canary, { githubContainerRegistry: ghcr });
    await commit(
      world,
      "overlays/staging/kustomization.yaml",
      (text) => `${text}  - name: ${ghcr}/acme/app\n    newTag: "1.0.0"\n`,
    );
    await commit(world, ".github/ferry.yml", (text) =>
      text
        .replace("environments:", `  app:\n    repository: ${ghcr}/acme/app\nenvironments:`)
        .replace("registries:\n", `registries:\n  "${ghcr}": { auth: github }\n`),
    );
    await world.settle();
    const { data: issue } = await world.mona.rest.issues.create({
      owner: "acme",
      repo: "config",
      title: "Release",
    });
    await world.mona.rest.issues.createComment({
      owner: "acme",
      repo: "config",
      issue_number: issue.number,
      body: "/promote staging",
    });
    await world.settle();
    const status = await fetch(`${world.server.url}/status`);
    canary.scan("GET /status", await status.text());

    // The attack happened: the token was sent to the registry and Ferry answered the command.
    expect(echo.authorizations.length).toBeGreaterThan(0);
    const { data: comments } = await world.mona.rest.issues.listComments({
      owner: "acme",
      repo: "config",
      issue_number: issue.number,
    });
    expect(comments.map((comment) => comment.body)).toContainEqual(expect.stringMatching(/HTTP 403/));

    for (const token of world.emu.installationTokens.keys())
      canary.plantBasic("x-access-token", token, "installation token");
    await world.scanEverything();
    expect(canary.hits).toEqual([]);
  });
});
