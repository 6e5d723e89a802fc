import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startDistribution } from "./registry-distribution.js";

/**
 * The registries the contract suite runs against: CNCF distribution (the real thing) and, once it
 * exists, the embedded sandbox registry — the same tests for both keep the emulator faithful.
 */
export interface StartedRegistry {
  url: string;
  host: string;
  credentials?: { username: string; password: string };
  /** Host of the token realm when it is not the registry itself. */
  realmHost?: string;
  /** Tokens issued so far, when the target can tell. */
  tokensIssued?: () => number;
  close(): Promise<void>;
}

export interface RegistryTarget {
  name: string;
  auth: "none" | "basic" | "bearer";
  start(): Promise<StartedRegistry>;
}

const EMBEDDED_MODULE = fileURLToPath(
  new URL("../../packages/sandbox/src/registry/embedded-registry.ts", import.meta.url),
);
const EMBEDDED_USERS = { ferry: "s3cret-canary-Pa55" };

interface EmbeddedModule {
  startEmbeddedRegistry(options?: {
    auth?: { kind: "basic" | "bearer"; users: Record<string, string> };
  }): Promise<{ url: string; host: string; close(): Promise<void> }>;
}

export function registryTargets(): RegistryTarget[] {
  const targets: RegistryTarget[] = [
    { name: "distribution (anonymous)", auth: "none", start: () => startDistribution("none") },
    { name: "distribution (htpasswd basic)", auth: "basic", start: () => startDistribution("basic") },
    {
      name: "distribution (token auth)",
      auth: "bearer",
      start: async () => {
        const running = await startDistribution("token");
        return {
          ...running,
          realmHost: running.tokenIssuer!.host,
          tokensIssued: () => running.tokenIssuer!.issued(),
        };
      },
    },
  ];
  if (existsSync(EMBEDDED_MODULE)) {
    const embedded = (auth: "none" | "basic" | "bearer") => async (): Promise<StartedRegistry> => {
      const module = (await import(EMBEDDED_MODULE)) as EmbeddedModule;
      const registry = await module.startEmbeddedRegistry(
        auth === "none" ? {} : { auth: { kind: auth, users: EMBEDDED_USERS } },
      );
      const [username, password] = Object.entries(EMBEDDED_USERS)[0]!;
      return {
        url: registry.url,
        host: registry.host,
        close: () => registry.close(),
        ...(auth === "none" ? {} : { credentials: { username, password } }),
        ...(auth === "bearer" ? { realmHost: registry.host } : {}),
      };
    };
    targets.push(
      { name: "embedded (anonymous)", auth: "none", start: embedded("none") },
      { name: "embedded (basic)", auth: "basic", start: embedded("basic") },
      { name: "embedded (bearer)", auth: "bearer", start: embedded("bearer") },
    );
  }
  return targets;
}
