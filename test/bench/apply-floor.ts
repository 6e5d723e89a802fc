/**
 * The floor under the reconciler's converge figure on kube-apiserver: the same objects, each one
 * server-side apply and nothing else (no dry-run, no discovery, no inventory), at concurrency 8
 * over one HTTP/2 connection with the admin's token. What Ferry takes beyond this is its own work.
 */
import { connect, constants } from "node:http2";
import { performance } from "node:perf_hooks";
import { parseAllDocuments } from "yaml";
import type { ControlPlaneInfo } from "../cluster/control-plane.js";

const CONCURRENCY = 8;

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
}

function pathOf(object: Manifest, namespace: string): string {
  const base = object.apiVersion.includes("/") ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
  const plural = `${object.kind.toLowerCase()}s`;
  return `${base}/namespaces/${namespace}/${plural}/${object.metadata.name}?fieldManager=floor&force=true`;
}

/** Applies every object of `yaml` into `namespace` (which must exist); the elapsed milliseconds. */
export async function applyFloorMs(info: ControlPlaneInfo, yaml: string, namespace: string): Promise<number> {
  const objects = parseAllDocuments(yaml).map((document) => document.toJSON() as Manifest);
  const session = connect(info.url, { ca: info.caPem });
  session.on("error", () => {});
  const applyOne = (object: Manifest) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ ...object, metadata: { ...object.metadata, namespace } });
      const request = session.request({
        [constants.HTTP2_HEADER_METHOD]: "PATCH",
        [constants.HTTP2_HEADER_PATH]: pathOf(object, namespace),
        authorization: `Bearer ${info.adminToken}`,
        "content-type": "application/apply-patch+yaml",
        accept: "application/json",
      });
      let status = 0;
      request.on("response", (headers) => (status = Number(headers[constants.HTTP2_HEADER_STATUS])));
      request.on("data", () => {});
      request.on("end", () =>
        status >= 200 && status < 300
          ? resolve()
          : reject(new Error(`apply ${object.metadata.name}: HTTP ${status}`)),
      );
      request.on("error", reject);
      request.end(body);
    });
  try {
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < objects.length) await applyOne(objects[next++]!);
      }),
    );
    return performance.now() - started;
  } finally {
    session.close();
  }
}
