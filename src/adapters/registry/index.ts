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
  displayUrl,
  PUBLIC_GOOD_TUF_MIRROR,
  readTrustedRootFile,
  refreshTrustedRoot,
  shippedTrustedRoot,
  trustedRootFromEnv,
  TrustedRootError,
  type TrustedRootRefreshOptions,
} from "./trusted-root.js";
