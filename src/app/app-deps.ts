import type { ConfigContext } from "../core/config/config-context.js";
import type { FerryConfig } from "../core/config/schema.js";
import type { SecretRedactor } from "../core/redact.js";
import type { GitHubRepoPort } from "./github-port.js";
import type { KeyedMutex } from "./keyed-mutex.js";
import type { Notifier } from "./notifier.js";
import type { RegistryReader, SnapshotRenderer } from "./ports.js";
import type { RenderCache } from "./render-cache.js";
import type { RuleRefusals } from "./rule-refusals.js";

/** A structured logger with bound context (docs/architecture.md "Logging"); pino's and console-like loggers fit. */
export interface AppLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * Everything a use case needs, for one config repository of one installation. `GitHub` is the part
 * of the GitHub port the use case calls: each declares only its roles (`AppDeps<GitHubPulls &
 * GitHubComments>`), so a test fake or a reader of the code sees what it touches.
 */
export interface AppDeps<GitHub = GitHubRepoPort> {
  github: GitHub;
  /** The registry reader for a repository's config (credentials come from its `registries:`). */
  registryFor: (config: FerryConfig) => RegistryReader;
  now: () => Date;
  log: AppLogger;
  /** `https://github.com`, or the GHE web URL, for links in PR bodies. */
  webUrl: string;
  locks: KeyedMutex;
  /** What this Ferry lets a config ask of it (which GHCR, which variables); default: github.com's. */
  configContext?: ConfigContext;
  /** Every secret this process holds, for `errorText` (error-text.ts). */
  secrets?: SecretRedactor;
  /**
   * The app's own login (`ferry[bot]`): its comments are never commands, and only the PRs it
   * opened are Ferry's (undefined until known: then no PR is).
   */
  appLogin?: string;
  /** The key of the seal on the plan blocks Ferry writes into PR bodies (`pull-trust.ts`). */
  sealKey: string;
  /**
   * Pauses before each retry while GitHub still computes a PR's mergeability (default
   * `MERGEABILITY_RETRY_DELAYS_MS`); its length bounds the retries.
   */
  mergeabilityRetryDelaysMs?: readonly number[];
  /** Environments a repository ruleset refused, not written again until the rules or config change (rule-refusals.ts). */
  ruleRefusals?: RuleRefusals;
  /**
   * The `ferry/diff` check's renderer and its cache (shared by every repository of the process);
   * absent: no diff check is posted.
   */
  diff?: { renderer: SnapshotRenderer; cache: RenderCache };
  /** Called after a PR is opened or updated (metrics and the bench's push-to-PR latency). */
  onPullRequest?: (event: { environment: string; number: number; action: "opened" | "updated" }) => void;
  /** Where notifications go (notifications.ts); absent: no target is configured. */
  notify?: Notifier;
}

export interface LoadedConfig {
  config: FerryConfig;
  baseBranch: string;
  base: { sha: string; treeSha: string; protected: boolean };
}

export const silentLogger: AppLogger = { info: () => {}, warn: () => {}, error: () => {} };
