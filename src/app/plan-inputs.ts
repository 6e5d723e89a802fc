/**
 * What planning an environment reads: where its files come from, the ports it calls, the options that steer
 * it and what an environment runs now. Shared by the planner and the target chooser.
 */
import type { SecretRedactor } from "../core/redact.js";
import type { ImageDescription, RegistryReader } from "./ports.js";

/** Where an environment's files come from: a local checkout (CLI) or the Git Data API (app). */
export interface FileSource {
  /** Repo-relative paths of the YAML files under `paths`; refuses symlinks and paths outside the repo. */
  listFiles(paths: string[]): Promise<string[]>;
  readFile(path: string): Promise<string>;
  /** Files left out of `listFiles` so far, each with the reason (e.g. over the size limit). */
  skipped?(): SkippedFile[];
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface PlanDependencies {
  registry: RegistryReader;
  files: FileSource;
  now: Date;
  /** Redacts registry errors that become plan reasons (error-text.ts). */
  secrets?: SecretRedactor | undefined;
}

export interface PlanOptions {
  /** Exact values for promotion and rollback; may go backwards, bypass policy and holds. */
  pins?: Record<string, { tag?: string; digest: string }>;
  /** Never propose a tag at or below this one (holds lifted after a human revert, rejected versions). */
  floor?: Record<string, string>;
  /** Only these images are planned (default: all). */
  images?: string[];
  /**
   * A registry error for one image: `throw` (default: the app must not act on a partial plan,
   * e.g. close a PR as no longer wanted because one read failed) or `report` it as that image's
   * unchanged reason and plan the others (`ferry plan`).
   */
  onRegistryError?: "throw" | "report";
  /** CI gating: is this tag eligible (its source commit passed CI)? A string is the reason it is not. */
  eligible?: (image: string, tag: string, description: ImageDescription) => Promise<boolean | string>;
}

export interface CurrentImage {
  tag?: string;
  digest?: string;
  file: string;
  line: number;
}
