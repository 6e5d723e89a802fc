import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadClusterAccess } from "../../../src/adapters/kubernetes/cluster-access.js";

describe("loadClusterAccess from the default places", () => {
  const homes: string[] = [];
  const emptyHome = (): string => {
    const home = mkdtempSync(path.join(tmpdir(), "ferry-home-"));
    homes.push(home);
    vi.stubEnv("HOME", home);
    vi.stubEnv("USERPROFILE", home);
    vi.stubEnv("KUBECONFIG", "");
    vi.stubEnv("KUBERNETES_SERVICE_HOST", "");
    return home;
  };
  afterEach(() => {
    vi.unstubAllEnvs();
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });

  it("says no cluster is configured instead of falling back to an unauthenticated localhost:8080", () => {
    emptyHome();
    expect(() => loadClusterAccess({ env: process.env })).toThrow(/no kubeconfig found.*--kubeconfig/);
  });

  it("loads the kubeconfig that KUBECONFIG names", () => {
    const home = emptyHome();
    const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: dev, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: me, user: {token: t}}]
contexts: [{name: dev, context: {cluster: dev, user: me, namespace: shop}}]
current-context: dev
`;
    vi.stubEnv("KUBECONFIG", path.join(home, "config"));
    writeFileSync(path.join(home, "config"), kubeconfig);
    expect(loadClusterAccess({ env: process.env }).server).toBe("https://127.0.0.1:6443");
  });
});
