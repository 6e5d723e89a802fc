/**
 * The environment kustomize and helm run in, set by the renderer's `/bin/sh` wrapper: Ferry's
 * tokens dropped, and a network confined to the render proxy (docs/security.md, "Render
 * network"). Every proxy variable names Ferry's filtering proxy and none exempts a host; git uses
 * the same proxy, only the admitted protocols (never ssh, git://, file:// or ext::), and reads no
 * system or user config (a private HOME), so no `insteadOf` rewrites a URL.
 */
import path from "node:path";
import { admittedProtocols } from "../core/egress-admission.js";

/** Variables that hold Ferry's tokens: never handed to the renderer. */
export const TOKEN_VARIABLES = ["FERRY_GITHUB_TOKEN", "FERRY_GIT_TOKEN"];

/** Variables that would exempt a host from the proxy or change what git reads or runs. */
const DROPPED = [
  "NO_PROXY",
  "no_proxy",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG",
  "GIT_CONFIG_SYSTEM",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_PROXY_COMMAND",
  "GIT_ASKPASS",
  "GIT_DIR",
  "GIT_WORK_TREE",
];

/** The variables set for a render through the proxy at `proxyUrl`, with `home` as its private HOME. */
export function confinementVariables(
  proxyUrl: string,
  home: string,
  prefixes: readonly string[],
): Record<string, string> {
  const protocols = admittedProtocols(prefixes);
  const proxies = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"];
  return {
    ...Object.fromEntries(proxies.map((name) => [name, proxyUrl])),
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.proxy",
    GIT_CONFIG_VALUE_0: proxyUrl,
    GIT_ALLOW_PROTOCOL: protocols.length > 0 ? protocols.join(":") : "none",
    GIT_TERMINAL_PROMPT: "0",
  };
}

/** What the renderer may see of a given environment: no tokens (FERRY_GITHUB_TOKEN…) reach it. */
const RENDERER_ENV = ["PATH", "HOME", "TMPDIR", "LANG", "SSL_CERT_FILE", "SSL_CERT_DIR"];

export function rendererEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const name of RENDERER_ENV) if (env[name] !== undefined) kept[name] = env[name];
  return kept;
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** Shell lines that apply the confinement to whatever environment the wrapper inherited. */
export function confinementScript(variables: Record<string, string>): string[] {
  return [
    `unset ${[...TOKEN_VARIABLES, ...DROPPED].join(" ")}`,
    ...Object.entries(variables).map(([name, value]) => `export ${name}=${quote(value)}`),
  ];
}
