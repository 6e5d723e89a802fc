import { DIGEST_PATTERN } from "../../core/image-ref.js";
import { makeHint, type RegistryHint } from "./registry-hint.js";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * GHCR pushes arrive as GitHub `registry_package` (and the older `package`) events. Only
 * container packages published or updated count. The image name comes from `package_url`
 * (`ghcr.io/owner/name:tag`), lowercased as GHCR stores it.
 */
export function hintsFromGitHubPackageEvent(
  name: "registry_package" | "package",
  payload: unknown,
): RegistryHint[] {
  if (!isObject(payload)) return [];
  if (payload.action !== "published" && payload.action !== "updated") return [];
  const pkg = name === "registry_package" ? payload.registry_package : payload.package;
  if (!isObject(pkg) || !isObject(pkg.package_version)) return [];
  const version = pkg.package_version;
  const metadata = isObject(version.container_metadata) ? version.container_metadata : undefined;
  const packageUrl = typeof version.package_url === "string" ? version.package_url : "";
  const packageType = typeof pkg.package_type === "string" ? pkg.package_type.toLowerCase() : "";
  const isContainer =
    packageType === "container" ||
    packageType === "docker" ||
    metadata !== undefined ||
    packageUrl.startsWith("ghcr.io/");
  if (!isContainer) return [];

  let imageName: string | undefined;
  if (packageUrl !== "") {
    // `ghcr.io/owner/name:tag` or `ghcr.io/owner/name@sha256:…`; the tag may be empty.
    imageName = packageUrl.replace(/@.*$/, "").replace(/:[^/]*$/, "");
  } else if (isObject(pkg.owner) && typeof pkg.owner.login === "string" && typeof pkg.name === "string") {
    imageName = `ghcr.io/${pkg.owner.login}/${pkg.name}`;
  }
  if (imageName === undefined) return [];
  const slash = imageName.indexOf("/");
  if (slash <= 0) return [];

  const tagInfo = metadata && isObject(metadata.tag) ? metadata.tag : {};
  const manifest = metadata && isObject(metadata.manifest) ? metadata.manifest : {};
  const digest = [tagInfo.digest, manifest.digest, version.version, version.name].find(
    (candidate): candidate is string => typeof candidate === "string" && DIGEST_PATTERN.test(candidate),
  );
  const tag = typeof tagInfo.name === "string" && tagInfo.name !== "" ? tagInfo.name : undefined;
  const hint = makeHint(
    "github",
    imageName.slice(0, slash).toLowerCase(),
    imageName.slice(slash + 1).toLowerCase(),
    tag,
    digest,
  );
  return hint ? [hint] : [];
}
