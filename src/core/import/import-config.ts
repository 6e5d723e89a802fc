import { stringify } from "yaml";
import { parseAllDocumentsUnique } from "../yaml/unique-keys.js";
import type { RegistryConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { isArgoDocument, readArgoCd } from "./argocd.js";
import { fluxDocuments, isFluxDocument, readFlux } from "./flux.js";
import { assembleConfig, type ImportResult, type PeerDocument } from "./import-draft.js";

/**
 * `ferry import` (docs/config.md "ferry import"): the configuration of Argo CD Image Updater or
 * Flux image automation, read from YAML text, as an equivalent `.github/ferry.yml`, with a note per
 * thing that has no equivalent. Pure: the files are handed in.
 */

export type Peer = "argocd" | "flux";

export class ImportInputError extends UserError {
  constructor(message: string) {
    super("invalid-import-input", message);
  }
}

export interface InputFile {
  /** Relative to the config repository's root when it is read from a directory. */
  file: string;
  text: string;
}

const MARKER = /\{\s*"\$imagepolicy"\s*:\s*"([^":\s]+):([^":\s]+)(?::[a-z]+)?"\s*\}/g;

export function importPeerConfig(files: InputFile[], from?: Peer): ImportResult {
  const documents: PeerDocument[] = [];
  const markers = new Map<string, string[]>();
  for (const { file, text } of files) {
    for (const document of parseAllDocumentsUnique(text, { prettyErrors: false })) {
      const error = document.errors[0];
      if (error !== undefined)
        throw new ImportInputError(`${file}: invalid YAML: ${error.message.split("\n")[0]}`);
      let value: unknown;
      try {
        // Bounded like every YAML Ferry reads (docs/reliability.md row 29: alias bombs).
        value = document.toJS({ maxAliasCount: 100 });
      } catch (problem) {
        throw new ImportInputError(`${file}: invalid YAML: ${(problem as Error).message}`);
      }
      if (typeof value === "object" && value !== null && !Array.isArray(value))
        documents.push({ file, value: value as Record<string, unknown> });
    }
    for (const match of text.matchAll(MARKER)) {
      const policy = `${match[1]}/${match[2]}`;
      markers.set(policy, [...(markers.get(policy) ?? []), file]);
    }
  }
  const argo = documents.filter(isArgoDocument);
  const flux = documents.filter(isFluxDocument);
  const peer = from ?? (argo.length > 0 ? "argocd" : flux.length > 0 ? "flux" : undefined);
  const chosen =
    peer === "argocd" ? argo : peer === "flux" && flux.length > 0 ? fluxDocuments(documents) : [];
  if (chosen.length === 0)
    throw new ImportInputError(
      peer === undefined
        ? "no Argo CD Application or ImageUpdater, and no Flux ImageRepository, ImagePolicy or ImageUpdateAutomation in the input"
        : `no ${peer === "argocd" ? "Argo CD Application or ImageUpdater" : "Flux ImageRepository, ImagePolicy or ImageUpdateAutomation"} in the input`,
    );
  const notes: string[] = [];
  if (from === undefined && argo.length > 0 && flux.length > 0)
    notes.push(
      "the input holds both Argo CD and Flux objects; only Argo CD's were read (--from flux for the others)",
    );
  const registries: Record<string, RegistryConfig> = {};
  const environments =
    peer === "argocd" ? readArgoCd(chosen, registries, notes) : readFlux(chosen, markers, registries, notes);
  if (environments.length === 0)
    throw new ImportInputError(
      `the input names no image for Ferry to update (no ${peer === "argocd" ? "image-list or applicationRefs" : "ImagePolicy"})`,
    );
  return assembleConfig({ environments, registries, notes });
}

/** The `.github/ferry.yml` text: a `# ferry import:` line per note, then the config. */
export function renderImport(result: ImportResult): string {
  const comments = result.notes.map((note) => `# ferry import: ${note.replace(/[\r\n]+/g, " ")}\n`).join("");
  return `${comments}${stringify(result.config, { lineWidth: 0 })}`;
}
