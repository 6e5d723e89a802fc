import { describe, expect, it } from "vitest";
import { TransientError } from "../../src/core/errors.js";
import { summarizeErrors } from "../../src/reconciler/cycle-result.js";
import type { ClusterPort } from "../../src/reconciler/ports.js";
import { createReconciler } from "../../src/reconciler/reconciler.js";
import { configMapYaml, setupPerTest } from "../support/reconciler-harness.js";

const { setup } = setupPerTest();

describe("summarizeErrors", () => {
  it("keeps a short list as it is", () => {
    expect(summarizeErrors(["apply: a", "prune: b"])).toEqual(["apply: a", "prune: b"]);
  });

  it("turns 644 errors from a dead API server into a few lines: the first ones and a count by kind", () => {
    const errors = Array.from(
      { length: 644 },
      (_, index) =>
        `apply: apply ConfigMap shop/config-${index}: request to https://10.0.0.1/api/v1/namespaces/shop/configmaps/config-${index} failed, reason: connect ECONNREFUSED 10.0.0.1:443`,
    );
    const summary = summarizeErrors(errors);
    expect(summary).toHaveLength(6);
    expect(summary.slice(0, 5)).toEqual(errors.slice(0, 5));
    expect(summary[5]).toBe(
      "… and 639 more: 639 × apply: request to … failed, reason: connect ECONNREFUSED 10.0.0.1:443",
    );
    expect(JSON.stringify(summary).length).toBeLessThan(4_000);
  });

  it("is what the cycle's log line carries when every apply fails, while the result keeps every error", async () => {
    const env = await setup();
    const files: Record<string, string> = {};
    for (let index = 0; index < 40; index++)
      files[`env/staging/cm-${index}.yaml`] = configMapYaml(`cm-${index}`);
    env.repo.commit(files);
    const cluster = env.cluster;
    // The API server dies between the dry-runs (and the inventory's record of intent) and the writes.
    const dying: ClusterPort = {
      isNamespaced: (apiVersion, kind) => cluster.isNamespaced(apiVersion, kind),
      list: (...args) => cluster.list(...args),
      get: (ref) => cluster.get(ref),
      delete: (ref) => cluster.delete(ref),
      namespaceContents: (namespace) => cluster.namespaceContents(namespace),
      apply: async (object, options) => {
        if (options.dryRun || object.metadata.name.startsWith("ferry-inventory-"))
          return cluster.apply(object, options);
        throw new TransientError(
          "kubernetes-unavailable",
          `apply ConfigMap shop/${object.metadata.name}: connect ECONNREFUSED 127.0.0.1:6443`,
        );
      },
    };
    const lines: { message: string; fields: Record<string, unknown> }[] = [];
    const reconciler = createReconciler({
      cluster: dying,
      source: env.fetcher,
      settings: env.settings(),
      log: (message, fields) => lines.push({ message, fields }),
    });
    const result = await reconciler.cycle();
    expect(result.errors).toHaveLength(40);
    const failed = lines.find(({ message }) => message === "reconcile cycle failed")!;
    const logged = failed.fields.errors as string[];
    expect(logged).toHaveLength(6);
    expect(logged[5]).toMatch(/^… and 35 more: 35 × apply: connect ECONNREFUSED 127\.0\.0\.1:6443$/);
  });
});
