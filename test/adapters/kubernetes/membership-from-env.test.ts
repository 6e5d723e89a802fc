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
});
