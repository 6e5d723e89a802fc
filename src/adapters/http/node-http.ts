/**
 * Node's HTTP and TLS modules without their ESM face (docs/capacity.md "Memory of one replica"): an
 * `import … from "node:http"` reads every export, and node:http's WebSocket getters load Node's
 * bundled undici: about 14 MB of resident memory and tens of milliseconds of start-up in a process
 * that never opens a WebSocket; the others' faces cost a megabyte or so each. The layering test
 * holds every value import of them to this file.
 */
export const nodeHttp = (): typeof import("node:http") =>
  process.getBuiltinModule("node:http") as typeof import("node:http");

export const nodeHttps = (): typeof import("node:https") =>
  process.getBuiltinModule("node:https") as typeof import("node:https");

export const nodeHttp2 = (): typeof import("node:http2") =>
  process.getBuiltinModule("node:http2") as typeof import("node:http2");

export const nodeTls = (): typeof import("node:tls") =>
  process.getBuiltinModule("node:tls") as typeof import("node:tls");
