/**
 * A loopback Kubernetes API server for the sandbox and the tests: in memory, on
 * 127.0.0.1 and a free port, spoken to by `@kubernetes/client-node` and `kubectl` unchanged.
 *
 * Module map: `cluster-state.ts` (verbs, storage, watch), `admission.ts` (body and name checks,
 * defaults, validation before a write is stored), `managed-fields.ts` (server-side apply),
 * `patches.ts`, `selectors.ts`, `controllers.ts` (simulated rollouts), `http-api.ts` (routing,
 * discovery, tables), `faults.ts` (fault injection and the request log).
 *
 * The cluster contract suite (`test/cluster/contract/`) runs the same cases here and against a
 * real kube-apiserver; where they differed, this simulator was changed to match.
 *
 * Known gaps, by design: no RBAC/admission/finalizers (deletes are immediate), no protobuf (so
 * `kubectl create namespace|deployment …` generators fail with 415; `kubectl create -f`, `apply`,
 * `apply --server-side`, `get`, `scale`, `set image`, `label`, `rollout status` and `delete` work),
 * no OpenAPI schemas for built-in kinds (`kubectl explain` fails; unknown fields of built-in kinds
 * are accepted, where kube-apiserver refuses a server-side apply with 500 "field not declared in
 * schema"; custom resources do follow their CRD's structural schema), no aggregated
 * discovery, no `kubectl logs/exec/port-forward`, one stored version per resource (no CRD
 * conversion). kubectl sends no bearer token over plain http, so requests without one are
 * accepted; a wrong token gets 401.
 */
import { createServer, type Server } from "node:http";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { stringify as stringifyYaml } from "yaml";
import { ClusterState } from "./cluster-state.js";
import { SimulatedControllers } from "./controllers.js";
import { ClusterFaults, type RequestRecord } from "./faults.js";
import { HttpApi } from "./http-api.js";
import type { JsonObject } from "./patches.js";
import { ApiError } from "./status.js";

export interface ClusterSimulatorOptions {
  /** Whether a Deployment's image can be pulled; default: every image exists. */
  imageExists?: (image: string) => Promise<boolean>;
  /** Interval of the simulated controllers; one more Pod becomes ready per step. Default 50 ms. */
  rolloutStepMs?: number;
  /** How long a rollout with a missing image runs before ProgressDeadlineExceeded. Default 1000 ms. */
  progressDeadlineMs?: number;
  /** How many change events a watch can resume from before it gets 410 Expired. Default 5000. */
  watchHistory?: number;
  /** How long after its create a new CRD's kind is served and Established, as on kube-apiserver. Default 100 ms. */
  crdEstablishMs?: number;
}

export interface ClusterSimulator {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The bearer token every API request must carry (not a real secret; sandbox only). */
  readonly token: string;
  readonly faults: ClusterFaults;
  /** A kubeconfig for this simulator; `namespace` becomes the context's default namespace. */
  kubeconfig(namespace?: string): string;
  writeKubeconfig(path: string, namespace?: string): Promise<void>;
  /** Every API request since start or the last reset, in order. */
  requests(): RequestRecord[];
  resetRequests(): void;
  /** Reads an object directly (no request logged); undefined when absent. */
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): JsonObject | undefined;
  list(apiVersion: string, kind: string, namespace?: string): JsonObject[];
  /** Creates an object as `fieldManager` (default `sandbox`); namespaces must exist. */
  create(object: JsonObject, options?: { fieldManager?: string }): JsonObject;
  /** Server-side apply as `fieldManager` (default `sandbox`). */
  apply(object: JsonObject, options?: { fieldManager?: string; force?: boolean }): JsonObject;
  delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): void;
  /** Scales like `kubectl scale` does: through `/scale`, field manager `kubectl-scale`. */
  scale(kind: string, namespace: string, name: string, replicas: number): JsonObject;
  /** Runs one controller step now instead of waiting for the timer. */
  step(): void;
  /** Resolves with the object once `predicate` holds; rejects after `timeoutMs` (default 10 s). */
  waitFor(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    predicate: (object: JsonObject) => boolean,
    timeoutMs?: number,
  ): Promise<JsonObject>;
  close(): Promise<void>;
}

