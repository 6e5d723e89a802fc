export { hintsFromGitHubPackageEvent } from "./hints-from-github.js";
export {
  hintsFromDistribution,
  hintsFromDockerHub,
  hintsFromGeneric,
  hintsFromHarbor,
  hintsFromQuay,
} from "./hints-from-payloads.js";
export { hintRepository, type RegistryHint } from "./registry-hint.js";
export { onRegistryHints, type RegistryHintEvent, type RegistryHintServices } from "./on-registry-hints.js";
