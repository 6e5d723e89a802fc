export { createRegistryClient } from "./registry-client.js";
export type { RegistryClient } from "./registry-client-api.js";
export type { RegistryClientOptions } from "./registry-client-options.js";
export { DEFAULT_REGISTRY_LIMITS, type RegistryLimits } from "./registry-limits.js";
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
