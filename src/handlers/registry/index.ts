export { hintsFromGitHubPackageEvent } from "./hints-from-github.js";
export {
  hintsFromDistribution,
  hintsFromDockerHub,
  hintsFromGeneric,
  hintsFromHarbor,
  hintsFromQuay,
} from "./hints-from-payloads.js";
export type { RegistryHint } from "./registry-hint.js";
