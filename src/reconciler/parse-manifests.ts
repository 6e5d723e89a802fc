/**
 * Manifest text → validated Kubernetes objects, with the limits that keep a hostile or broken
 * config repo from exhausting memory (docs/reliability.md row 29: size caps, document caps, alias
 * bombs). Pure: text in, objects or a UserError out.
 */
import { parseAllDocumentsUnique } from "../core/yaml/unique-keys.js";
import { UserError } from "../core/errors.js";
import type { KubeObject } from "./types.js";

export interface RenderLimits {
  /** Total bytes of manifest text across all files (Argo CD's default directory cap is 10M). */
  maxBytes: number;
  /** Total documents across all files. */
  maxDocuments: number;
  /** Alias nodes a document may expand; stops "billion laughs". */
  maxAliasCount: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  maxBytes: 10 * 1024 * 1024,
  maxDocuments: 10_000,
  maxAliasCount: 100,
};

/** What the render step hands on: objects plus where each came from, for error messages. */
export interface RenderedObject {
  object: KubeObject;
  source: string;
  /** A Secret whose values all came out of `sops decrypt` (sops-provenance.ts): not plaintext from Git. */
  decrypted?: true;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Checks the fields every object needs before it goes near the API server. */
export function validateObject(value: unknown, where: string): KubeObject {
  if (!isRecord(value))
    throw new UserError(
      "invalid-manifest",
      `${where}: a manifest must be a mapping, got ${Array.isArray(value) ? "a list" : typeof value}`,
    );
  if (typeof value.apiVersion !== "string" || value.apiVersion === "") {
    throw new UserError("invalid-manifest", `${where}: apiVersion is missing`);
  }
  if (typeof value.kind !== "string" || value.kind === "")
    throw new UserError("invalid-manifest", `${where}: kind is missing`);
  const metadata = value.metadata;
  if (!isRecord(metadata) || typeof metadata.name !== "string" || metadata.name === "") {
    throw new UserError("invalid-manifest", `${where}: metadata.name is missing (${value.kind})`);
  }
  if (
    metadata.namespace !== undefined &&
    (typeof metadata.namespace !== "string" || metadata.namespace === "")
  ) {
    throw new UserError("invalid-manifest", `${where}: metadata.namespace must be a non-empty string`);
  }
  return value as KubeObject;
}

/** Counts shared across the files of one render, so the caps hold for the whole folder. */
export class RenderBudget {
  bytes = 0;
  documents = 0;
  constructor(readonly limits: RenderLimits) {}

  addBytes(count: number, where: string): void {
    this.bytes += count;
    if (this.bytes > this.limits.maxBytes) {
      throw new UserError(
        "render-too-large",
        `${where}: manifests exceed ${this.limits.maxBytes} bytes in total`,
      );
    }
  }

  addDocument(where: string): void {
    this.documents += 1;
    if (this.documents > this.limits.maxDocuments) {
      throw new UserError(
        "render-too-many-documents",
        `${where}: more than ${this.limits.maxDocuments} documents`,
      );
    }
  }
}

/**
 * Parses a multi-document YAML (or JSON) text. Empty documents are skipped; `kind: List` (what
 * `kubectl get -o yaml` prints) is unwrapped.
 */
export function parseManifests(text: string, source: string, budget: RenderBudget): RenderedObject[] {
  budget.addBytes(Buffer.byteLength(text, "utf8"), source);
  const objects: RenderedObject[] = [];
  const documents = parseAllDocumentsUnique(text, { prettyErrors: false });
  if (!Array.isArray(documents)) {
    // parseAllDocuments returns an EmptyStream for empty input.
    return objects;
  }
  documents.forEach((document, index) => {
    const where = documents.length > 1 ? `${source} (document ${index + 1})` : source;
    budget.addDocument(where);
    const error = document.errors[0];
    if (error) throw new UserError("invalid-yaml", `${where}: ${error.message.split("\n")[0]}`);
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: budget.limits.maxAliasCount });
    } catch (cause) {
      // yaml throws a ReferenceError naming the excessive alias count.
      throw new UserError(
        "invalid-yaml",
        `${where}: ${(cause as Error).message} (YAML alias limit ${budget.limits.maxAliasCount})`,
        { cause },
      );
    }
    if (value === null || value === undefined) return;
    if (isRecord(value) && value.kind === "List" && Array.isArray(value.items)) {
      value.items.forEach((item, itemIndex) => {
        budget.addDocument(where);
        objects.push({ object: validateObject(item, `${where} item ${itemIndex + 1}`), source });
      });
      return;
    }
    objects.push({ object: validateObject(value, where), source });
  });
  return objects;
}
