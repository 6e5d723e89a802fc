export {
  createRegistryClient,
  DEFAULT_REGISTRY_LIMITS,
  type RegistryClient,
  type RegistryClientOptions,
  type RegistryLimits,
} from "./registry-client.js";
export {
  RegistryAuthError,
  RegistryNotFoundError,
  RegistryProtocolError,
  RegistryUnavailableError,
} from "./errors.js";
export {
  readTrustedRootFile,
  refreshTrustedRoot,
  shippedTrustedRoot,
  trustedRootFromEnv,
  TrustedRootError,
} from "./trusted-root.js";
