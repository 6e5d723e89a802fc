import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { initializeCA, type CA } from "@sigstore/mock/dist/fulcio/ca.js";
import { initializeCTLog, type CTLog } from "@sigstore/mock/dist/fulcio/ctlog.js";
import { initializeTLog, type TLog } from "@sigstore/mock/dist/rekor/tlog.js";
import { sha256, simpleSigningPayload } from "./cosign-artifacts.js";
import { pushBlob, putManifest } from "../support/registry-upload.js";

/**
 * A Sigstore instance built in the test, offline: a Fulcio-like CA (`@sigstore/mock`: a
 * self-signed root issuing 10-minute code-signing certificates with the SAN and the OIDC issuer
 * extension 1.3.6.1.4.1.57264.1.8, each with an SCT from a CT log), a Rekor-like log (a signed
 * entry timestamp and a one-entry inclusion proof with a signed checkpoint), and the trusted root
 * JSON naming them (https://github.com/sigstore/protobuf-specs TrustedRoot). Bundles are built
 * with node:crypto in the Sigstore bundle v0.3 format: a DSSE envelope holding an in-toto
 * statement whose subject is the image digest, the form `cosign sign --new-bundle-format` and
 * `cosign attest --new-bundle-format` store as OCI 1.1 referrers.
 */

export const FULCIO_ISSUER_OID = "1.3.6.1.4.1.57264.1.8";
export const COSIGN_SIGN_PREDICATE = "https://sigstore.dev/cosign/sign/v1";
export const SLSA_PROVENANCE_02 = "https://slsa.dev/provenance/v0.2";
export const BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json";
const REKOR_URL = "https://rekor.ferry.test";
const IN_TOTO = "application/vnd.in-toto+json";

const pair = () => generateKeyPairSync("ec", { namedCurve: "P-256" });

export interface TestSigstore {
  /** The trusted root JSON naming this instance's CA, CT log and transparency log. */
  trustedRoot: Record<string, unknown>;
  /** A bundle signing `digest` with a fresh key certified for `identity`. */
  bundle(options: BundleOptions): Promise<Record<string, unknown>>;
  /**
   * What cosign 2 writes for a keyless `cosign sign` (its default in GitHub Actions): a
   * simple-signing payload, its signature, and the certificate and Rekor hashedrekord entry (SET)
   * as the layer annotations `dev.sigstore.cosign/certificate` and `dev.sigstore.cosign/bundle`.
   */
  legacySignature(options: {
    reference: string;
    digest: string;
    identity: { issuer: string; subject: string };
  }): Promise<{ payload: Buffer; annotations: Record<string, string> }>;
}

export interface BundleOptions {
  digest: string;
  identity: { issuer: string; subject: string };
  predicateType?: string;
  predicate?: unknown;
  /** Leave out the transparency log entry. */
  noTlog?: boolean;
}

