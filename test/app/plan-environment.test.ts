import { describe, expect, it } from "vitest";
import { planEnvironment } from "../../src/app/plan-environment.js";
import type { FileSource } from "../../src/app/plan-inputs.js";
import { loadConfig } from "../../src/core/config/load-config.js";
import type { FerryConfig } from "../../src/core/config/schema.js";
import { FakeRegistry, kustomization } from "../support/app-fakes.js";

function config(policy: string): FerryConfig {
  const result = loadConfig(
    `images:\n  shop:\n    repository: ghcr.io/acme/shop\n    policy: ${policy}\nenvironments:\n  staging:\n    paths: [overlays/staging]\n`,
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

function filesOf(files: Record<string, string>): FileSource {
  return {
    listFiles: async (paths) =>
      Object.keys(files).filter((file) => paths.some((path) => file.startsWith(`${path}/`))),
    readFile: async (path) => files[path]!,
  };
}

describe("planEnvironment with a digest pin", () => {
  it.each(["digest", "digest-only"] as const)(
    "bumps to the newest admitted tag under pin: %s and writes its digest",
    async (pin) => {
      const registry = new FakeRegistry();
      registry.push("ghcr.io/acme/shop", "1.7.0");
      const digest = registry.push("ghcr.io/acme/shop", "1.8.0");
      const files = filesOf({ "overlays/staging/kustomization.yaml": kustomization("1.7.0") });

      const plan = await planEnvironment(
        { registry, files, now: new Date("2026-01-01T00:00:00Z") },
        config(`{ range: "^1.0.0", pin: ${pin} }`),
        "staging",
      );

      expect(plan.unchanged).toEqual([]);
      expect(plan.changes).toEqual([
        expect.objectContaining({ image: "shop", to: { tag: "1.8.0", digest } }),
      ]);
      expect(plan.files["overlays/staging/kustomization.yaml"]).toContain(`digest: ${digest}`);
    },
  );
});

describe("planEnvironment's reason", () => {
  it("counts every tag the policy admits, as ferry select does, not only those newer than the current one", async () => {
    const registry = new FakeRegistry();
    for (const tag of ["1.6.0", "1.7.0", "1.8.0", "2.0.0"]) registry.push("ghcr.io/acme/shop", tag);
    const files = filesOf({ "overlays/staging/kustomization.yaml": kustomization("1.7.0") });

    const plan = await planEnvironment(
      { registry, files, now: new Date("2026-01-01T00:00:00Z") },
      config(`{ range: "^1.0.0" }`),
      "staging",
    );

    expect(plan.changes[0]?.reason).toBe("semver ^1.0.0 admits 1.8.0, the highest of 3 admitted tags");
  });
});

describe("planEnvironment over Argo CD Image Updater's write-back file", () => {
  it("edits an .argocd-source-<app>.yaml, which is known by its name only", async () => {
    const registry = new FakeRegistry();
    registry.push("ghcr.io/acme/shop", "1.7.0");
    registry.push("ghcr.io/acme/shop", "1.8.0");
    const file = "overlays/staging/.argocd-source-shop.yaml";
    const files = filesOf({ [file]: "kustomize:\n  images:\n  - ghcr.io/acme/shop:1.7.0\n" });

    const plan = await planEnvironment(
      { registry, files, now: new Date("2026-01-01T00:00:00Z") },
      config(`{ range: "^1.0.0" }`),
      "staging",
    );

    expect(plan.changes).toEqual([
      expect.objectContaining({ image: "shop", from: expect.objectContaining({ tag: "1.7.0" }) }),
    ]);
    expect(plan.files[file]).toBe("kustomize:\n  images:\n  - ghcr.io/acme/shop:1.8.0\n");
  });
});
