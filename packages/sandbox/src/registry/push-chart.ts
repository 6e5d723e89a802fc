import { createHash } from "node:crypto";
import { PushSession } from "./push-image.js";

/**
 * Pushes a packaged Helm chart (the `.tgz` of `helm package`) as `helm push` does: a config blob
 * of media type `application/vnd.cncf.helm.config.v1+json` holding the chart's metadata, the
 * archive as a `application/vnd.cncf.helm.chart.content.v1.tar+gzip` layer, and an OCI image
 * manifest tagged with the chart version (`+` written `_`). Used by tests and the sandbox.
 */

export const HELM_CONFIG_MEDIA_TYPE = "application/vnd.cncf.helm.config.v1+json";
export const HELM_CHART_MEDIA_TYPE = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

const digestOf = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

export async function pushChart(
  baseUrl: string,
  repository: string,
  chart: { name: string; version: string; archive: Buffer },
  options: { auth?: { username: string; password: string } } = {},
): Promise<{ digest: string; tag: string }> {
  const session = new PushSession(baseUrl.replace(/\/+$/, ""), repository, options);
  const config = Buffer.from(JSON.stringify({ name: chart.name, version: chart.version, apiVersion: "v2" }));
  await session.uploadBlob(config);
  await session.uploadBlob(chart.archive);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: HELM_CONFIG_MEDIA_TYPE, digest: digestOf(config), size: config.length },
      layers: [
        { mediaType: HELM_CHART_MEDIA_TYPE, digest: digestOf(chart.archive), size: chart.archive.length },
      ],
      annotations: {
        "org.opencontainers.image.title": chart.name,
        "org.opencontainers.image.version": chart.version,
      },
    }),
  );
  const tag = chart.version.replace(/\+/g, "_");
  return { digest: await session.putManifest(tag, manifest, OCI_MANIFEST), tag };
}
