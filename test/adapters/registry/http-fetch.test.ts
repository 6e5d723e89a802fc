import { spawn } from "node:child_process";
import { lookup as dnsLookup } from "node:dns";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import type { FetchAnswer, FetchInit } from "../../../src/adapters/registry/fetch-types.js";
import { httpFetch } from "../../../src/adapters/registry/http-fetch.js";

/** The body read as the registry client reads it: through its reader, chunk by chunk. */
async function text(answer: FetchAnswer): Promise<string> {
  const reader = answer.body!.getReader();
  const chunks: Uint8Array[] = [];
  for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
  return Buffer.concat(chunks).toString("utf8");
}

/** The registry client's fetch over node:http (docs/security.md, "the address guard"). */
describe("httpFetch", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function listen(
    handler: (request: IncomingMessage, response: ServerResponse) => void,
  ): Promise<{ origin: string; port: number; connections: () => number }> {
    let connections = 0;
    const server = createServer(handler);
    server.on("connection", () => connections++);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return { origin: `http://127.0.0.1:${port}`, port, connections: () => connections };
  }

  const open = (refuse: (host: string) => Error | undefined = () => undefined, lookup?: LookupFunction) =>
    httpFetch({ lookup: lookup ?? (dnsLookup as unknown as LookupFunction), refuse });

  it("answers with status, every header and the body, and reuses one connection", async () => {
    const server = await listen((request, response) => {
      response.setHeader("set-cookie", ["a=1", "b=2"]);
      response.setHeader("docker-content-digest", "sha256:abc");
      response.end(`${request.method} ${request.url} ${request.headers.accept}`);
    });
    const fetch = open();
    for (const path of ["/v2/", "/v2/app/tags/list?n=10"]) {
      const response = await fetch(`${server.origin}${path}`, { headers: { accept: "application/json" } });
      expect(response.status).toBe(200);
      expect(response.headers.get("docker-content-digest")).toBe("sha256:abc");
      expect(response.headers.get("Set-Cookie")).toBe("a=1, b=2");
      expect(await text(response)).toBe(`GET ${path} application/json`);
    }
    expect(server.connections()).toBe(1);
  });

  it("sends a string body with its length, and never follows a redirect", async () => {
    const server = await listen((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      request.on("end", () =>
        response
          .writeHead(307, { location: "/elsewhere", "x-got": `${request.headers["content-length"]}:${body}` })
          .end(),
      );
    });
    const response = await open()(`${server.origin}/oauth2/exchange`, {
      method: "POST",
      body: "grant_type=x&é",
      redirect: "manual",
    });
    expect(response.status).toBe(307);
    expect(response.headers.get("location")).toBe("/elsewhere");
    expect(response.headers.get("x-got")).toBe(`${Buffer.byteLength("grant_type=x&é")}:grant_type=x&é`);
    await expect(open()(`${server.origin}/`, { redirect: "follow" } as unknown as FetchInit)).rejects.toThrow(
      /redirect "follow"/,
    );
  });

  it("hands a compressed body on decompressed, and HEAD and 204 answers without a body", async () => {
    const server = await listen((request, response) => {
      if (request.url === "/gzip")
        return response.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync("{}"));
      if (request.url === "/none") return response.writeHead(204).end();
      response.writeHead(200, { "content-length": "5" }).end(request.method === "HEAD" ? undefined : "hello");
    });
    const fetch = open();
    expect(await text(await fetch(`${server.origin}/gzip`))).toBe("{}");
    const head = await fetch(`${server.origin}/`, { method: "HEAD" });
    expect([head.status, head.body, head.headers.get("content-length")]).toEqual([200, null, "5"]);
    const none = await fetch(`${server.origin}/none`);
    expect([none.status, none.body]).toEqual([204, null]);
  });

  it("ends with the signal's reason, before the headers and in the middle of the body", async () => {
    const server = await listen((request, response) => {
      if (request.url === "/slow-body") {
        response.writeHead(200);
        response.write("part");
      }
      // Otherwise never answers.
    });
    const fetch = open();
    const beforeHeaders = await fetch(`${server.origin}/hang`, { signal: AbortSignal.timeout(200) }).catch(
      (error: Error) => error,
    );
    expect((beforeHeaders as Error).name).toBe("TimeoutError");
    // Aborted once the first part has arrived, as a deadline would, however slow the machine.
    const controller = new AbortController();
    const response = await fetch(`${server.origin}/slow-body`, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("part");
    controller.abort(new DOMException("The operation timed out.", "TimeoutError"));
    const midBody = await reader.read().catch((error: Error) => error);
    expect((midBody as Error).name).toBe("TimeoutError");
  });

  it("drops the rest of a body on cancel, closing its connection, and rejects a read when the connection breaks", async () => {
    let closed = 0;
    const waiting: (() => void)[] = [];
    /** Until `count` connections have closed (the test's own deadline bounds the wait). */
    const closes = async (count: number) => {
      while (closed < count) await new Promise<void>((resolve) => waiting.push(resolve));
    };
    const server = await listen((request, response) => {
      request.socket.on("close", () => {
        closed++;
        for (const wake of waiting.splice(0)) wake();
      });
      response.writeHead(200);
      response.write("first");
      // A body that never ends, or one cut off by the server mid-way.
      if (request.url === "/cut") setImmediate(() => request.socket.destroy());
    });
    const fetch = open();
    const endless = await fetch(`${server.origin}/endless`);
    const reader = endless.body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("first");
    await reader.cancel();
    await closes(1);
    const cut = await fetch(`${server.origin}/cut`);
    const cutReader = cut.body!.getReader();
    const reads: unknown[] = [];
    try {
      for (let next = await cutReader.read(); !next.done; next = await cutReader.read())
        reads.push(next.value);
      reads.push("ended without an error");
    } catch (error) {
      reads.push((error as Error).message);
    }
    expect(reads.at(-1)).toBe("aborted");
    // A body dropped before it was read (the size cap refusing a Content-Length).
    const unread = await fetch(`${server.origin}/endless`);
    await unread.body!.cancel();
    await closes(3);
    expect(closed).toBe(3);
  });

  it("asks `refuse` before every request and `lookup` for every name: a refusal connects nowhere", async () => {
    const server = await listen((_request, response) => response.end("ok"));
    const asked: string[] = [];
    const refusal = new Error("refused by the guard");
    const refusing = open((host) => (asked.push(host), host === "127.0.0.1" ? refusal : undefined));
    const failed = (await refusing(`${server.origin}/`).catch((error: Error) => error)) as Error & {
      cause: unknown;
    };
    expect([failed.name, failed.message, failed.cause]).toEqual(["TypeError", "fetch failed", refusal]);
    expect(server.connections()).toBe(0);

    const names: string[] = [];
    const lookupError = Object.assign(new Error("resolves to a link-local address"), { code: "EREFUSED" });
    const guarded = open((host) => (asked.push(host), undefined), ((
      hostname: string,
      _options: unknown,
      callback: (error: Error) => void,
    ) => {
      names.push(hostname);
      callback(lookupError);
    }) as unknown as LookupFunction);
    const viaName = (await guarded(`http://registry.test:${server.port}/`).catch(
      (error: Error) => error,
    )) as Error & {
      cause: unknown;
    };
    expect(viaName.cause).toBe(lookupError);
    expect(names).toEqual(["registry.test"]);
    expect(asked).toEqual(["127.0.0.1", "registry.test"]);
    expect(server.connections()).toBe(0);
    await expect(open()("file:///etc/passwd")).rejects.toThrow(/file: is not http or https/);
  });

  it("lets a command exit as soon as its work is done: idle keep-alive connections hold nothing open", async () => {
    const server = await listen((_request, response) => response.end("ok"));
    const script = [
      `import { httpFetch } from ${JSON.stringify(join(import.meta.dirname, "../../../src/adapters/registry/http-fetch.ts"))};`,
      `import { lookup } from "node:dns";`,
      `const response = await httpFetch({ lookup, refuse: () => undefined })(${JSON.stringify(server.origin)});`,
      `const reader = response.body.getReader();`,
      `let body = "";`,
      `for (let next = await reader.read(); !next.done; next = await reader.read()) body += Buffer.from(next.value);`,
      `console.log(body);`,
    ].join("\n");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    // The server keeps the connection open (keep-alive): only the client's unref'd socket lets it exit.
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect([code, output.trim()]).toEqual([0, "ok"]);
    expect(server.connections()).toBe(1);
  });
});
