import { afterEach, describe, expect, it } from "vitest";
import { configMapYaml, deploymentYaml, setup, TempDirs, writesOf, type Setup } from "./harness.js";

const temp = new TempDirs();
let env: Setup | undefined;

afterEach(async () => {
  await env?.close();
  env = undefined;
  temp.cleanup();
});

describe("reconciling against the cluster simulator", () => {
  it("applies a fresh config with Ferry's labels and records the inventory", async () => {
    env = await setup(temp);
    const sha = env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web"), "env/staging/config.yaml": configMapYaml("web-config") });
    const result = await env.reconciler().cycle();
    expect(result.errors).toEqual([]);
    expect(result.appliedRevision).toBe(sha);
    expect(result.applied.map((ref) => `${ref.kind}/${ref.name}`).sort()).toEqual(["ConfigMap/web-config", "Deployment/web"]);
    const web = env.sim.get("apps/v1", "Deployment", "shop", "web") as { metadata: { labels: Record<string, string> } };
    expect(web.metadata.labels).toMatchObject({ "app.kubernetes.io/managed-by": "ferry", "ferry.dev/instance": "staging" });
    const inventory = env.sim.get("v1", "ConfigMap", "shop", "ferry-inventory-staging") as { data: { entries: string } };
    expect(inventory.data.entries.split("\n").filter(Boolean).sort()).toEqual(["_ConfigMap_shop_web-config|v1", "apps_Deployment_shop_web|v1"]);
    const applies = writesOf(env.sim.requests());
    expect(applies.every((request) => request.fieldManager === "ferry")).toBe(true);
  });

  it("makes zero writes in a cycle where nothing changed", async () => {
    env = await setup(temp);
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web"), "env/staging/config.yaml": configMapYaml("web-config") });
    const reconciler = env.reconciler();
    await reconciler.cycle();
    env.sim.resetRequests();
    const second = await reconciler.cycle();
    expect(second.errors).toEqual([]);
    expect(second.applied).toEqual([]);
    expect(writesOf(env.sim.requests())).toEqual([]);
    expect(second.sync).toBe("Synced");
  });
});