export async function startClusterSimulator(
  options: ClusterSimulatorOptions = {},
): Promise<ClusterSimulator> {
  const state = new ClusterState(options.watchHistory, undefined, options.crdEstablishMs ?? 100);
  const faults = new ClusterFaults();
  const token = randomBytes(16).toString("hex");
  // Shared with the HTTP layer, which appends to it; reset empties it in place.
  const log: RequestRecord[] = [];
  let address = "";
  const api = new HttpApi({ state, faults, token, log, address: () => address });
  const server: Server = createServer((request, response) => {
    void api.handle(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  address = `127.0.0.1:${port}`;
  const url = `http://${address}`;
  const controllers = new SimulatedControllers(state, {
    imageExists: options.imageExists ?? (async () => true),
    rolloutStepMs: options.rolloutStepMs ?? 50,
    progressDeadlineMs: options.progressDeadlineMs ?? 1000,
  });
  controllers.start();

  const typeOf = (apiVersion: string, kind: string) => state.type(apiVersion, kind);
  const namespaceOf = (object: JsonObject) =>
    (object.metadata as JsonObject | undefined)?.namespace as string | undefined;
  const nameOf = (object: JsonObject) => String((object.metadata as JsonObject | undefined)?.name ?? "");

  const kubeconfig = (namespace?: string) =>
    stringifyYaml({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "ferry-simulator", cluster: { server: url, "insecure-skip-tls-verify": true } }],
      users: [{ name: "ferry-simulator-admin", user: { token } }],
      contexts: [
        {
          name: "ferry-simulator",
          context: {
            cluster: "ferry-simulator",
            user: "ferry-simulator-admin",
            ...(namespace ? { namespace } : {}),
          },
        },
      ],
      "current-context": "ferry-simulator",
      preferences: {},
    });

  const simulator: ClusterSimulator = {
    url,
    token,
    faults,
    kubeconfig,
    async writeKubeconfig(path, namespace) {
      await writeFile(path, kubeconfig(namespace), { mode: 0o600 });
    },
    requests: () => [...log],
    resetRequests() {
      log.length = 0;
    },
    get(apiVersion, kind, namespace, name) {
      try {
        return state.get(typeOf(apiVersion, kind), namespace, name);
      } catch (error) {
        if (error instanceof ApiError && error.code === 404) return undefined;
        throw error;
      }
    },
    list(apiVersion, kind, namespace) {
      return state.list(typeOf(apiVersion, kind), namespace).items;
    },
    create(object, createOptions = {}) {
      const type = typeOf(String(object.apiVersion), String(object.kind));
      return state.create(type, namespaceOf(object), object, {
        fieldManager: createOptions.fieldManager ?? "sandbox",
      });
    },
    apply(object, applyOptions = {}) {
      const type = typeOf(String(object.apiVersion), String(object.kind));
      return state.patch(type, namespaceOf(object), nameOf(object), "apply", JSON.stringify(object), {
        fieldManager: applyOptions.fieldManager ?? "sandbox",
        force: applyOptions.force === true,
      });
    },
    delete(apiVersion, kind, namespace, name) {
      state.delete(typeOf(apiVersion, kind), namespace, name);
    },
    scale(kind, namespace, name, replicas) {
      const type = state.registry.all().find((t) => t.kind === kind && t.hasScale);
      if (!type) throw new Error(`${kind} has no scale subresource`);
      const scale = state.updateScale(
        type,
        namespace,
        name,
        (current) => ({ ...current, spec: { replicas } }),
        {
          fieldManager: "kubectl-scale",
        },
      );
      return scale;
    },
    step: () => controllers.step(),
    waitFor(apiVersion, kind, namespace, name, predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const object = simulator.get(apiVersion, kind, namespace, name);
          return object && predicate(object) ? object : undefined;
        };
        const now = check();
        if (now) return resolve(now);
        const timer = setTimeout(() => {
          stop();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${kind} ${namespace ?? ""}/${name}`));
        }, timeoutMs);
        const stop = state.onChange(() => {
          const found = check();
          if (found) {
            clearTimeout(timer);
            stop();
            resolve(found);
          }
        });
      });
    },
    async close() {
      controllers.stop();
      api.endStreams();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return simulator;
}
