/**
 * A registry's request budget is the fleet's, not each replica's: three members holding Leases in
 * kube-apiserver each take a third of `requestsPerMinute`, counted at the registry itself.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { loadClusterAccess } from "../../src/adapters/kubernetes/cluster-access.js";
import { leaseMembership } from "../../src/adapters/kubernetes/lease-membership.js";
import type { Membership } from "../../src/adapters/kubernetes/membership.js";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import {
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../packages/sandbox/src/registry/embedded-registry.js";
import { Kubectl } from "./contract/backend.js";
import { kubeconfigFor, serviceAccountToken } from "./control-plane.js";
import { waitUntil } from "../support/scan-fleet.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const info = inject("controlPlane");
const namespace = `ferry-budget-${randomBytes(3).toString("hex")}`;
const admin = new Kubectl(kubeconfigFor(info));
const BUDGET = 30;
let registry: EmbeddedRegistry;
let members: Membership[] = [];

beforeAll(async () => {
  await admin.ok(["create", "namespace", namespace]);
  await admin.ok(["create", "serviceaccount", "ferry", "-n", namespace]);
  await admin.ok(["apply", "-n", namespace, "-f", "deploy/app/role.yaml"]);
  const token = await serviceAccountToken(info, namespace, "ferry");
  members = ["ferry-a", "ferry-b", "ferry-c"].map((identity) => {
    const access = loadClusterAccess({ kubeconfig: kubeconfigFor(info, { token, namespace }) });
    return leaseMembership({ access, namespace, identity, leaseDurationMs: 3_000 });
  });
  await Promise.all(members.map((member) => member.start()));
  registry = await startEmbeddedRegistry();
});

afterAll(async () => {
  await Promise.all(members.map((member) => member.stop()));
  await registry?.close();
  await admin.run(["delete", "namespace", namespace, "--wait=false"]);
  admin.close();
});

describe("the registry budget across 3 replicas", () => {
  it(`stays under requestsPerMinute: ${BUDGET} at the registry when each replica wants the whole of it`, async () => {
    await waitUntil(
      () => members.every((member) => member.members().length === 3),
      30_000,
      "the three members to see each other",
    );
    const before = registry.requestCount();
    const outcomes = await Promise.all(
      members.map(async (member, index) => {
        const client = createRegistryClient({
          registries: { [registry.host]: { requestsPerMinute: BUDGET, insecure: true } },
          budgetShare: () => member.members().length,
          // Over budget fails at once instead of waiting for the minute to pass.
          limits: { maxBudgetWaitMs: 0, tagCacheTtlMs: 0, maxRetries: 0 },
        });
        let refused = 0;
        // Each replica alone would spend the whole budget.
        for (let i = 0; i < BUDGET; i++) {
          try {
            await client.listTags(`${registry.host}/replica-${index}/image-${i}`);
          } catch (error) {
            if ((error as { code?: string }).code === "registry-budget-exhausted") refused++;
          }
        }
        return { refused, use: client.budgetUse()[registry.host] };
      }),
    );
    const counted = registry.requestCount() - before;
    console.log(
      `registry requests counted at the registry: ${counted} (budget ${BUDGET}/min, 3 replicas wanting ${3 * BUDGET}); ` +
        `refused per replica ${outcomes.map((o) => o.refused).join("/")}`,
    );
    expect(counted).toBeLessThanOrEqual(BUDGET);
    for (const outcome of outcomes) expect(outcome.use).toEqual({ used: BUDGET / 3, limit: BUDGET / 3 });
  });
});
