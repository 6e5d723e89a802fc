/** What a registry client is created with: the config's registries, credentials and their bindings, limits. */
import type { FetchLike } from "./fetch-types.js";
import type { TrustedRoot } from "@sigstore/protobuf-specs";
import type { FerryConfig } from "../../core/config/schema.js";
import type { SecretBindings } from "../../core/config/secret-bindings.js";
import type { SecretRedactor } from "../../core/redact.js";
import type { LookupFunction } from "./address-guard.js";
import type { RegistryLimits } from "./registry-limits.js";

export interface RegistryClientOptions {
  /** `registries:` of `.github/ferry.yml`, keyed by registry host. */
  registries?: FerryConfig["registries"];
  /** Where `passwordEnv` / `tokenEnv` are looked up. */
  env?: Record<string, string | undefined>;
  /**
   * The hosts (and installations) each variable of `env` may be sent to (secret-bindings.ts);
   * default: the `<NAME>_HOSTS`/`<NAME>_OWNERS` in `env` of the variables `env` holds. A secret
   * outside its binding is never read, whatever the config says.
   */
  secretBindings?: SecretBindings;
  /** The installation whose config this client reads (`ferry serve`); undefined in the CLI. */
  secretOwner?: string;
  /**
   * The non-secret variables that name Ferry's cloud identity in errors (AZURE_CLIENT_ID,
   * AZURE_TENANT_ID); default `env`. The SDKs read their credentials from the process environment.
   */
  identityEnv?: Record<string, string | undefined>;
  /** Installation token provider for `auth: github` (GHCR). */
  githubToken?: () => Promise<string>;
  /**
   * The one registry host the installation token may be sent to (the GitHub's container
   * registry, default `ghcr.io`), over HTTPS only, whatever the config says (docs/security.md).
   */
  githubTokenHost?: string;
  /**
   * Token realm hosts (host[:port]) that may receive a registry's credentials besides the
   * registry's own host, by registry name. Docker Hub's auth.docker.io is trusted by default.
   */
  trustedRealmHosts?: Record<string, string[]>;
  /**
   * Refuse registries at loopback or private addresses (the server sets this in production: a
   * config repo chooses its registry hosts, and must not point Ferry at internal services).
   * Link-local addresses (cloud metadata) are refused always.
   */
  refusePrivateRegistries?: boolean;
  /**
   * `auth: dockerconfig`: the Docker `config.json` to read (`auths`, `credHelpers`, `credsStore`).
   * An operator setting (FERRY_DOCKER_CONFIG), never taken from the config repo.
   */
  dockerConfigPath?: string;
  /** Tests only: the ECR and STS endpoint for `auth: aws` (a loopback fake). */
  ecrEndpoint?: string;
  /** Tests only: the CA of a loopback stand-in for Entra ID (AZURE_AUTHORITY_HOST) for `auth: azure`. */
  azureAuthorityCa?: string;
  /**
   * Tests only: the origin to contact for a registry name (a cloud registry's host served by a
   * loopback registry). Only loopback origins are accepted; no entry point sets this.
   */
  loopbackOrigins?: Record<string, string>;
  /** Where every credential this client handles is registered, so that no form of it reaches a text. */
  secrets?: SecretRedactor;
  /**
   * How many replicas share each registry's budget and concurrency (the live scan members): each
   * takes its part, so the fleet as a whole stays under `requestsPerMinute` and `concurrency`.
   */
  budgetShare?: () => number;
  /** Default: a fetch over node:http through the address guard (http-fetch.ts). Tests pass a scripted one. */
  fetch?: FetchLike;
  /** DNS for the guarded fetch (tests map names to addresses); default `dns.lookup`. */
  lookup?: LookupFunction;
  /**
   * The Sigstore trusted root keyless signatures chain to (trusted-root.ts); default the
   * public-good root shipped with @sigstore/tuf. An operator setting, never from the config repo.
   */
  trustedRoot?: TrustedRoot | (() => TrustedRoot);
  /** How long "not signed" is remembered for a digest (SIGNATURE_LIMITS.unsignedTtlMs). */
  unsignedTtlMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  limits?: Partial<RegistryLimits>;
}
