import { describe, expect, it } from "vitest";
import { plaintextSecretField, plaintextSecretProblems } from "../../../src/core/check/plaintext-secrets.js";

describe("plaintext Secrets", () => {
  it("names the field of a Secret with data or stringData, and passes SOPS, empty and other kinds", () => {
    expect(plaintextSecretField({ apiVersion: "v1", kind: "Secret", data: { a: "Yg==" } })).toBe("data");
    expect(plaintextSecretField({ kind: "Secret", stringData: { a: "b" } })).toBe("stringData");
    expect(
      plaintextSecretField({ kind: "Secret", data: { a: "ENC[x]" }, sops: { mac: "ENC[y]" } }),
    ).toBeUndefined();
    expect(
      plaintextSecretField({ kind: "Secret", type: "kubernetes.io/service-account-token" }),
    ).toBeUndefined();
    expect(
      plaintextSecretField({ kind: "SealedSecret", spec: { encryptedData: { a: "x" } } }),
    ).toBeUndefined();
    expect(
      plaintextSecretField({ kind: "ExternalSecret", spec: { data: [{ secretKey: "a" }] } }),
    ).toBeUndefined();
  });

  it("fails a secretGenerator's literals on their line, and a generator file only when it is not SOPS-encrypted", () => {
    const kustomization =
      "secretGenerator:\n  - name: a\n    literals:\n      - password=hunter2\n  - name: b\n    files: [../shared/key.txt]\n";
    const problems = plaintextSecretProblems(
      new Map([["env/prod/kustomization.yaml", kustomization]]),
      new Map([["env/shared/key.txt", "plain"]]),
    );
    expect(problems.map(({ line, column, message }) => [line, column, message.split(";")[0]])).toEqual([
      [3, 5, "secretGenerator a makes a plaintext Secret from literals in Git"],
      [6, 13, "secretGenerator b makes a plaintext Secret from env/shared/key.txt, a plaintext file in Git"],
    ]);
    expect(
      plaintextSecretProblems(
        new Map([
          [
            "env/prod/kustomization.yaml",
            kustomization.split("  - name: b")[0]!.replace("literals:\n      - password=hunter2\n", ""),
          ],
        ]),
        new Map(),
      ),
    ).toEqual([]);
  });
});
