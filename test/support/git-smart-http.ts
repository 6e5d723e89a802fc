/**
 * A loopback git server for remote-base tests: bare repositories under one folder, served by the
 * real `git http-backend` (smart HTTP, so shallow fetches work), with redirects for some paths and
 * a count of every request.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export interface GitServer {
  port: number;
  /** Every request's path and query. */
  hits: string[];
  close(): Promise<void>;
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

/** A bare repository `<root>/<name>.git` with one commit per branch, each holding its files. */
export function makeBareRepo(
  root: string,
  name: string,
  branches: Record<string, Record<string, string>>,
): void {
  const work = mkdtempSync(path.join(tmpdir(), "ferry-git-work-"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", work, ...args], { env: GIT_ENV, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  git("commit", "-q", "--allow-empty", "-m", "root");
  for (const [branch, files] of Object.entries(branches)) {
    git("checkout", "-q", "--orphan", `b-${branch}`);
    git("rm", "-rqf", "--ignore-unmatch", ".");
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
      writeFileSync(path.join(work, file), text);
    }
    git("add", "-A");
    git("commit", "-q", "-m", branch);
    git("branch", "-q", "-f", branch);
  }
  mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
  execFileSync("git", ["clone", "-q", "--bare", work, path.join(root, `${name}.git`)], {
    env: GIT_ENV,
    stdio: "pipe",
  });
}

/** Serves `root` on 127.0.0.1; a request whose path starts with a key of `redirects` is sent there (302). */
export async function serveGit(root: string, redirects: Record<string, string> = {}): Promise<GitServer> {
  const hits: string[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    hits.push(`${url.pathname}${url.search}`);
    for (const [prefix, target] of Object.entries(redirects))
      if (url.pathname.startsWith(prefix))
        return response
          .writeHead(302, { location: `${target}${url.pathname.slice(prefix.length)}${url.search}` })
          .end();
    const cgi = spawn("git", ["http-backend"], {
      env: {
        ...GIT_ENV,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: request.method ?? "GET",
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        ...(request.headers["content-encoding"]
          ? { HTTP_CONTENT_ENCODING: request.headers["content-encoding"] }
          : {}),
        ...(request.headers["git-protocol"]
          ? { GIT_PROTOCOL: request.headers["git-protocol"] as string }
          : {}),
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    request.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let sent = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (sent) return void response.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) return;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString("utf8").split("\r\n")) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else headers[name] = value;
      }
      response.writeHead(status, headers);
      sent = true;
      response.write(head.subarray(end + 4));
    });
    cgi.on("close", () => {
      if (!sent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
