import type { ImageDescription, RegistryReader } from "../../app/ports.js";
import type { FerryConfig } from "../../core/config/schema.js";
import { imageName, isLoopbackRegistry, parseImageName, registryApiHost } from "../../core/image-ref.js";
import { SecretRedactor } from "../../core/redact.js";
import { guardedFetch, type LookupFunction } from "./address-guard.js";
import { secretBindingsFromEnv, type SecretBindings } from "../../core/config/secret-bindings.js";
import { createAuthenticator } from "./auth.js";
import { Circuit, RequestBudget, Semaphore } from "./limits.js";
import type { SignatureCheck, VerifyPolicy } from "../../core/policy/verify.js";
import { createManifestReader, type ArtifactManifest } from "./manifests.js";
import { failFor } from "./response-errors.js";
import { createSignatureChecker } from "./signatures.js";
import { shippedTrustedRoot } from "./trusted-root.js";
import type { TrustedRoot } from "@sigstore/protobuf-specs";
import { createTagLister } from "./tags.js";
import { createTransport, refuseUnsafeRegistry, type RegistryState } from "./transport.js";

/**
 * An OCI distribution client, wired from four parts that each fit in one sitting:
 * transport.ts (fetch through the address guard, redirects, timeouts, size caps, retries, the
 * per-registry circuit, budget and concurrency), auth.ts (challenges, token realms, credentials),
 * tags.ts (paginated tag lists and their shared cache) and manifests.ts (manifests and config
 * blobs, digests verified). This module keeps the per-registry state and the public surface.
 */

export interface RegistryLimits {
  /** More tags than this is an error, never a truncated list (docs/reliability.md row 18). */
  maxTags: number;
  maxPages: number;
  /** Wall-clock cap on one tag walk. */
  listTimeoutMs: number;
  /** `n` sent on tags/list. */
  pageSize: number;
  maxManifestBytes: number;
  maxConfigBytes: number;
  maxTagPageBytes: number;
  requestTimeoutMs: number;
  /** Retries after a 5xx, network error or timeout (so maxRetries + 1 attempts). */
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxRedirects: number;
  /** Default budget when `registries.<host>.requestsPerMinute` is not set. */
  requestsPerMinute: number;
  /** Waiting for the budget longer than this fails with a TransientError instead. */
  maxBudgetWaitMs: number;
  /** Default when `registries.<host>.concurrency` is not set. */
  concurrency: number;
  /** Back-off after a 429 that names no time. */
  defaultBackoffMs: number;
  /** How long a tag list is reused; 0 disables the shared cache. */
  tagCacheTtlMs: number;
}

export const DEFAULT_REGISTRY_LIMITS: RegistryLimits = {
  maxTags: 200_000,
  maxPages: 5_000,
  listTimeoutMs: 120_000,
  pageSize: 1000,
  maxManifestBytes: 4 * 1024 * 1024,
  maxConfigBytes: 8 * 1024 * 1024,
  maxTagPageBytes: 64 * 1024 * 1024,
  requestTimeoutMs: 30_000,
  maxRetries: 3,
  retryBaseMs: 500,
  retryMaxMs: 10_000,
  maxRedirects: 3,
  requestsPerMinute: 600,
  maxBudgetWaitMs: 10_000,
  concurrency: 8,
  defaultBackoffMs: 60_000,
  tagCacheTtlMs: 60_000,
};

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
  /** Default: undici's fetch through the address guard. Tests pass a scripted one. */
  fetch?: typeof fetch;
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

export type { ArtifactManifest } from "./manifests.js";

export interface RegistryClient extends RegistryReader {
  /**
   * A manifest's JSON by tag or digest, digest-verified; undefined when the registry has none (404).
   * For artifacts that are not images (signatures, referrer indexes).
   */
  manifest(repository: string, reference: string): Promise<ArtifactManifest | undefined>;
  /** A blob by digest, at most `maxBytes`, verified against its digest. */
  blob(repository: string, digest: string, maxBytes: number): Promise<Buffer>;
  /**
   * The OCI 1.1 referrers API (`GET /v2/<name>/referrers/<digest>`): the image index listing the
   * manifests whose subject is `digest`, or undefined when the registry does not offer the API (404).
   */
  referrers(repository: string, digest: string): Promise<Record<string, unknown> | undefined>;
  checkSignature(repository: string, digest: string, verify: VerifyPolicy): Promise<SignatureCheck>;
  /**
   * One authenticated `GET /v2/<name>/tags/list?n=1`, resolving when the registry lets this client
   * read `repository` (`ferry check`'s probe): the credential errors are the ones a scan would meet.
   */
  checkAccess(repository: string): Promise<void>;
  /** Drops the cached tag list of a repository (a webhook said it changed). */
  invalidate(repository: string): void;
  /** HTTP requests sent so far, by registry name (token fetches and redirects included). */
  requestCounts(): Record<string, number>;
  /** Per registry: requests started in the last minute and this replica's share of the budget. */
  budgetUse(): Record<string, { used: number; limit: number }>;
}

