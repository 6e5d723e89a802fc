import { createHash } from "node:crypto";
import type { Bundle } from "@sigstore/bundle";
import {
  COSIGN_SIGNATURE_ANNOTATION,
  DSSE_MEDIA_TYPE,
  jsonOf,
  legacyBundle,
  OCI_EMPTY_MEDIA_TYPE,
  SIGNATURE_ARTIFACT_TYPES,
  SIGNATURE_LIMITS,
  SIGSTORE_BUNDLE_MEDIA_TYPE,
  SIMPLE_SIGNING_MEDIA_TYPE,
  type Layer,
} from "./cosign-formats.js";
import type { ArtifactManifest } from "./manifests.js";
import type { RegistryClient } from "./registry-client-api.js";
import { parseBundle, type BundleProblem } from "./sigstore-verify.js";

/**
 * Finding the signed things of one image digest for signatures.ts: cosign's legacy tags, then the OCI 1.1
 * referrers (the API, or the referrers tag schema when it is absent), each signed layer read as a Sigstore
 * bundle ready for verification.
 */

/** The registry client's reads that discovery uses. */
export type Source = Pick<RegistryClient, "manifest" | "blob" | "referrers">;

export /** One signed thing found, ready for verification. */
interface Evidence {
  bundle: Bundle;
  /** The signed bytes of a message signature (the simple-signing payload). */
  artifact?: Buffer;
  via: string;
}

/** Why no candidate verified; the most telling one is reported. */
export const PRIORITY: Record<BundleProblem | "other-digest" | "provenance" | "none", number> = {
  provenance: 7,
  identity: 6,
  "other-digest": 5,
  chain: 4,
  tlog: 4,
  timestamp: 4,
  signature: 3,
  malformed: 2,
  none: 1,
};
export type Finding = { priority: number; detail: string };

/** The referrers of a digest, read once per check. */
export type ReferrersOnce = ReturnType<typeof referrersOnce>;

/** The referrers of a digest, read once per check. */
export function referrersOnce(source: Source, repository: string, digest: string) {
  let pending: Promise<{ via: string; entries: { digest: string }[] }> | undefined;
  return () =>
    (pending ??= (async () => {
      const tag = digest.replace(":", "-");
      const referrers = await source.referrers(repository, digest);
      const index = referrers ?? (await source.manifest(repository, tag))?.json;
      const via = referrers !== undefined ? "referrers API" : `referrers tag ${tag}`;
      const listed = (Array.isArray(index?.manifests) ? (index.manifests as unknown[]) : []).filter(
        (entry): entry is { digest: string; artifactType?: unknown } =>
          typeof entry === "object" &&
          entry !== null &&
          typeof (entry as { digest?: unknown }).digest === "string",
      );
      // Signature types first; then referrers whose type says nothing (cosign 2's
      // --new-bundle-format leaves the empty config's type there); others (SBOMs…) never.
      const known = listed.filter((entry) => SIGNATURE_ARTIFACT_TYPES.includes(entry.artifactType as string));
      const untyped = listed.filter(
        (entry) => entry.artifactType === undefined || entry.artifactType === OCI_EMPTY_MEDIA_TYPE,
      );
      const entries = [...known, ...untyped].slice(0, SIGNATURE_LIMITS.referrers);
      return { via, entries };
    })());
}

/** Every signed layer of one manifest, as evidence. */
async function layersOf(
  source: Source,
  repository: string,
  manifest: ArtifactManifest,
  via: string,
  findings: Finding[],
): Promise<Evidence[]> {
  const evidence: Evidence[] = [];
  const layers = Array.isArray(manifest.json.layers) ? manifest.json.layers : [];
  for (const layer of layers.slice(0, SIGNATURE_LIMITS.layersPerManifest) as Layer[]) {
    if (layer === null || typeof layer !== "object" || typeof layer.digest !== "string") continue;
    const found = await evidenceOf(source, repository, layer, via);
    if (found instanceof Error) findings.push({ priority: PRIORITY.malformed, detail: found.message });
    else if (found !== undefined) evidence.push(found);
  }
  return evidence;
}

async function evidenceOf(
  source: Source,
  repository: string,
  layer: Layer,
  via: string,
): Promise<Evidence | Error | undefined> {
  const annotations = layer.annotations ?? {};
  if (layer.mediaType === SIMPLE_SIGNING_MEDIA_TYPE) {
    const signature = annotations[COSIGN_SIGNATURE_ANNOTATION];
    if (
      typeof signature !== "string" ||
      signature === "" ||
      signature.length > SIGNATURE_LIMITS.signatureChars
    )
      return undefined;
    const payload = await source.blob(repository, layer.digest, SIGNATURE_LIMITS.payloadBytes);
    const bundle = parseBundle(
      legacyBundle(annotations, {
        messageSignature: {
          messageDigest: {
            algorithm: "SHA2_256",
            digest: createHash("sha256").update(payload).digest("base64"),
          },
          signature,
        },
      }),
    );
    return bundle instanceof Error ? bundle : { bundle, artifact: payload, via };
  }
  if (layer.mediaType === DSSE_MEDIA_TYPE) {
    const envelope = jsonOf(await source.blob(repository, layer.digest, SIGNATURE_LIMITS.envelopeBytes));
    if (envelope === undefined) return new Error("an attestation layer is not a DSSE envelope");
    const bundle = parseBundle(legacyBundle(annotations, { dsseEnvelope: envelope }));
    return bundle instanceof Error ? bundle : { bundle, via };
  }
  if (layer.mediaType === SIGSTORE_BUNDLE_MEDIA_TYPE) {
    const json = jsonOf(await source.blob(repository, layer.digest, SIGNATURE_LIMITS.envelopeBytes));
    const bundle = json === undefined ? new Error("a bundle layer is not JSON") : parseBundle(json);
    return bundle instanceof Error ? bundle : { bundle, via };
  }
  return undefined;
}

/** Legacy tag evidence, then referrers evidence, read lazily in that order. */
export async function* candidates(
  source: Source,
  repository: string,
  digest: string,
  legacySuffix: ".sig" | ".att",
  referrers: ReferrersOnce,
  findings: Finding[],
): AsyncGenerator<Evidence> {
  const tag = `${digest.replace(":", "-")}${legacySuffix}`;
  const legacy = await source.manifest(repository, tag);
  if (legacy !== undefined) yield* await layersOf(source, repository, legacy, tag, findings);
  const { via, entries } = await referrers();
  for (const entry of entries) {
    const manifest = await source.manifest(repository, entry.digest);
    if (manifest === undefined) continue;
    // A referrer names the image it signs as its subject; one for another image is not ours.
    const subject = (manifest.json.subject as { digest?: unknown } | undefined)?.digest;
    if (subject !== digest) {
      findings.push({ priority: PRIORITY["other-digest"], detail: "its signature is for another digest" });
      continue;
    }
    yield* await layersOf(source, repository, manifest, via, findings);
  }
}
