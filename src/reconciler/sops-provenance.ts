/**
 * Which rendered Secrets hold only values SOPS decrypted: those are not "plaintext Secrets from
 * Git" (the reconciler refuses those, docs/security.md) even though they reach kustomize in the
 * clear. A decrypted file contributes each of its values, as written and base64-encoded (a
 * Secret's `data`, a secretGenerator's `envs`), and its whole text base64-encoded (a
 * secretGenerator's `files`). Values are kept only as HMACs under a key made for one render, so
 * this set holds no plaintext and means nothing after the render.
 */
import { createHmac, randomBytes } from "node:crypto";
import { parseAllDocumentsUnique } from "../core/yaml/unique-keys.js";
import type { SopsFormat } from "../core/sops-file.js";
import type { RenderedObject } from "./parse-manifests.js";

export class DecryptedValues {
  private readonly key = randomBytes(32);
  private readonly digests = new Set<string>();

  private digest(value: string): string {
    return createHmac("sha256", this.key).update(value).digest("base64");
  }

  private add(value: string): void {
    this.digests.add(this.digest(value));
    this.digests.add(this.digest(Buffer.from(value, "utf8").toString("base64")));
  }

  has(value: string): boolean {
    return this.digests.has(this.digest(value));
  }

  /** Takes the values of one decrypted file. */
  addFile(format: SopsFormat, text: string): void {
    this.digests.add(this.digest(Buffer.from(text, "utf8").toString("base64")));
    if (format === "dotenv") {
      for (const line of text.split("\n")) {
        const at = line.indexOf("=");
        if (at <= 0 || line.trimStart().startsWith("#")) continue;
        const value = line.slice(at + 1).replace(/\r$/, "");
        this.add(value);
        if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]))
          this.add(value.slice(1, -1));
      }
      return;
    }
    // A file with aliases contributes nothing (its Secrets are then refused as plaintext): no expansion.
    for (const document of parseAllDocumentsUnique(text)) {
      try {
        this.addLeaves(document.toJS({ maxAliasCount: 0 }) as unknown, 0);
      } catch {
        // not read
      }
    }
  }

  private addLeaves(value: unknown, depth: number): void {
    if (depth > 64) return;
    if (typeof value === "string") this.add(value);
    else if (typeof value === "number" || typeof value === "boolean") this.add(String(value));
    else if (Array.isArray(value)) for (const item of value) this.addLeaves(item, depth + 1);
    else if (typeof value === "object" && value !== null)
      for (const item of Object.values(value)) this.addLeaves(item, depth + 1);
  }
}

/** A v1 Secret whose `data` and `stringData` values (at least one) all came out of SOPS. */
function isDecryptedSecret(object: Record<string, unknown>, values: DecryptedValues): boolean {
  if (object.kind !== "Secret" || (object.apiVersion !== undefined && object.apiVersion !== "v1"))
    return false;
  let count = 0;
  for (const field of ["data", "stringData"]) {
    const entries = object[field];
    if (entries === undefined || entries === null) continue;
    if (typeof entries !== "object") return false;
    for (const value of Object.values(entries as Record<string, unknown>)) {
      if (typeof value !== "string" || !values.has(value)) return false;
      count++;
    }
  }
  return count > 0;
}

/** Marks the rendered Secrets made of decrypted values only (`decrypted: true`). */
export function markDecryptedSecrets(objects: RenderedObject[], values: DecryptedValues): RenderedObject[] {
  return objects.map((rendered) =>
    isDecryptedSecret(rendered.object as unknown as Record<string, unknown>, values)
      ? { ...rendered, decrypted: true }
      : rendered,
  );
}
