/**
 * The operator bindings of the ambient credentials (`auth: aws|gcp|azure|dockerconfig`) for tests
 * that use them: each kind bound to `hosts` and, for `ferry serve`, to `owners` (docs/security.md,
 * "Multi-tenant model").
 */
import { DEFAULT_CONFIG_CONTEXT, type ConfigContext } from "../../src/core/config/config-context.js";
import {
  AMBIENT_CREDENTIALS,
  secretBindingsFromEnv,
  type SecretBindings,
} from "../../src/core/config/secret-bindings.js";

/** `FERRY_CLOUD_AUTH_AWS_HOSTS=…`, `…_OWNERS=…` and the like for every ambient kind. */
export function ambientBindingEnv(hosts: readonly string[], owners = "*"): Record<string, string> {
  return Object.fromEntries(
    Object.values(AMBIENT_CREDENTIALS).flatMap((name) => [
      [`${name}_HOSTS`, hosts.join(",")],
      [`${name}_OWNERS`, owners],
    ]),
  );
}

export function ambientBindings(hosts: readonly string[], owners = "*"): SecretBindings {
  return secretBindingsFromEnv(ambientBindingEnv(hosts, owners), () => false);
}

/** The default config context with every ambient kind bound to `hosts`. */
export function contextWithAmbient(hosts: readonly string[]): ConfigContext {
  return { ...DEFAULT_CONFIG_CONTEXT, secretBindings: ambientBindings(hosts) };
}
