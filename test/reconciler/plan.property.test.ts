import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prepareDesiredState } from "../../src/reconciler/desired-state.js";
import { inventoryKey, refOf } from "../../src/reconciler/object-ref.js";
import { planSync, type ObservedObject } from "../../src/reconciler/plan.js";
import type { KubeObject, ObjectRef } from "../../src/reconciler/types.js";

const NAMES = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"];

const orphanState = fc.record({
  exists: fc.boolean(),
  pruneDisabled: fc.boolean(),
  owned: fc.boolean(),
  otherInstance: fc.boolean(),
});

const scenario = fc.record({
  desired: fc.subarray(NAMES),
  inventory: fc.subarray(NAMES),
  orphans: fc.dictionary(fc.constantFrom(...NAMES), orphanState),
  prune: fc.boolean(),
  allowEmpty: fc.boolean(),
  maxPrune: fc.integer({ min: 0, max: 20 }),
  maxPrunePercent: fc.integer({ min: 0, max: 100 }),
});

const ref = (name: string): ObjectRef => ({
  group: "",
  version: "v1",
  kind: "ConfigMap",
  namespace: "shop",
  name,
});

describe("planSync (property)", () => {
  it("only ever prunes inventory members that left Git, are unprotected, and within the circuit breaker", () => {
    fc.assert(
      fc.property(scenario, (input) => {
        const desired = prepareDesiredState(
          input.desired.map((name) => ({
            object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name } } as KubeObject,
            source: "x",
          })),
          () => true,
          { instance: "staging", defaultNamespace: "shop" },
        );
        const inventory = input.inventory.map(ref);
        const desiredKeys = new Set(desired.map((item) => inventoryKey(item.ref)));
        const orphansLive = new Map<string, KubeObject | undefined>();
        for (const member of inventory) {
          if (desiredKeys.has(inventoryKey(member))) continue;
          const state = input.orphans[member.name] ?? {
            exists: true,
            pruneDisabled: false,
            owned: false,
            otherInstance: false,
          };
          orphansLive.set(
            inventoryKey(member),
            state.exists
              ? {
                  apiVersion: "v1",
                  kind: "ConfigMap",
                  metadata: {
                    name: member.name,
                    namespace: "shop",
                    labels: { "ferry.dev/instance": state.otherInstance ? "prod" : "staging" },
                    ...(state.pruneDisabled ? { annotations: { "ferry.dev/prune": "disabled" } } : {}),
                    ...(state.owned ? { ownerReferences: [{ kind: "Deployment", name: "x" }] } : {}),
                  },
                }
              : undefined,
          );
        }
        let plan;
        try {
          plan = planSync({
            instance: "staging",
            desired,
            observed: new Map<string, ObservedObject>(),
            inventory,
            orphansLive,
            options: {
              prune: input.prune,
              allowEmpty: input.allowEmpty,
              maxPrune: input.maxPrune,
              maxPrunePercent: input.maxPrunePercent,
            },
          });
        } catch (error) {
          // The only refusal: an empty render with prune on and something to lose.
          expect((error as Error).message).toMatch(/empty/);
          expect(desired.length === 0 && input.prune && !input.allowEmpty && inventory.length > 0).toBe(true);
          return;
        }
        if (!input.prune) expect(plan.prune).toEqual([]);
        expect(plan.prune.length).toBeLessThanOrEqual(input.maxPrune);
        const inventoryKeys = new Set(inventory.map(inventoryKey));
        for (const pruned of plan.prune) {
          const key = inventoryKey(pruned);
          expect(inventoryKeys.has(key)).toBe(true);
          expect(desiredKeys.has(key)).toBe(false);
          const live = orphansLive.get(key);
          expect(live).toBeDefined();
          expect(live!.metadata.annotations?.["ferry.dev/prune"]).toBeUndefined();
          expect(live!.metadata.ownerReferences).toBeUndefined();
          expect(live!.metadata.labels?.["ferry.dev/instance"]).toBe("staging");
        }
        // Everything desired stays in the inventory, so it can be pruned later, except what a tripped
        // circuit breaker holds back: never applied, so there is nothing to prune.
        const next = new Set(plan.nextInventory.map(inventoryKey));
        const held = new Set(plan.held.map(inventoryKey));
        if (!plan.pruneBlocked) expect(held.size).toBe(0);
        for (const item of desired) {
          const key = inventoryKey(refOf(item.object));
          expect(next.has(key) !== held.has(key)).toBe(true);
          if (held.has(key)) expect(inventoryKeys.has(key)).toBe(false);
        }
        expect(plan.apply.some(({ ref }) => held.has(inventoryKey(ref)))).toBe(false);
      }),
      { numRuns: 500, seed: 20261130 },
    );
  });
});
