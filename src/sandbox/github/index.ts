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

export function startGitHubEmulator(options: { dataDir?: string } = {}): Promise<GitHubEmulator> {
  return GitHubEmulator.start(options);
}
