/**
 * How the sandbox (and the tests) register the real Ferry app with the GitHub emulator: the
 * permissions and events come from `app.yml`, the manifest users register, so the emulated app can
 * never hold a permission the real one does not ask for (or miss one it does).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ProbotOctokit } from "probot";
import { parse } from "yaml";

/** Probot's Octokit with throttling and retries off: the emulator rate-limits only when told to. */
export const UnthrottledOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  throttle: { enabled: false },
  retry: { enabled: false },
})) as unknown as typeof ProbotOctokit;

export interface FerryAppManifest {
  permissions: Record<string, "read" | "write">;
  events: string[];
}

let manifest: FerryAppManifest | undefined;

/** `app.yml`'s `default_permissions` and `default_events` (found above this module: src/ or dist/). */
export function ferryAppManifest(): FerryAppManifest {
  if (manifest) return manifest;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "app.yml"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("app.yml not found above the sandbox");
    dir = parent;
  }
  const parsed = parse(readFileSync(join(dir, "app.yml"), "utf8")) as {
    default_permissions: Record<string, "read" | "write">;
    default_events: string[];
  };
  manifest = { permissions: parsed.default_permissions, events: parsed.default_events };
  return manifest;
}
