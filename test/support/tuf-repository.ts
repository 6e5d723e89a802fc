import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Metadata, MetaFile, Root, Snapshot, TargetFile, Targets, Timestamp } from "@tufjs/models";
// Its modules, not its index: the index loads nock, which patches node:http for the whole process.
import { tufHandlers } from "@tufjs/repo-mock/dist/handler.js";
import { KeyPair } from "@tufjs/repo-mock/dist/key.js";
import type { Target } from "@tufjs/repo-mock/dist/shared.types.js";

/**
 * A TUF repository (https://theupdateframework.github.io/specification/latest/) served over HTTP
 * on 127.0.0.1, port 0: one key holds every role (as `@tufjs/repo-mock`, whose key pair and request
 * handlers it uses), and each `publish` signs a new version of targets, snapshot and timestamp, as a
 * Sigstore TUF repository does when its trusted_root.json changes. The layout is the one
 * `@sigstore/tuf` reads: metadata at the mirror URL, targets under `/targets`.
 */
export interface TufRepository {
  /** The mirror URL (FERRY_SIGSTORE_TUF_MIRROR). */
  url: string;
  /** Version 1 of root.json, the root a client starts from (FERRY_SIGSTORE_TUF_ROOT). */
  rootPath: string;
  /** Signs and serves a new version holding these targets. */
  publish(targets: Target[]): void;
  /** Serves `content` for a target without changing the signed metadata (a tampered mirror). */
  tamper(name: string, content: string): void;
  /** Publishes a new version whose timestamp.json is correctly signed but expired. */
  publishExpired(targets: Target[]): void;
  /** Publishes a new version whose timestamp.json carries no signature. */
  publishUnsigned(targets: Target[]): void;
  /** Requests served, by path. */
  requests: string[];
  close(): Promise<void>;
}

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;
const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

export async function startTufRepository(targets: Target[]): Promise<TufRepository> {
  const key = new KeyPair();
  const expires = () => new Date(Date.now() + YEAR_MS).toISOString();
  const root = new Metadata(
    new Root({ version: 1, specVersion: "1.0.0", expires: expires(), consistentSnapshot: false }),
  );
  for (const role of ["root", "snapshot", "targets", "timestamp"]) root.signed.addKey(key.publicKey, role);
  root.sign((data) => key.sign(data));
  const dir = mkdtempSync(join(tmpdir(), "ferry-tuf-repo-"));
  const rootPath = join(dir, "root.json");
  writeFileSync(rootPath, JSON.stringify(root.toJSON()));

  let version = 0;
  let routes = new Map<string, () => { statusCode: number; response: string | Buffer }>();
  const metaFile = (metadata: Metadata<Targets | Snapshot>) => {
    const text = JSON.stringify(metadata.toJSON());
    return new MetaFile({
      version: metadata.signed.version,
      length: text.length,
      hashes: { sha256: sha256(text) },
    });
  };
  const build = (files: Target[], timestamp: { expires?: string; unsigned?: boolean } = {}) => {
    version += 1;
    const targetsMeta = new Metadata(new Targets({ version, specVersion: "1.0.0", expires: expires() }));
    for (const file of files)
      targetsMeta.signed.addTarget(
        new TargetFile({
          path: file.name,
          length: file.content.length,
          hashes: { sha256: sha256(file.content) },
        }),
      );
    targetsMeta.sign((data) => key.sign(data));
    const snapshotMeta = new Metadata(
      new Snapshot({
        version,
        specVersion: "1.0.0",
        expires: expires(),
        meta: { "targets.json": metaFile(targetsMeta) },
      }),
    );
    snapshotMeta.sign((data) => key.sign(data));
    const timestampMeta = new Metadata(
      new Timestamp({
        version,
        specVersion: "1.0.0",
        expires: timestamp.expires ?? expires(),
        snapshotMeta: metaFile(snapshotMeta),
      }),
    );
    if (!timestamp.unsigned) timestampMeta.sign((data) => key.sign(data));
    routes = new Map(
      tufHandlers(
        { rootMeta: root, targetsMeta, snapshotMeta, timestampMeta, targets: files },
        { metadataPathPrefix: "", targetPathPrefix: "/targets" },
      ).map((handler) => [handler.path, handler.fn]),
    );
  };
  build(targets);

  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    requests.push(path);
    const answer = routes.get(path)?.() ?? { statusCode: 404, response: "" };
    res.writeHead(answer.statusCode, { "content-type": "application/json" });
    res.end(answer.response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    rootPath,
    publish: (files) => build(files),
    tamper(name, content) {
      routes.set(`/targets/${name}`, () => ({ statusCode: 200, response: content }));
    },
    publishExpired: (files) => build(files, { expires: new Date(Date.now() - YEAR_MS).toISOString() }),
    publishUnsigned: (files) => build(files, { unsigned: true }),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
