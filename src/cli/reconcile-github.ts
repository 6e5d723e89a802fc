/**
 * `ferry reconcile`'s GitHub credentials (README "The reconciler"): `FERRY_GITHUB_TOKEN`, or a
 * GitHub App's id and private key (`--github-app-id`, `--github-app-key-file`, and optionally
 * `--github-installation-id`), from which installation tokens are minted as they expire.
 */
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { TokenSource } from "../reconciler/github-app-tokens.js";
import { UsageError, type CliIo } from "./io.js";

/** A PEM private key is a few KiB; anything far larger is no key. */
const MAX_KEY_BYTES = 64 * 1024;

export interface GitHubCredentialFlags {
  "github-repo"?: string | undefined;
  "github-api-url"?: string | undefined;
  "github-app-id"?: string | undefined;
  "github-app-key-file"?: string | undefined;
  "github-installation-id"?: string | undefined;
}

/** The static token, the App's token source, or undefined when neither is given. */
export async function githubCredentials(
  values: GitHubCredentialFlags,
  io: CliIo,
  usage: string,
): Promise<string | TokenSource | undefined> {
  const appId = values["github-app-id"];
  const keyFile = values["github-app-key-file"];
  const installation = values["github-installation-id"];
  const staticToken = io.env.FERRY_GITHUB_TOKEN || undefined;
  if (appId === undefined && keyFile === undefined && installation === undefined) return staticToken;
  const fail = (text: string): never => {
    throw new UsageError(`${text}\n${usage}`);
  };
  if (appId === undefined || keyFile === undefined)
    fail("--github-app-id and --github-app-key-file go together");
  if (!/^(\d{1,12}|Iv[\w.]{1,40})$/.test(appId!))
    fail(`--github-app-id must be the App's id or client id, got ${JSON.stringify(appId)}`);
  if (installation !== undefined && !/^\d{1,15}$/.test(installation))
    fail(`--github-installation-id must be a number, got ${JSON.stringify(installation)}`);
  if (!values["github-repo"]) fail("--github-app-id needs --github-repo (the repository it is installed on)");
  if (staticToken) fail("FERRY_GITHUB_TOKEN and --github-app-id are alternatives: give one");
  const file = path.resolve(io.cwd, keyFile!);
  const size = await stat(file).then(
    (info) => info.size,
    () => fail(`--github-app-key-file: cannot read ${file}`),
  );
  if (size > MAX_KEY_BYTES)
    fail(`--github-app-key-file: ${file} is larger than a private key (${size} bytes)`);
  const privateKey = await readFile(file, "utf8");
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(privateKey))
    fail(`--github-app-key-file: ${file} holds no PEM private key`);
  // Octokit's App auth is loaded only when the App's credentials are given.
  const { InstallationTokens } = await import("../reconciler/github-app-tokens.js");
  return new InstallationTokens({
    credentials: {
      appId: appId!,
      privateKey,
      ...(installation !== undefined ? { installationId: Number(installation) } : {}),
    },
    repository: values["github-repo"]!,
    ...(values["github-api-url"] ? { baseUrl: values["github-api-url"] } : {}),
    now: io.now,
  });
}
