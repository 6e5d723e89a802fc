import { describe, expect, it } from "vitest";
import { sopsEncryptedFormat } from "../../src/core/sops-file.js";

const YAML_METADATA =
  'sops:\n    age:\n        - recipient: age1x\n          enc: |\n            -----BEGIN AGE ENCRYPTED FILE-----\n    lastmodified: "2026-01-01T00:00:00Z"\n    mac: ENC[AES256_GCM,data:x,type:str]\n    version: 3.13.3\n';

describe("which files SOPS encrypted", () => {
  it.each([
    ["secret.yaml", `data:\n  a: ENC[AES256_GCM,data:y]\n${YAML_METADATA}`, "yaml"],
    ["secret.yml", `a: b\n---\nc: d\n${YAML_METADATA}`, "yaml"],
    ["s.json", JSON.stringify({ a: "ENC[x]", sops: { mac: "ENC[y]", lastmodified: "2026" } }), "json"],
    ["api.enc.env", "TOKEN=ENC[x]\nsops_lastmodified=2026\nsops_mac=ENC[y]\n", "dotenv"],
    [".env", "sops_mac=ENC[y]\r\nsops_lastmodified=2026\r\n", "dotenv"],
  ])("%s is SOPS-encrypted", (name, text, format) => {
    expect(sopsEncryptedFormat(name, text)).toBe(format);
  });

  it.each([
    [
      "a ConfigMap with a sops key but no metadata",
      "cm.yaml",
      "data:\n  sops: yes\nsops:\n  note: mac: lastmodified\n",
    ],
    ["a nested sops map", "x.yaml", "spec:\n  sops:\n    mac: x\n    lastmodified: y\n"],
    ["metadata without mac", "x.yaml", "sops:\n    lastmodified: y\n"],
    ["a sops block ended before its mac", "x.yaml", "sops:\n    lastmodified: y\nmac: z\n"],
    ["JSON whose sops has no mac", "x.json", JSON.stringify({ sops: { lastmodified: "y" } })],
    ["invalid JSON", "x.json", '{"sops": {"mac": "x", "lastmodified": "y"'],
    ["dotenv with a mac only", "a.env", "sops_mac=ENC[y]\n"],
    ["a file of another kind", "notes.txt", `x\n${YAML_METADATA}`],
  ])("%s is not", (_what, name, text) => {
    expect(sopsEncryptedFormat(name, text)).toBeUndefined();
  });
});
