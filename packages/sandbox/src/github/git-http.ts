/**
 * Git smart HTTP (clone, fetch, push) by running `git http-backend` as a CGI, behind
 * GitHub-style token auth (Basic `x-access-token:<token>` or `<login>:<token>`). Pushes are
 * compared ref by ref afterwards so they fire the same events as API writes.
 */
import { actorForToken } from "./emulator-accounts.js";
import { onRefChanged } from "./emulator-pull-effects.js";
import { authorize } from "./emulator-repos.js";
import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import type { GitHubEmulator } from "./emulator.js";
import { ZERO_SHA } from "./git-store.js";
import type { Actor } from "./model.js";
import { ApiError } from "./router.js";

function actorFromBasic(emu: GitHubEmulator, header: string | undefined): Actor | "invalid" {
  if (!header) return { kind: "anonymous" };
  const match = /^(basic|bearer|token)\s+(.+)$/i.exec(header.trim());
  if (!match) return "invalid";
  let token = match[2]!;
  if (match[1]!.toLowerCase() === "basic") {
    const decoded = Buffer.from(token, "base64").toString("utf8");
    token = decoded.slice(decoded.indexOf(":") + 1);
  }
  return actorForToken(emu, token) ?? "invalid";
}

export async function handleGitHttp(
  emu: GitHubEmulator,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  url: URL,
): Promise<void> {
  const match = /^\/([^/]+)\/([^/]+?)\.git(\/.*)$/.exec(pathname);
  const repo = match ? emu.findRepo(match[1]!, match[2]!) : undefined;
  const service =
    url.searchParams.get("service") ??
    (pathname.endsWith("/git-receive-pack")
      ? "git-receive-pack"
      : pathname.endsWith("/git-upload-pack")
        ? "git-upload-pack"
        : undefined);
  const challenge = (): void => {
    res
      .writeHead(401, { "www-authenticate": 'Basic realm="GitHub"', "content-type": "text/plain" })
      .end("Authentication required\n");
  };
  if (!match || !repo || !service || !["git-upload-pack", "git-receive-pack"].includes(service)) {
    res.writeHead(404, { "content-type": "text/plain" }).end("Repository not found.\n");
    return;
  }
  const actor = actorFromBasic(emu, req.headers.authorization);
  if (actor === "invalid") return challenge();
  const writing = service === "git-receive-pack";
  try {
    authorize(emu, actor, repo, "contents", writing ? "write" : "read", writing ? "write" : "read");
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (actor.kind === "anonymous") return challenge();
    res
      .writeHead(error.status === 404 ? 404 : 403, { "content-type": "text/plain" })
      .end(error.status === 404 ? "Repository not found.\n" : "Permission denied\n");
    return;
  }
  const before = writing ? new Map((await repo.git.listRefs("refs/")).map((r) => [r.ref, r.sha])) : undefined;
  const root = join(emu.dataDir, "repos");
  await runBackend(req, res, {
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: "1",
    PATH_INFO: `/${repo.owner}/${repo.name}.git${match[3]}`,
    QUERY_STRING: url.search.replace(/^\?/, ""),
    REQUEST_METHOD: req.method ?? "GET",
    CONTENT_TYPE: req.headers["content-type"] ?? "",
    REMOTE_USER: actor.kind === "user" || actor.kind === "installation" ? actor.login : "anonymous",
    REMOTE_ADDR: "127.0.0.1",
    ...(req.headers["content-encoding"]
      ? { HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"]) }
      : {}),
    ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
  });
  if (before && req.method === "POST") {
    const pusher = actor.kind === "user" || actor.kind === "installation" ? actor.login : repo.owner;
    const after = new Map((await repo.git.listRefs("refs/")).map((r) => [r.ref, r.sha]));
    for (const ref of new Set([...before.keys(), ...after.keys()])) {
      const was = before.get(ref) ?? ZERO_SHA;
      const now = after.get(ref) ?? ZERO_SHA;
      if (was === now) continue;
      const forced = was !== ZERO_SHA && now !== ZERO_SHA && !(await repo.git.isAncestor(was, now));
      await onRefChanged(emu, repo, ref, was, now, pusher, { forced });
    }
  }
  res.end();
}

/** Runs git http-backend and relays its CGI response (headers, then the body as it streams); the caller ends it. */
function runBackend(req: IncomingMessage, res: ServerResponse, cgi: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        HOME: cgi.GIT_PROJECT_ROOT!,
        ...cgi,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let headerBuffer = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      headerBuffer = Buffer.concat([headerBuffer, chunk]);
      const end = headerBuffer.indexOf("\r\n\r\n");
      const endLf = headerBuffer.indexOf("\n\n");
      const split = end !== -1 ? { at: end, len: 4 } : endLf !== -1 ? { at: endLf, len: 2 } : undefined;
      if (!split) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of headerBuffer.subarray(0, split.at).toString("latin1").split(/\r?\n/)) {
        const colon = line.indexOf(":");
        if (colon === -1) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(headerBuffer.subarray(split.at + split.len));
    });
    child.stderr.on("data", () => undefined);
    child.on("error", reject);
    // The caller ends the response, so a push's events are queued before the client sees success.
    child.on("close", () => {
      if (!headersDone) res.writeHead(500);
      resolve();
    });
    child.stdin.on("error", () => undefined);
    req.pipe(child.stdin);
  });
}