export function createRegistryClient(options: RegistryClientOptions = {}): RegistryClient {
  const limits: RegistryLimits = { ...DEFAULT_REGISTRY_LIMITS, ...options.limits };
  const now = options.now ?? Date.now;
  const secrets = options.secrets ?? new SecretRedactor();
  const transport = createTransport({
    limits,
    fetch:
      options.fetch ??
      guardedFetch({
        refusePrivate: options.refusePrivateRegistries ?? false,
        ...(options.lookup ? { lookup: options.lookup } : {}),
      }),
    now,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: options.random ?? Math.random,
  });
  const auth = createAuthenticator({
    transport,
    options,
    env: options.env ?? {},
    secretBindings:
      options.secretBindings ??
      secretBindingsFromEnv(options.env ?? {}, (name) => options.env?.[name] !== undefined),
    secrets,
    now,
  });
  const tags = createTagLister({ auth, limits, now, secrets });
  const manifests = createManifestReader({ auth, limits, secrets });
  const states = new Map<string, RegistryState>();
  const share = (): number => Math.max(1, options.budgetShare?.() ?? 1);

  function stateFor(registry: string): RegistryState {
    let state = states.get(registry);
    if (!state) {
      refuseUnsafeRegistry(registry, options.refusePrivateRegistries ?? false);
      const config = options.registries?.[registry] ?? options.registries?.[registryApiHost(registry)];
      const plain = config?.insecure ?? isLoopbackRegistry(registry);
      state = {
        registry,
        origin:
          loopbackOrigin(options.loopbackOrigins?.[registry]) ??
          `${plain ? "http" : "https"}://${registryApiHost(registry)}`,
        config,
        circuit: new Circuit(),
        budget: new RequestBudget(() => (config?.requestsPerMinute ?? limits.requestsPerMinute) / share()),
        semaphore: new Semaphore(() => (config?.concurrency ?? limits.concurrency) / share()),
        requests: 0,
        tokens: new Map(),
      };
      states.set(registry, state);
    }
    return state;
  }

  function target(repository: string): { state: RegistryState; repository: string; name: string } {
    const ref = parseImageName(repository);
    return { state: stateFor(ref.registry), repository: ref.repository, name: imageName(ref) };
  }

  // Async, so that a refused registry (refuseUnsafeRegistry in stateFor) rejects rather than throws.
  const client: RegistryClient = {
    async listTags(repositoryName: string): Promise<string[]> {
      const { state, repository, name } = target(repositoryName);
      return tags.listTags(state, repository, name);
    },

    async resolveDigest(repositoryName: string, reference: string): Promise<string> {
      const { state, repository } = target(repositoryName);
      return manifests.resolveDigest(state, repository, reference);
    },

    async describe(repositoryName: string, reference: string): Promise<ImageDescription> {
      const { state, repository } = target(repositoryName);
      return manifests.describe(state, repository, reference);
    },

    async checkAccess(repositoryName: string): Promise<void> {
      const { state, repository } = target(repositoryName);
      const url = new URL(`${state.origin}/v2/${repository}/tags/list?n=1`);
      const response = await auth.request(state, repository, url, "GET", "application/json", 64 * 1024);
      if (response.status !== 200) failFor(state, repository, "tags/list", response, secrets);
    },

    invalidate(repositoryName: string): void {
      try {
        const name = imageName(parseImageName(repositoryName));
        tags.invalidate(name);
        signatures.invalidate(name);
      } catch {
        // a hint about a name we could never have cached
      }
    },

    async manifest(repositoryName: string, reference: string): Promise<ArtifactManifest | undefined> {
      const { state, repository } = target(repositoryName);
      return manifests.manifest(state, repository, reference);
    },

    async blob(repositoryName: string, digest: string, maxBytes: number): Promise<Buffer> {
      const { state, repository } = target(repositoryName);
      return manifests.blob(state, repository, digest, maxBytes);
    },

    async referrers(repositoryName: string, digest: string): Promise<Record<string, unknown> | undefined> {
      const { state, repository } = target(repositoryName);
      return manifests.referrers(state, repository, digest);
    },

    async checkSignature(
      repositoryName: string,
      digest: string,
      verify: VerifyPolicy,
    ): Promise<SignatureCheck> {
      return signatures.check(target(repositoryName).name, digest, verify);
    },

    requestCounts(): Record<string, number> {
      return Object.fromEntries([...states.values()].map((state) => [state.registry, state.requests]));
    },
    budgetUse() {
      return Object.fromEntries(
        [...states.values()].map((state) => [state.registry, state.budget.use(now())]),
      );
    },
  };
  // Discovery uses only the public methods above, and caches verified digests for the client's life.
  const trustedRoot = options.trustedRoot;
  let shipped: TrustedRoot | undefined;
  const signatures = createSignatureChecker(client, {
    trustedRoot: () =>
      typeof trustedRoot === "function" ? trustedRoot() : (trustedRoot ?? (shipped ??= shippedTrustedRoot())),
    now,
    ...(options.unsignedTtlMs !== undefined ? { unsignedTtlMs: options.unsignedTtlMs } : {}),
  });
  return client;
}

function loopbackOrigin(origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  const url = new URL(origin);
  if (!isLoopbackRegistry(url.host))
    throw new Error(`loopbackOrigins accepts loopback origins only, not ${url.host}`);
  return url.origin;
}
