import type { TrustedRoot } from "@sigstore/protobuf-specs";
import { createRegistryClient, shippedTrustedRoot, type RegistryClient } from "../adapters/registry/index.js";
import type { OctokitLike } from "../adapters/github/github-repo.js";
import type { RegistryReader } from "../app/ports.js";
import type { FerryConfig } from "../core/config/schema.js";
import type { SecretBindings } from "../core/config/secret-bindings.js";
import type { SecretRedactor } from "../core/redact.js";

export interface RegistryReadersOptions {
  /** Where registry `passwordEnv`/`tokenEnv` are read. */
  env: Record<string, string | undefined>;
  /** The non-secret variables naming Ferry's cloud identity in errors (AZURE_CLIENT_ID, AZURE_TENANT_ID). */
  identityEnv?: Record<string, string | undefined>;
  refusePrivateRegistries: boolean;
  /** The Docker config.json for `auth: dockerconfig` (FERRY_DOCKER_CONFIG). */
  dockerConfigPath?: string;
  /** The GitHub's own container registry: the only host the installation token may go to. */
  githubTokenHost: string;
  /** Where each secret of `env` may be sent, and for which installations (secret-bindings.ts). */
  secretBindings: SecretBindings;
  /** Every secret this process holds; installation tokens join it as they are minted. */
  secrets: SecretRedactor;
  /** The Sigstore trusted root (an operator setting); default the one @sigstore/tuf ships. */
  trustedRoot?: TrustedRoot;
  /** Registry readers for a config (tests and the sandbox pass their own); default: the OCI client. */
  registryFor?: (config: FerryConfig, githubToken: () => Promise<string>) => RegistryReader;
  /** How many replicas share each registry's budget and concurrency (the live scan members). */
  budgetShare?: () => number;
}

/**
 * The registry reader for each config repository: one OCI client per owner and `registries:` block,
 * so the tag cache and per-registry budgets survive from one event to the next.
 */
export class RegistryReaders {
  readonly #clients = new Map<string, RegistryReader>();
  #trustedRoot: TrustedRoot | undefined;

  constructor(private readonly options: RegistryReadersOptions) {}

  for(config: FerryConfig, octokit: OctokitLike, owner: string): RegistryReader {
    const token = async (): Promise<string> => {
      const auth =
        (await (octokit as unknown as { auth: (o: { type: string }) => Promise<{ token: string }> }).auth({
          type: "installation",
        })) ?? {};
      this.options.secrets.add(auth.token);
      return auth.token;
    };
    if (this.options.registryFor) return this.options.registryFor(config, token);
    const key = `${owner}:${JSON.stringify(config.registries ?? {})}`;
    let client = this.#clients.get(key);
    if (!client) {
      client = createRegistryClient({
        registries: config.registries ?? {},
        env: this.options.env,
        secretBindings: this.options.secretBindings,
        secretOwner: owner,
        ...(this.options.identityEnv ? { identityEnv: this.options.identityEnv } : {}),
        githubToken: token,
        githubTokenHost: this.options.githubTokenHost,
        secrets: this.options.secrets,
        refusePrivateRegistries: this.options.refusePrivateRegistries,
        ...(this.options.dockerConfigPath ? { dockerConfigPath: this.options.dockerConfigPath } : {}),
        trustedRoot: () => this.trustedRoot(),
        ...(this.options.budgetShare ? { budgetShare: this.options.budgetShare } : {}),
      });
      this.#clients.set(key, client);
    }
    return client;
  }

  /** The Sigstore trusted root every client verifies with (FERRY_SIGSTORE_TRUSTED_ROOT, else the shipped one). */
  trustedRoot(): TrustedRoot {
    return (this.#trustedRoot ??= this.options.trustedRoot ?? shippedTrustedRoot());
  }

  /** A refreshed root (TUF) replaces the one every client checks with, from the next check on. */
  setTrustedRoot(root: TrustedRoot): void {
    this.#trustedRoot = root;
  }

  /** Per registry host: requests in the last minute and this replica's budget, over every owner's client. */
  budgetUse(): Record<string, { used: number; limit: number }> {
    const total: Record<string, { used: number; limit: number }> = {};
    for (const client of this.#clients.values()) {
      const use = (client as Partial<RegistryClient>).budgetUse?.() ?? {};
      for (const [registry, { used, limit }] of Object.entries(use)) {
        const entry = (total[registry] ??= { used: 0, limit: 0 });
        entry.used += used;
        entry.limit += limit;
      }
    }
    return total;
  }

  /** A registry hint says `repository` changed: every client forgets the tags it cached for it. */
  invalidate(repository: string): void {
    for (const client of this.#clients.values())
      (client as { invalidate?: (r: string) => void }).invalidate?.(repository);
  }
}