export async function createTestSigstore(): Promise<TestSigstore> {
  const ctKeys = pair();
  const ctlog: CTLog = await initializeCTLog(ctKeys);
  const ca: CA = await initializeCA(pair(), ctlog);
  const tlogKeys = pair();
  const tlog: TLog = await initializeTLog(REKOR_URL, tlogKeys);
  const start = new Date(Date.now() - 60_000).toISOString();
  const spki = (key: KeyObject) => key.export({ type: "spki", format: "der" });
  const trustedRoot = {
    mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
    tlogs: [
      {
        baseUrl: REKOR_URL,
        hashAlgorithm: "SHA2_256",
        publicKey: {
          rawBytes: spki(tlogKeys.publicKey).toString("base64"),
          keyDetails: "PKIX_ECDSA_P256_SHA_256",
          validFor: { start },
        },
        logId: { keyId: createHash("sha256").update(spki(tlogKeys.publicKey)).digest("base64") },
      },
    ],
    certificateAuthorities: [
      {
        subject: { organization: "sigstore.mock", commonName: "sigstore" },
        uri: "https://fulcio.ferry.test",
        certChain: {
          certificates: [{ rawBytes: Buffer.from(ca.rootCertificate.buffer).toString("base64") }],
        },
        validFor: { start },
      },
    ],
    ctlogs: [
      {
        baseUrl: "https://ctfe.ferry.test",
        hashAlgorithm: "SHA2_256",
        publicKey: {
          rawBytes: spki(ctKeys.publicKey).toString("base64"),
          keyDetails: "PKIX_ECDSA_P256_SHA_256",
          validFor: { start },
        },
        logId: { keyId: Buffer.from(ctlog.logID.buffer).toString("base64") },
      },
    ],
    timestampAuthorities: [],
  };

  async function certify(signer: { publicKey: KeyObject }, identity: { issuer: string; subject: string }) {
    return Buffer.from(
      (
        await ca.issueCertificate({
          publicKey: spki(signer.publicKey),
          subjectAltName: identity.subject,
          extensions: [{ oid: FULCIO_ISSUER_OID, value: identity.issuer }],
        })
      ).buffer,
    );
  }

  return {
    trustedRoot,
    async legacySignature({ reference, digest, identity }) {
      const signer = pair();
      const certificate = await certify(signer, identity);
      const payload = simpleSigningPayload(reference, digest);
      const signature = sign("sha256", payload, signer.privateKey).toString("base64");
      const pem = toPem(certificate);
      const logged = await tlog.log({
        apiVersion: "0.0.1",
        kind: "hashedrekord",
        spec: {
          data: { hash: { algorithm: "sha256", value: createHash("sha256").update(payload).digest("hex") } },
          signature: { content: signature, publicKey: { content: Buffer.from(pem).toString("base64") } },
        },
      });
      const entry = Object.values(logged as Record<string, RekorLogEntry>)[0]!;
      return {
        payload,
        annotations: {
          "dev.cosignproject.cosign/signature": signature,
          "dev.sigstore.cosign/certificate": pem,
          "dev.sigstore.cosign/chain": toPem(Buffer.from(ca.rootCertificate.buffer)),
          "dev.sigstore.cosign/bundle": JSON.stringify({
            SignedEntryTimestamp: entry.verification!.signedEntryTimestamp,
            Payload: {
              body: entry.body,
              integratedTime: entry.integratedTime,
              logIndex: entry.logIndex,
              logID: entry.logID,
            },
          }),
        },
      };
    },
    async bundle(options) {
      const signer = pair();
      const certificate = Buffer.from(
        (
          await ca.issueCertificate({
            publicKey: spki(signer.publicKey),
            subjectAltName: options.identity.subject,
            extensions: [{ oid: FULCIO_ISSUER_OID, value: options.identity.issuer }],
          })
        ).buffer,
      );
      const payload = Buffer.from(
        JSON.stringify({
          _type: "https://in-toto.io/Statement/v1",
          subject: [{ name: "image", digest: { sha256: options.digest.replace(/^sha256:/, "") } }],
          predicateType: options.predicateType ?? COSIGN_SIGN_PREDICATE,
          predicate: options.predicate ?? {},
        }),
      );
      // DSSE pre-authentication encoding (https://github.com/secure-systems-lab/dsse/blob/master/protocol.md).
      const pae = Buffer.concat([
        Buffer.from(`DSSEv1 ${IN_TOTO.length} ${IN_TOTO} ${payload.length} `),
        payload,
      ]);
      const signature = sign("sha256", pae, signer.privateKey);
      const tlogEntries = options.noTlog ? [] : [await logEntry(tlog, payload, signature, certificate)];
      return {
        mediaType: BUNDLE_MEDIA_TYPE,
        verificationMaterial: {
          certificate: { rawBytes: certificate.toString("base64") },
          tlogEntries,
          timestampVerificationData: { rfc3161Timestamps: [] },
        },
        dsseEnvelope: {
          payload: payload.toString("base64"),
          payloadType: IN_TOTO,
          signatures: [{ sig: signature.toString("base64"), keyid: "" }],
        },
      };
    },
  };
}

interface RekorLogEntry {
  body: string;
  integratedTime: number;
  logID: string;
  logIndex: number;
  verification?: {
    signedEntryTimestamp?: string;
    inclusionProof?: { logIndex: number; rootHash: string; treeSize: number; checkpoint: string };
  };
}

