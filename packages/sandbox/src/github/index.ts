/** The GitHub emulator: a real-git-backed stand-in for api.github.com, for tests and `ferry sandbox`. */
import { GitHubEmulator } from "./emulator.js";

export { GitHubEmulator, ALL_EVENTS } from "./emulator.js";
export type {
  CreateAppOptions,
  CreateRepoOptions,
  Delivery,
  ProtectBranchOptions,
  RecordedRequest,
  RepoRole,
} from "./emulator.js";
export type { RateLimitFault, ServerErrorFault } from "./faults.js";
/**
 * What tests and the sandbox story do to an emulator, as plain functions taking it first
 * (`actAs.comment(emu, owner, repo, number, body, { as })`): set-up (`accounts`, `repos`), acting as
 * a person or CI (`actAs`), and read-only inspection (`inspect`). Webhook deliveries are
 * `emu.webhooks`.
 */
export * as accounts from "./emulator-accounts.js";
export * as repos from "./emulator-repos.js";
export * as actAs from "./emulator-act-as.js";
export * as inspect from "./emulator-inspect.js";

export function startGitHubEmulator(options: { dataDir?: string } = {}): Promise<GitHubEmulator> {
  return GitHubEmulator.start(options);
}
