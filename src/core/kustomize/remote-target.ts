/**
 * What Ferry fetches for a remote kustomize reference it vendors (docs/security.md, "Render
 * network"): a git repository at a ref, with the subfolder kustomize would build, or a single
 * file. Only HTTP(S) is fetched: ssh, scp-like `git@host:…`, `file://`, `gh:` and every other
 * scheme are refused. Forms follow kustomize's remote targets
 * (https://github.com/kubernetes-sigs/kustomize/blob/master/examples/remoteBuild.md): `//`
 * separates the repository from the subfolder, `.git` ends the repository, `?ref=` (or
 * `?version=`) names the ref, `git::` forces git and a host without a scheme is HTTPS. Pure.
 */

export type RemoteTarget =
  { kind: "git"; repository: string; ref?: string; subfolder: string } | { kind: "file"; url: string };

export type RemoteTargetResult = RemoteTarget | { problem: string };

/** Hosts whose repositories are `owner/name`, so that `host/owner/name/sub` has a subfolder. */
const OWNER_NAME_HOSTS = new Set(["github.com", "gitlab.com", "bitbucket.org"]);
const FILE_EXTENSIONS = /\.(ya?ml|json)$/i;

/**
 * How `value` is fetched: `directory` is true for the fields that name a kustomization
 * (`resources`, `bases`, `components`); every other field names a file.
 */
export function remoteTarget(value: string, directory: boolean): RemoteTargetResult {
  let text = value.trim();
  const forcedGit = /^git::/i.test(text);
  if (forcedGit) text = text.slice(5);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (/^[\w.-]+@[\w.-]+:/.test(text) || /^[a-z][a-z0-9+.-]*:(?!\d)/i.test(text))
      return { problem: "Ferry fetches remote bases over HTTP(S) only (no ssh, scp-like or other schemes)" };
    text = `https://${text}`;
  } else if (scheme !== "http" && scheme !== "https") {
    return { problem: `Ferry fetches remote bases over HTTP(S) only, not ${scheme}://` };
  }
  // Checked on the text: a URL parser would resolve the segments away.
  if (
    text
      .split(/[?#]/)[0]!
      .split("/")
      .some((segment) => segment === ".." || segment === ".")
  )
    return { problem: "its path must not contain . or .. segments" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "not a URL Ferry can read" };
  }
  if (url.username !== "" || url.password !== "")
    return { problem: "a remote base URL must not hold credentials" };
  const params = url.searchParams;
  const ref = params.get("ref") ?? params.get("version") ?? undefined;
  const gitMarkers =
    forcedGit || ref !== undefined || url.pathname.includes("//") || /\.git(\/|$)/.test(url.pathname);
  if (!directory || (!gitMarkers && FILE_EXTENSIONS.test(url.pathname)))
    return forcedGit || ref !== undefined
      ? { problem: "a git repository where a file is expected" }
      : { kind: "file", url: url.href };
  const { repositoryPath, subfolder } = splitRepository(url.hostname.toLowerCase(), url.pathname);
  if (repositoryPath === "" || repositoryPath === "/") return { problem: "names no repository" };
  if (subfolder.split("/").some((segment) => segment === ".." || segment === "."))
    return { problem: "its subfolder must not contain . or .. segments" };
  if (ref !== undefined && !/^[\w./-]{1,200}$/.test(ref))
    return { problem: `ref ${JSON.stringify(ref)} is not a branch, tag or commit name` };
  return {
    kind: "git",
    repository: `${url.protocol}//${url.host}${repositoryPath}`,
    ...(ref !== undefined ? { ref } : {}),
    subfolder,
  };
}

function splitRepository(host: string, pathname: string): { repositoryPath: string; subfolder: string } {
  const slashes = pathname.indexOf("//");
  if (slashes !== -1)
    return {
      repositoryPath: pathname.slice(0, slashes),
      subfolder: trimSlashes(pathname.slice(slashes + 2)),
    };
  const dotGit = /\.git(\/|$)/.exec(pathname);
  if (dotGit)
    return {
      repositoryPath: pathname.slice(0, dotGit.index + 4),
      subfolder: trimSlashes(pathname.slice(dotGit.index + 4)),
    };
  if (OWNER_NAME_HOSTS.has(host)) {
    const segments = trimSlashes(pathname).split("/");
    return { repositoryPath: `/${segments.slice(0, 2).join("/")}`, subfolder: segments.slice(2).join("/") };
  }
  return { repositoryPath: pathname.replace(/\/+$/, ""), subfolder: "" };
}

function trimSlashes(text: string): string {
  return text.replace(/^\/+|\/+$/g, "");
}