function toPem(der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

/** Pushes a legacy cosign signature layer (payload + annotations) under `sha256-<hex>.sig`. */
export async function pushLegacySignature(
  registryUrl: string,
  repository: string,
  digest: string,
  signature: { payload: Buffer; annotations: Record<string, string> },
): Promise<void> {
  const config = Buffer.from("{}");
  await pushBlob(registryUrl, repository, signature.payload);
  await pushBlob(registryUrl, repository, config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        size: config.length,
        digest: sha256(config),
      },
      layers: [
        {
          mediaType: "application/vnd.dev.cosign.simplesigning.v1+json",
          size: signature.payload.length,
          digest: sha256(signature.payload),
          annotations: signature.annotations,
        },
      ],
    }),
  );
  await putManifest(
    registryUrl,
    repository,
    `${digest.replace(":", "-")}.sig`,
    "application/vnd.oci.image.manifest.v1+json",
    manifest,
  );
}

/** A Rekor dsse v0.0.1 entry for the envelope, as the bundle's tlog entry (SET and inclusion proof). */
async function logEntry(tlog: TLog, payload: Buffer, signature: Buffer, certificate: Buffer) {
  const pem = `-----BEGIN CERTIFICATE-----\n${certificate.toString("base64")}\n-----END CERTIFICATE-----\n`;
  const logged = await tlog.log({
    apiVersion: "0.0.1",
    kind: "dsse",
    spec: {
      payloadHash: { algorithm: "sha256", value: createHash("sha256").update(payload).digest("hex") },
      signatures: [
        { signature: signature.toString("base64"), verifier: Buffer.from(pem).toString("base64") },
      ],
    },
  });
  // The mock answers Rekor's LogEntry shape (its types package is not a dependency here).
  const entry = Object.values(logged as Record<string, RekorLogEntry>)[0]!;
  const proof = entry.verification!.inclusionProof!;
  return {
    logIndex: String(entry.logIndex),
    logId: { keyId: Buffer.from(entry.logID, "hex").toString("base64") },
    kindVersion: { kind: "dsse", version: "0.0.1" },
    integratedTime: String(entry.integratedTime),
    inclusionPromise: { signedEntryTimestamp: entry.verification!.signedEntryTimestamp },
    inclusionProof: {
      logIndex: String(proof.logIndex),
      rootHash: Buffer.from(proof.rootHash, "hex").toString("base64"),
      treeSize: String(proof.treeSize),
      hashes: [],
      checkpoint: { envelope: proof.checkpoint },
    },
    canonicalizedBody: entry.body,
  };
}

/** Pushes `body` as an OCI 1.1 referrer of `digest`, and lists it in the referrers tag index. */
export async function pushReferrer(
  registryUrl: string,
  repository: string,
  digest: string,
  artifactType: string,
  body: Buffer,
): Promise<void> {
  const empty = Buffer.from("{}");
  await pushBlob(registryUrl, repository, body);
  await pushBlob(registryUrl, repository, empty);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      artifactType,
      config: { mediaType: "application/vnd.oci.empty.v1+json", size: empty.length, digest: sha256(empty) },
      layers: [{ mediaType: artifactType, size: body.length, digest: sha256(body) }],
      subject: { mediaType: "application/vnd.oci.image.manifest.v1+json", digest, size: 0 },
    }),
  );
  await putManifest(
    registryUrl,
    repository,
    sha256(manifest),
    "application/vnd.oci.image.manifest.v1+json",
    manifest,
  );
  // The referrers tag schema: the index under sha256-<hex>, appended to (distribution 2.8 has no API).
  const tag = digest.replace(":", "-");
  const existing = await fetch(`${registryUrl}/v2/${repository}/manifests/${tag}`, {
    headers: { accept: "application/vnd.oci.image.index.v1+json" },
  });
  const manifests =
    existing.status === 200 ? ((await existing.json()) as { manifests: unknown[] }).manifests : [];
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [
        ...manifests,
        {
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          digest: sha256(manifest),
          size: manifest.length,
          artifactType,
        },
      ],
    }),
  );
  await putManifest(registryUrl, repository, tag, "application/vnd.oci.image.index.v1+json", index);
}
