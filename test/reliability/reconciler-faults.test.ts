/**
 * docs/reliability.md reconciler rules and rows 26–29 (goal G9), cross-cutting: a generated sequence of
 * reconcile cycles, each either a legitimate change or one of the catalogue's faults (empty
 * render, render error, corrupt or alias-bomb YAML, Git unreachable, LIST/GET/auth errors, mass
 * deletion, manual drift), against the real adapters and the cluster simulator. Deletions may
 * only happen in legitimate steps, and only of objects Ferry applied itself.
 */
import { renameSync } from "node:fs";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  configMapYaml,
  deploymentYaml,
  type Setup,
  setupPerTest,
  writesOf,
} from "../support/reconciler-harness.js";
import { finishFile, ledgerFile, record } from "../support/reliability-ledger.js";

ledgerFile("reconciler-faults");

const { temp, setup } = setupPerTest();
let env: Setup | undefined;
afterAll(() => finishFile("reconciler-faults"));

const FAULTS = [
  "empty-render",
  "render-error",
  "corrupt-yaml",
  "alias-bomb",
  "git-unreachable",
  "list-error",
  "get-error",
  "auth-error",
  "mass-deletion",
] as const;
type Fault = (typeof FAULTS)[number];
type Step =
  { kind: "remove-one" } | { kind: "add-one" } | { kind: "drift" } | { kind: "fault"; fault: Fault };

