/**
 * `ferry serve`'s Sigstore trusted root, refreshed through TUF (FERRY_SIGSTORE_TUF_MIRROR): once at
 * start, then every interval. A refresh that fails (mirror down, a tampered target, expired or
 * badly signed metadata) leaves the last good root in use and logs one line saying why; see
 * docs/security.md and https://docs.sigstore.dev/about/security/.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TrustedRoot } from "@sigstore/protobuf-specs";
import { refreshTrustedRoot } from "../adapters/registry/index.js";
import { schedulePeriodicScan } from "./periodic-scan.js";

export interface TrustedRootRefreshSettings {
  /** Default the public-good instance. */
  mirrorURL?: string;
  /** The TUF root.json to start from (required for a mirror other than the public-good one). */
  rootPath?: string;
  /** Default 24 h; false: only at start. */
  intervalMs?: number | false;
  /** Per TUF request; default 30 s. */
  timeoutMs?: number;
}

export interface TrustedRootRefresher {
  /** Refreshes now; true when the new root is in use, false when the last good one stays. */
  refresh(): Promise<boolean>;
  stop(): void;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function startTrustedRootRefresh(
  settings: TrustedRootRefreshSettings,
  apply: (root: TrustedRoot) => void,
  log: { info(fields: object, message: string): void; warn(fields: object, message: string): void },
): TrustedRootRefresher {
  // The verified TUF metadata persist for the life of the process: each refresh continues the
  // chain from the root it last verified (root rotation), not from the starting root.json.
  const cachePath = mkdtempSync(join(tmpdir(), "ferry-sigstore-tuf-"));
  // One refresh at a time: two TUF clients must not write the same cache at once.
  let inFlight: Promise<boolean> | undefined;
  const refresh = (): Promise<boolean> =>
    (inFlight ??= refreshOnce().finally(() => {
      inFlight = undefined;
    }));
  const refreshOnce = async (): Promise<boolean> => {
    try {
      const { root } = await refreshTrustedRoot({
        cachePath,
        ...(settings.mirrorURL !== undefined ? { mirrorURL: settings.mirrorURL } : {}),
        ...(settings.rootPath !== undefined ? { rootPath: settings.rootPath } : {}),
        ...(settings.timeoutMs !== undefined ? { timeoutMs: settings.timeoutMs } : {}),
      });
      apply(root);
      log.info(
        { certificateAuthorities: root.certificateAuthorities.length, tlogs: root.tlogs.length },
        "sigstore trusted root refreshed through TUF",
      );
      return true;
    } catch (error) {
      log.warn(
        {},
        `sigstore trusted root refresh failed, keeping the last good root: ${(error as Error).message}`,
      );
      return false;
    }
  };
  const schedule = schedulePeriodicScan(
    settings.intervalMs ?? DAY_MS,
    async () => {
      await refresh();
    },
    () => {},
  );
  return {
    refresh,
    stop() {
      schedule.stop();
      void (inFlight ?? Promise.resolve()).finally(() => rmSync(cachePath, { recursive: true, force: true }));
    },
  };
}
