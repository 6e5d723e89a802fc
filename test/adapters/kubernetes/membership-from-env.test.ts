import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { membershipFromEnv } from "../../../src/adapters/kubernetes/lease-membership.js";
import { UserError } from "../../../src/core/errors.js";

describe("membershipFromEnv", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const kubeconfigFile = (): string => {
    const dir = mkdtempSync(path.join(tmpdir(), "ferry-membership-"));
    dirs.push(dir);
    const file = path.join(dir, "config");
    writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters: [{name: dev, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: me, user: {token: t}}]
contexts: [{name: dev, context: {cluster: dev, user: me, namespace: ferry}}]
current-context: dev
`,
    );
    return file;
  };

  it("is the single-member fleet outside a pod and without --kubeconfig", () => {
    const membership = membershipFromEnv({ env: { FERRY_MEMBER_NAME: "solo" } });
    expect(membership.snapshot()).toMatchObject({ mode: "single", self: "solo", members: ["solo"] });
  });

  it("refuses a FERRY_LEASE_DURATION that would renew in a loop or outlive Node's timer range, naming the setting", () => {
    const file = kubeconfigFile();
    for (const text of ["0s", "500ms", "2h", "30d"]) {
      const start = (): unknown =>
        membershipFromEnv({ env: { FERRY_LEASE_DURATION: text }, kubeconfigFile: file });
      expect(start).toThrow(UserError);
      expect(start).toThrow(`FERRY_LEASE_DURATION must be between 1s and 1h, got "${text}"`);
    }
    expect(
      membershipFromEnv({ env: { FERRY_LEASE_DURATION: "20s" }, kubeconfigFile: file }).snapshot(),
    ).toMatchObject({
      mode: "kubernetes",
      namespace: "ferry",
      leaseDurationMs: 20_000,
    });
  });

  it("in a pod, holds its Lease on the pod's API server with the service account, in the pod's namespace", () => {
    const sa = mkdtempSync(path.join(tmpdir(), "ferry-sa-"));
    dirs.push(sa);
    writeFileSync(path.join(sa, "token"), "pod-token\n");
    writeFileSync(path.join(sa, "namespace"), "ferry-system\n");
    const env = {
      KUBERNETES_SERVICE_HOST: "10.0.0.1",
      KUBERNETES_SERVICE_PORT: "443",
      FERRY_MEMBER_NAME: "a",
    };
    expect(membershipFromEnv({ env, serviceAccountDir: sa }).snapshot()).toMatchObject({
      mode: "kubernetes",
      self: "a",
      namespace: "ferry-system",
    });
    const { KUBERNETES_SERVICE_PORT: _port, ...noPort } = env;
    expect(() => membershipFromEnv({ env: noPort, serviceAccountDir: sa })).toThrow(
      /not in a pod: KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT/,
    );
  });
});
