export { createRegistryReceiver, SIGNATURE_HEADER } from "./registry-receiver.js";
export type {
  RegistryReceiver,
  RegistryReceiverOptions,
  RegistryRequestHandler,
} from "./registry-receiver.js";
export { hintsFromGitHubPackageEvent } from "./hints-from-github.js";
export {
  hintsFromDistribution,
  hintsFromDockerHub,
  hintsFromGeneric,
  hintsFromHarbor,
  hintsFromQuay,
} from "./hints-from-payloads.js";
export type { RegistryHint } from "./registry-hint.js";
