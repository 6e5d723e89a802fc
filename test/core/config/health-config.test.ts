/**
 * `health:` and `soak:` in `.github/ferry.yml` (docs/config.md "Health"): each source's keys, the
 * identity it needs, and the warning for a soak on an upstream that names no health source.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config/load-config.js";
import { healthSourceOf } from "../../../src/core/health/health-source.js";

const config = (staging: string, prod = "    soak: 2h\n") => `images:
  shop: { repository: ghcr.io/acme/shop }
environments:
  staging:
    paths: [apps/staging]
${staging}  prod:
    paths: [apps/prod]
    from: staging
${prod}`;

describe("health config", () => {
  it("reads an argocd source: the documented template's context, from its reporter only", () => {
    const loaded = loadConfig(
      config(
        '    health: { source: argocd, application: shop-staging, reporters: ["argocd-notifier[bot]"] }\n',
      ),
    );
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    expect(loaded.warnings).toEqual([]);
    expect(healthSourceOf(loaded.config, "staging", "ferry[bot]")).toEqual({
      kind: "statuses",
      context: { exact: "continuous-delivery/shop-staging" },
      reporters: ["argocd-notifier[bot]"],
      label: "argocd app shop-staging",
    });
  });

  it("reads a flux source: kind/name with the provider's id segment, lowercased", () => {
    const loaded = loadConfig(
      config("    health: { source: flux, kustomization: shop-staging, reporters: [flux-bot] }\n"),
    );
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    expect(healthSourceOf(loaded.config, "staging", undefined)).toMatchObject({
      kind: "statuses",
      context: { exact: "kustomization/shop-staging", withSegment: true, caseless: true },
    });
  });

  it("refuses a source without the identity or object it needs, and keys of another source", () => {
    const loaded = loadConfig(
      config("    health: { source: argocd, application: shop-staging, appId: 3 }\n"),
    );
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      "environments.staging.health.reporters: source: argocd needs reporters (the login Argo CD Notifications writes with)",
      "environments.staging.health.appId: appId does not apply to source: argocd",
    ]);
    const flux = loadConfig(config("    health: { source: flux, reporters: [flux-bot] }\n"));
    expect(flux.ok).toBe(false);
    const check = loadConfig(config("    health: { source: check-run, checkRun: deploy }\n"));
    expect(check.ok ? [] : check.problems.map((problem) => problem.message)).toEqual([
      "source: check-run needs appId (the GitHub App whose check run counts)",
    ]);
  });

  it("warns on a soak whose upstream names no health source, unless the soak is time only", () => {
    const loaded = loadConfig(config(""));
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatchObject({ path: "environments.prod.soak", line: 9 });
    expect(loaded.warnings[0]!.message).toMatch(/staging names no health source/);
    const timeOnly = loadConfig(config("", "    soak: { duration: 2h, basis: time }\n"));
    expect(timeOnly.ok && timeOnly.warnings).toEqual([]);
    const explicit = loadConfig(config("    health: { source: ferry }\n"));
    expect(explicit.ok && explicit.warnings).toEqual([]);
  });
});
