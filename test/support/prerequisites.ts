/**
 * Vitest global setup for `npm test`: before any test file starts, check that the tools the suite
 * runs for real are on this machine, and stop at once naming each missing one and how to get it
 * (`npm test` provisions them first through `test/support/provision.sh`; this catches a plain
 * `npx vitest`, which finds what that script built in the cache). Without this a machine lacking, say, kubectl ran for minutes and
 * failed in the render tests with a spawn error. The tool list and why each is needed:
 * docs/testing.md.
 */
import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import {
  findExecutable,
  findRenderer,
  MISSING_AGE_KEYGEN_HELP,
  MISSING_HELM_HELP,
  MISSING_RENDERER_HELP,
  MISSING_SOPS_HELP,
  PINNED_AGE,
  PINNED_HELM,
  PINNED_KUSTOMIZE,
  PINNED_SOPS,
} from "../../src/adapters/render/render-tools.js";
import { DISTRIBUTION_BINARY } from "./registry-distribution.js";

/** Debian's chromium: the status page test drives it through playwright-core. */
export const CHROMIUM_BINARY = process.env.FERRY_CHROMIUM_BINARY ?? "/usr/bin/chromium";

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** One line per missing tool, naming it and how to install it; empty when all are present. */
export function missingPrerequisites(searchPath: string | undefined): string[] {
  const missing: string[] = [];
  if (!findExecutable("git", searchPath))
    missing.push("git is not on PATH: install git (apt-get install git)");
  if (!executable(DISTRIBUTION_BINARY)) {
    missing.push(
      `${DISTRIBUTION_BINARY} is missing: the registry tests run CNCF distribution (apt-get install docker-registry)`,
    );
  }
  if (!findExecutable("htpasswd", searchPath)) {
    missing.push("htpasswd is not on PATH: the registry tests use it (apt-get install apache2-utils)");
  }
  if (!findRenderer(searchPath)) missing.push(MISSING_RENDERER_HELP);
  if (!findExecutable("helm", searchPath)) missing.push(MISSING_HELM_HELP);
  if (!findExecutable("sops", searchPath)) missing.push(MISSING_SOPS_HELP);
  if (!findExecutable("age-keygen", searchPath)) missing.push(MISSING_AGE_KEYGEN_HELP);
  if (!executable(CHROMIUM_BINARY)) {
    missing.push(`${CHROMIUM_BINARY} is missing: the status page test drives it (apt-get install chromium)`);
  }
  return missing;
}

/** `searchPath` with the cache folders `provision.sh` builds kustomize, helm, sops and age-keygen into, where they exist. */
export function withProvisionedTools(searchPath: string | undefined): string {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "ferry");
  const built = [
    ["helm", PINNED_HELM],
    ["kustomize", PINNED_KUSTOMIZE],
    ["sops", PINNED_SOPS],
    ["age-keygen", PINNED_AGE],
  ]
    .map(([tool, version]) => ({ tool: tool!, dir: join(cache, `${tool}-${version}`, "bin") }))
    .filter(({ tool, dir }) => findExecutable(tool, dir))
    .map(({ dir }) => dir);
  return [...built, ...(searchPath ? [searchPath] : [])].join(delimiter);
}

export default function setup(): void {
  // The test workers are forked after this, with this environment.
  process.env.PATH = withProvisionedTools(process.env.PATH);
  const missing = missingPrerequisites(process.env.PATH);
  if (missing.length === 0) return;
  // A plain message and exit, not a thrown error: vitest would print its own stack around it.
  process.stderr.write(
    `npm test needs tools this machine lacks (npm test provisions them: bash test/support/provision.sh):\n  - ${missing.join("\n  - ")}\n`,
  );
  process.exit(1);
}
