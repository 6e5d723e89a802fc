import { describe, expect, it } from "vitest";
import {
  diffEnvironment,
  formatDiffReport,
  GITHUB_CHECK_LIMITS,
  type KubeObject,
} from "../../../src/core/diff/index.js";

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const secret = (data: Record<string, string>, stringData?: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "db", namespace: "shop" },
  type: "Opaque",
  data,
  ...(stringData ? { stringData } : {}),
});

/** Everything a diff could show: the report and the raw diff as JSON. */
const everything = (base: KubeObject[], head: KubeObject[]) => {
  const diff = diffEnvironment(base, head);
  const report = formatDiffReport(
    [{ environment: "prod", diff }],
    GITHUB_CHECK_LIMITS,
    "ferry diff --base main",
  );
  return { diff, shown: `${JSON.stringify(diff)}\n${report.summary}\n${report.text}` };
};

describe("secrets in a diff", () => {
  it("shows which keys of a Secret were added, changed or removed, never a value", () => {
    const base = secret({ password: b64("hunter2-old"), user: b64("shop-user"), gone: b64("removed-value") });
    const head = secret(
      { password: b64("hunter2-new"), user: b64("shop-user") },
      { token: "fresh-token-value" },
    );
    const { diff, shown } = everything([base], [head]);
    expect(diff.changes[0]!.secretKeys).toEqual({
      added: ["token"],
      changed: ["password"],
      removed: ["gone"],
    });
    for (const value of ["hunter2-old", "hunter2-new", "shop-user", "removed-value", "fresh-token-value"]) {
      expect(shown).not.toContain(value);
      expect(shown).not.toContain(b64(value));
    }
    const lines = diff.changes[0]!.unifiedDiff!.split("\n");
    expect(lines).toContain("-  password: (hidden)");
    expect(lines).toContain("+  password: (hidden, changed)");
    expect(lines).toContain("-  gone: (hidden)");
    expect(lines).toContain("+  token: (hidden)");
    expect(lines).toContain("   user: (hidden)");
    expect(shown).toContain(
      "Secret keys added: token; changed: password; removed: gone (values never shown)",
    );
  });

  it("keeps an added or removed Secret's values out too", () => {
    const { diff, shown } = everything([], [secret({ password: b64("brand-new-secret") })]);
    expect(diff.changes[0]).toMatchObject({ kind: "added", secretKeys: { added: ["password"] } });
    expect(shown).not.toContain(b64("brand-new-secret"));
    const removed = everything([secret({ password: b64("old-secret-value") })], []);
    expect(removed.shown).not.toContain(b64("old-secret-value"));
  });

  it("calls a value moved from stringData to data unchanged", () => {
    const diff = diffEnvironment(
      [secret({}, { password: "same-value" })],
      [secret({ password: b64("same-value") })],
    );
    expect(diff.changes[0]!.secretKeys).toEqual({ added: [], changed: [], removed: [] });
  });

  it("shows a SOPS-encrypted object only as changed, never its content", () => {
    const sops = (value: string, mac: string): KubeObject => ({
      ...secret({}, { password: `ENC[AES256_GCM,data:${value},iv:aaaa,tag:bbbb,type:str]` }),
      sops: {
        mac: `ENC[AES256_GCM,data:${mac},type:str]`,
        lastmodified: "2026-01-01T00:00:00Z",
        version: "3.9.0",
      },
    });
    const { diff, shown } = everything([sops("Zm9vYmFy", "mac1")], [sops("YmF6cXV4", "mac2")]);
    expect(diff.changes).toEqual([
      {
        key: { apiVersion: "v1", kind: "Secret", namespace: "shop", name: "db" },
        kind: "changed",
        note: "SOPS-encrypted: contents not shown (Ferry never decrypts anything)",
      },
    ]);
    expect(shown).not.toContain("Zm9vYmFy");
    expect(shown).not.toContain("YmF6cXV4");
    expect(shown).not.toContain("password");
    expect(diffEnvironment([sops("Zm9vYmFy", "mac1")], [sops("Zm9vYmFy", "mac1")]).unchanged).toBe(1);
    // Any kind with a sops block, a ConfigMap too.
    const config = (value: string): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c" },
      data: { key: value },
      sops: { mac: "m" },
    });
    expect(diffEnvironment([config("ENC[a]")], [config("ENC[b]")]).changes[0]!.unifiedDiff).toBeUndefined();
  });

  it("shows a SealedSecret's encryptedData as changed or unchanged, nothing more", () => {
    const sealed = (data: string, label = "a"): KubeObject => ({
      apiVersion: "bitnami.com/v1alpha1",
      kind: "SealedSecret",
      metadata: { name: "db", namespace: "shop", labels: { l: label } },
      spec: { encryptedData: { password: data }, template: { type: "Opaque" } },
    });
    const changed = everything([sealed("AgBy3i4OJSWK+PiTySYZZA==")], [sealed("AgCx9QkH7p0Lf2nwyTQvRA==")]);
    expect(changed.shown).not.toContain("AgBy3i4OJSWK");
    expect(changed.shown).not.toContain("AgCx9QkH7p0L");
    expect(changed.diff.changes[0]!.unifiedDiff).toContain(
      "-  encryptedData: (sealed)\n+  encryptedData: (sealed, changed)",
    );
    const relabelled = diffEnvironment([sealed("AgBy3i4OJSWK")], [sealed("AgBy3i4OJSWK", "b")]);
    expect(relabelled.changes[0]!.unifiedDiff).toContain("   encryptedData: (sealed)");
    expect(relabelled.changes[0]!.unifiedDiff).not.toContain("changed)");
  });

  it("runs the redactor over everything the report shows", () => {
    const diff = diffEnvironment(
      [
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "c" },
          data: { url: "https://x:ghp_tokentoken@example" },
        },
      ],
      [
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "c" },
          data: { url: "https://x:other@example" },
        },
      ],
    );
    const report = formatDiffReport(
      [{ environment: "prod", diff }],
      GITHUB_CHECK_LIMITS,
      "ferry diff",
      (text) => text.split("ghp_tokentoken").join("[REDACTED]"),
    );
    expect(report.text).not.toContain("ghp_tokentoken");
    expect(report.text).toContain("[REDACTED]");
  });
});
