import type { TrustedRoot } from "@sigstore/protobuf-specs";
import type { ImageDescription } from "../../app/ports.js";
import { secretBindingsFromEnv } from "../../core/config/secret-bindings.js";
import { imageName, isLoopbackRegistry, parseImageName, registryApiHost } from "../../core/image-ref.js";
import type { SignatureCheck, VerifyPolicy } from "../../core/policy/verify.js";
import { SecretRedactor } from "../../core/redact.js";
import { guardedFetch } from "./address-guard.js";
import { createAuthenticator } from "./auth.js";
import { Circuit, RequestBudget, Semaphore } from "./limits.js";
import { createManifestReader, type ArtifactManifest } from "./manifests.js";
import { createRepositoryFileReader } from "./repository-file.js";
import type { RegistryClient } from "./registry-client-api.js";
import type { RegistryClientOptions } from "./registry-client-options.js";
import { DEFAULT_REGISTRY_LIMITS, type RegistryLimits } from "./registry-limits.js";
import { failFor } from "./response-errors.js";
import type { SignatureChecker } from "./signatures.js";
import { createTagLister } from "./tags.js";
import { createTransport, refuseUnsafeRegistry, type RegistryState } from "./transport.js";
import { shippedTrustedRoot } from "./trusted-root.js";

/**
 * An OCI distribution client, wired from four parts that each fit in one sitting:
 * transport.ts (fetch through the address guard, redirects, timeouts, size caps, retries, the
 * per-registry circuit, budget and concurrency), auth.ts (challenges, token realms, credentials),
 * tags.ts (paginated tag lists and their shared cache) and manifests.ts (manifests and config
 * blobs, digests verified). This module keeps the per-registry state and wires the parts into the
 * client of registry-client-api.ts; the options and limits the parts share are leaf modules of their own.
 */

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

  const repositoryFile = createRepositoryFileReader({ auth, secrets, stateFor });

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
        signatures?.invalidate(name);
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

    async download(target: string, maxBytes: number): Promise<Buffer> {
      return repositoryFile(target, maxBytes);
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
      return (await signatureChecker()).check(target(repositoryName).name, digest, verify);
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
  // Sigstore's verifier is loaded at the first signature check: a client that checks none (a plan
  // whose config has no `verify:`) never loads it.
  let signatures: SignatureChecker | undefined;
  let loading: Promise<SignatureChecker> | undefined;
  const signatureChecker = (): Promise<SignatureChecker> =>
    (loading ??= import("./signatures.js").then(
      ({ createSignatureChecker }) =>
        (signatures = createSignatureChecker(client, {
          trustedRoot: () =>
            typeof trustedRoot === "function"
              ? trustedRoot()
              : (trustedRoot ?? (shipped ??= shippedTrustedRoot())),
          now,
          ...(options.unsignedTtlMs !== undefined ? { unsignedTtlMs: options.unsignedTtlMs } : {}),
        })),
    ));
  return client;
}

function loopbackOrigin(origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  const url = new URL(origin);
  if (!isLoopbackRegistry(url.host))
    throw new Error(`loopbackOrigins accepts loopback origins only, not ${url.host}`);
  return url.origin;
}
