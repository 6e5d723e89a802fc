/**
 * A kind the reconciler's RBAC refuses (403) refuses that kind's objects only: the other kinds
 * apply, the refused ones are neither applied nor pruned, and the errors and /status name them.
 * (The simulator does no authorization: the 403s are injected; test/cluster/install.test.ts has
 * the real RBAC.)
 */
import { describe, expect, it } from "vitest";
import {
  configMapYaml,
  deploymentYaml,
  setupPerTest,
  storedInventory,
  writesOf,
} from "../support/reconciler-harness.js";

const { setup } = setupPerTest();

describe("a kind the RBAC refuses", () => {
  it("is refused and named on a 403 to its list, while the image bump of another kind applies", async () => {
    const env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web", { image: "ghcr.io/acme/shop:1.0.0" }) });
    const reconciler = env.reconciler();
    expect((await reconciler.cycle()).errors).toEqual([]);
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web", { image: "ghcr.io/acme/shop:1.1.0" }),
      "env/staging/config.yaml": configMapYaml("web-config"),
    });
    env.sim.faults.fail({
      verb: "list",
      resource: "configmaps",
      namespace: "shop",
      status: 403,
      count: Infinity,
    });
    const result = await reconciler.cycle();
    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([
      expect.stringMatching(
        /^refused: ConfigMap shop\/web-config: forbidden by the reconciler's RBAC \(list ConfigMap shop: /,
      ),
    ]);
    expect(result.applied.map((ref) => `${ref.kind} ${ref.name}`)).toEqual(["Deployment web"]);
    const web = env.sim.get("apps/v1", "Deployment", "shop", "web") as any;
    expect(web.spec.template.spec.containers[0].image).toBe("ghcr.io/acme/shop:1.1.0");
    expect(env.sim.get("v1", "ConfigMap", "shop", "web-config")).toBeUndefined();
    expect(reconciler.status().errors.join("\n")).toMatch(/ConfigMap shop\/web-config: forbidden/);
  });

  it("keeps an applied object whose kind becomes refused: not pruned, still in the inventory", async () => {
    const env = await setup();
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/old.yaml": configMapYaml("old"),
    });
    const reconciler = env.reconciler();
    expect((await reconciler.cycle()).errors).toEqual([]);
    // The Deployment leaves Git, and writing Deployments is no longer allowed.
    env.repo.commit({ "env/staging/web.yaml": null });
    env.sim.faults.fail({ verb: "get", resource: "deployments", status: 403, count: Infinity });
    env.sim.resetRequests();
    const result = await reconciler.cycle();
    expect(result.errors).toEqual([]);
    expect(result.pruned).toEqual([]);
    expect(writesOf(env.sim.requests()).filter((request) => request.verb === "delete")).toEqual([]);
    expect(env.sim.get("apps/v1", "Deployment", "shop", "web")).toBeDefined();
    const inventory = storedInventory(env.sim.get("v1", "ConfigMap", "shop", "ferry-inventory-staging"));
    expect(inventory.members.join("\n")).toMatch(/Deployment/);
  });
});
