/** Manifest media types Ferry understands; always all four in `Accept` (distribution answers schema1 otherwise). */
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
export const DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";
export const DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
export const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
export const DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json";

export const MANIFEST_MEDIA_TYPES = [OCI_INDEX, OCI_MANIFEST, DOCKER_MANIFEST_LIST, DOCKER_MANIFEST] as const;
export const MANIFEST_ACCEPT = MANIFEST_MEDIA_TYPES.join(", ");

export function isIndexMediaType(mediaType: string): boolean {
  return mediaType === OCI_INDEX || mediaType === DOCKER_MANIFEST_LIST;
}

/** `application/json; charset=utf-8` → `application/json`. */
export function bareMediaType(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}
