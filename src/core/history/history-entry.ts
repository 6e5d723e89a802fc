/**
 * The words of an environment's history: a config-repository commit, the version an image runs, one change
 * of it (an entry) and the history they make. A leaf module, read by the history builder and by the
 * deployment reading that annotates its entries.
 */

/** One commit of the config repository, newest first as `git log` and GitHub list them. */
export interface HistoryCommit {
  sha: string;
  date: Date;
  /** GitHub login (or git author name) of whoever made the commit: for a merge, who merged. */
  author?: string;
  message: string;
}

export interface ImageVersion {
  tag?: string;
  digest?: string;
}

export type ChangeKind = "promotion" | "revert" | "edit";

export interface HistoryEntry {
  image: string;
  sha: string;
  date: Date;
  kind: ChangeKind;
  to: ImageVersion;
  from?: ImageVersion;
  by?: string;
  /** The pull request the commit merged, read from its message (`Merge pull request #4`, `Title (#4)`). */
  pull?: number;
  /** The commit's subject line. */
  subject: string;
}

export interface EnvironmentHistory {
  environment: string;
  /** Oldest first. */
  entries: HistoryEntry[];
  /** Set when the configured number of commits was read before the start of the history. */
  stoppedAt?: { commits: number; sha: string; date: Date };
}