const BILLION_LAUGHS = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
`;

const deletesOf = (current: Setup) =>
  current.sim
    .requests()
    .filter((request) => request.verb === "delete" || request.verb === "deletecollection")
    .filter((request) => !request.dryRun);

describe("rows 26–28: faults in any order delete nothing; legitimate prunes delete only Ferry's own objects", () => {
  it("row 26/27/28: across generated sequences of faults and changes, every deletion is a legitimate prune of an inventory member", async () => {
    let tried = 0;
    let faultDeletions = 0;
    let legitimatePrunes = 0;
    let driftHealed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            { weight: 2, arbitrary: fc.constant<Step>({ kind: "remove-one" }) },
            { weight: 1, arbitrary: fc.constant<Step>({ kind: "add-one" }) },
            { weight: 1, arbitrary: fc.constant<Step>({ kind: "drift" }) },
            {
              weight: 5,
              arbitrary: fc.constantFrom(...FAULTS).map((fault): Step => ({ kind: "fault", fault })),
            },
          ),
          { minLength: 3, maxLength: 6 },
        ),
        async (steps) => {
          await env?.close();
          temp.cleanup();
          const current = (env = await setup());
          // Ferry's files: web + cm-0..cm-3; plus a prune-disabled one, and strangers it must never touch.
          let files: Record<string, string> = { "env/staging/web.yaml": deploymentYaml("web") };
          let next = 0;
          for (; next < 4; next++) files[`env/staging/cm-${next}.yaml`] = configMapYaml(`cm-${next}`);
          files["env/staging/keep.yaml"] = configMapYaml(
            "keep",
            { key: "v" },
            "  annotations:\n    ferry.dev/prune: disabled\n",
          );
          current.repo.commit(files);
          current.sim.create({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: {
              name: "stranger",
              namespace: "shop",
              labels: { "app.kubernetes.io/managed-by": "ferry", "ferry.dev/instance": "staging" },
            },
            data: { a: "b" },
          });
          current.sim.create({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "other-app", namespace: "shop", labels: { "ferry.dev/instance": "prod" } },
            data: { a: "b" },
          });
          const reconciler = current.reconciler();
          const first = await reconciler.cycle();
          expect(first.errors).toEqual([]);

          for (const step of steps) {
            tried++;
            current.sim.resetRequests();
            const good = { ...files };
            if (step.kind === "remove-one") {
              const victim = Object.keys(files).find((file) => /cm-\d+\.yaml$/.test(file));
              if (!victim) continue;
              files = { ...files };
              delete files[victim];
              current.repo.commit({ [victim]: null });
              const result = await reconciler.cycle();
              expect(result.errors).toEqual([]);
              const deletes = deletesOf(current);
              legitimatePrunes += deletes.length;
              // Exactly the removed object, nothing else.
              expect(deletes.map((request) => request.name)).toEqual([
                victim.replace(/^.*\/(cm-\d+)\.yaml$/, "$1"),
              ]);
              continue;
            }
            if (step.kind === "add-one") {
              files = { ...files, [`env/staging/cm-${next}.yaml`]: configMapYaml(`cm-${next}`) };
              current.repo.commit({ [`env/staging/cm-${next++}.yaml`]: configMapYaml(`cm-${next - 1}`) });
              const result = await reconciler.cycle();
              expect(result.errors).toEqual([]);
              expect(deletesOf(current)).toEqual([]);
              continue;
            }
            if (step.kind === "drift") {
              current.sim.scale("Deployment", "shop", "web", 7);
              const result = await reconciler.cycle();
              expect(result.errors).toEqual([]);
              const web = current.sim.get("apps/v1", "Deployment", "shop", "web") as {
                spec: { replicas: number };
              };
              expect(web.spec.replicas).toBe(2);
              expect(deletesOf(current)).toEqual([]);
              driftHealed++;
              continue;
            }
            // A fault: break, run one cycle, count deletions (must be 0), then restore.
            const ferryFiles = Object.keys(files).filter((file) => /cm-\d+\.yaml$|web\.yaml$/.test(file));
            const removeAll = Object.fromEntries(ferryFiles.map((file) => [file, null]));
            let restore: () => void = () => current.repo.commit(good);
            switch (step.fault) {
              case "empty-render":
                current.repo.commit({
                  ...removeAll,
                  "env/staging/keep.yaml": null,
                  "env/staging/README.md": "nothing\n",
                });
                restore = () => current.repo.commit({ ...good, "env/staging/README.md": null });
                break;
              case "render-error":
                current.repo.commit({
                  ...removeAll,
                  "env/staging/web.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {}\n",
                });
                break;
              case "corrupt-yaml":
                current.repo.commit({
                  ...removeAll,
                  "env/staging/web.yaml": deploymentYaml("web").slice(0, 60) + "\n  - : [\n",
                });
                break;
              case "alias-bomb":
                current.repo.commit({ ...removeAll, "env/staging/bomb.yaml": BILLION_LAUGHS });
                restore = () => current.repo.commit({ ...good, "env/staging/bomb.yaml": null });
                break;
              case "git-unreachable": {
                current.repo.commit(removeAll);
                renameSync(current.repo.dir, `${current.repo.dir}.gone`);
                restore = () => {
                  renameSync(`${current.repo.dir}.gone`, current.repo.dir);
                  current.repo.commit(good);
                };
                break;
              }
              case "list-error":
                current.repo.commit(removeAll);
                current.sim.faults.failList({ count: Infinity });
                restore = () => {
                  current.sim.faults.clear();
                  current.repo.commit(good);
                };
                break;
              case "get-error":
                current.repo.commit(removeAll);
                current.sim.faults.fail({ verb: "get", status: 503, count: Infinity });
                restore = () => {
                  current.sim.faults.clear();
                  current.repo.commit(good);
                };
                break;
              case "auth-error":
                current.repo.commit(removeAll);
                current.sim.faults.fail({ verb: "list", status: 401, count: Infinity });
                restore = () => {
                  current.sim.faults.clear();
                  current.repo.commit(good);
                };
                break;
              case "mass-deletion": {
                // Add enough objects that removing them all trips the breaker (maxPrune 10).
                const many = Object.fromEntries(
                  Array.from({ length: 12 }, (_, i) => [
                    `env/staging/mass-${i}.yaml`,
                    configMapYaml(`mass-${i}`),
                  ]),
                );
                current.repo.commit(many);
                await reconciler.cycle();
                current.sim.resetRequests();
                current.repo.commit(Object.fromEntries(Object.keys(many).map((file) => [file, null])));
                restore = () => {
                  current.repo.commit(many);
                  files = { ...files, ...many };
                };
                break;
              }
            }
            const result = await reconciler.cycle();
            const deletes = deletesOf(current);
            faultDeletions += deletes.length;
            expect(result.ok, `${step.fault} must fail the cycle`).toBe(false);
            expect(deletes, `${step.fault} deleted objects`).toEqual([]);
            if (step.fault !== "mass-deletion")
              expect(writesOf(current.sim.requests()), `${step.fault} wrote`).toEqual([]);
            // Rule 4: a failed fetch, render or list leaves the status Degraded, not Healthy.
            if (step.fault !== "mass-deletion")
              expect(reconciler.status().health, step.fault).not.toBe("Healthy");
            restore();
            current.sim.resetRequests();
            const healed = await reconciler.cycle();
            expect(healed.errors, `after ${step.fault}`).toEqual([]);
            expect(deletesOf(current)).toEqual([]);
          }
          // Never pruned: the prune-disabled object, the stranger outside the inventory, another instance's object.
          expect(current.sim.get("v1", "ConfigMap", "shop", "keep")).toBeDefined();
          expect(current.sim.get("v1", "ConfigMap", "shop", "stranger")).toBeDefined();
          expect(current.sim.get("v1", "ConfigMap", "shop", "other-app")).toBeDefined();
          expect(current.sim.get("apps/v1", "Deployment", "shop", "web")).toBeDefined();
        },
      ),
      {
        seed: 26_27_28,
        numRuns: Number(process.env.FERRY_RELIABILITY_RECONCILER_RUNS ?? 5),
        endOnFailure: true,
      },
    );
    record("reconciler: fault cycles", { tried, deletions: faultDeletions });
    record("reconciler: legitimate prunes (allowed)", { tried: legitimatePrunes });
    record("reconciler: drift healed", { tried: driftHealed });
    expect(faultDeletions).toBe(0);
    expect(legitimatePrunes).toBeGreaterThan(0);
  });
});
