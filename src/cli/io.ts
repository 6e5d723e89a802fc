/** Exit codes of every `ferry` command (docs/config.md "CLI"). */
export const EXIT = {
  ok: 0,
  /** Invalid input: config, policy, file. */
  invalid: 1,
  /** Usage error: unknown command or flag, missing argument. */
  usage: 2,
  /** Nothing matched: no tag admitted, image not referenced. */
  noMatch: 3,
  /** `ferry diff --fail-on-danger`: a change would prune, delete a Namespace/CRD/PVC or change an immutable field. */
  danger: 4,
} as const;

/** What a command may touch; tests pass their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads all of stdin (for `ferry select` without --tags). */
  readStdin: () => Promise<string>;
  cwd: string;
  env: NodeJS.ProcessEnv;
  now: () => Date;
}

/** A usage mistake: printed with the command's usage line, exit 2. */
export class UsageError extends Error {}

export type CommandRun = (args: string[], io: CliIo) => Promise<number>;
