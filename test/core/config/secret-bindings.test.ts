import { describe, expect, it } from "vitest";
import { configContextFromEnv, type ConfigContext } from "../../../src/core/config/config-context.js";
import { loadConfig } from "../../../src/core/config/load-config.js";
import { secretUseProblem, SECRETS_NEVER_SENT } from "../../../src/core/config/secret-bindings.js";

/**
 * A secret a config names is used only for the hosts, and in `ferry serve` only by the
 * installations, its operator bound it to (docs/security.md "Multi-tenant model").
 */

const config = (host: string, settings: string) =>
  `images:\n  shop:\n    repository: ${host}/acme/shop\nenvironments:\n  prod:\n    paths: [overlays/prod]\nregistries:\n  ${host}: ${settings}\n`;

function problems(text: string, context: ConfigContext) {
  const result = loadConfig(text, context);
  return result.ok ? [] : result.problems.map((p) => `${p.line}:${p.column} ${p.message}`);
}

const ACME = {
  FERRY_REGISTRY_ACME: "acme-password",
  FERRY_REGISTRY_ACME_HOSTS: "registry.acme.example, Harbor.Acme.Example:8443",
  FERRY_REGISTRY_ACME_OWNERS: "Acme",
};
const basic = "{ username: u, passwordEnv: FERRY_REGISTRY_ACME }";

describe("secret bindings in the config rules", () => {
  it("refuses a secret with no hosts bound, at its line, saying how to bind it", () => {
    expect(
      problems(config("registry.acme.example", basic), configContextFromEnv({ FERRY_REGISTRY_ACME: "x" })),
    ).toEqual([
      "8:41 passwordEnv FERRY_REGISTRY_ACME is not bound to any host: the operator binds it with FERRY_REGISTRY_ACME_HOSTS=<host>[,<host>]",
    ]);
  });

  it("allows only the bound hosts, exactly (any case, the port included), in the CLI", () => {
    const cli = configContextFromEnv(ACME);
    expect(problems(config("registry.acme.example", basic), cli)).toEqual([]);
    expect(problems(config("harbor.acme.example:8443", basic), cli)).toEqual([]);
    expect(problems(config("harbor.acme.example", basic), cli)).toEqual([
      "8:39 passwordEnv FERRY_REGISTRY_ACME is bound to registry.acme.example, harbor.acme.example:8443, not harbor.acme.example: Ferry never sends it to another host",
    ]);
    expect(problems(config("registry.acme.example.evil.example", basic), cli)).toHaveLength(1);
    expect(
      problems(config("127.0.0.1:5000", "{ auth: bearer, tokenEnv: FERRY_REGISTRY_ACME }"), cli),
    ).toEqual([
      expect.stringMatching(/^8:\d+ tokenEnv FERRY_REGISTRY_ACME is bound to .*, not 127\.0\.0\.1:5000:/),
    ]);
  });

  it("in ferry serve, refuses a secret of another installation without saying where it goes", () => {
    const other = { ...configContextFromEnv(ACME), installationOwner: "globex" };
    const [problem, ...rest] = problems(config("registry.acme.example", basic), other);
    expect(rest).toEqual([]);
    expect(problem).toBe(
      "8:41 passwordEnv FERRY_REGISTRY_ACME is not available to installation globex: the operator binds each secret to the installations that may use it (FERRY_REGISTRY_ACME_OWNERS)",
    );
    expect(problem).not.toContain("registry.acme.example,");
    expect(problems(config("registry.acme.example", basic), { ...other, installationOwner: "acme" })).toEqual(
      [],
    );
  });

  it("in ferry serve, refuses a secret bound to no installation, and * binds it to every one", () => {
    const { FERRY_REGISTRY_ACME_OWNERS: _owners, ...hostsOnly } = ACME;
    const unbound = { ...configContextFromEnv(hostsOnly), installationOwner: "acme" };
    expect(problems(config("registry.acme.example", basic), unbound)).toEqual([
      "8:41 passwordEnv FERRY_REGISTRY_ACME is not bound to any installation: the operator lists the installations that may use it in FERRY_REGISTRY_ACME_OWNERS=<owner>[,<owner>] (or * for every one)",
    ]);
    const everyone = {
      ...configContextFromEnv({ ...hostsOnly, FERRY_REGISTRY_ACME_OWNERS: "*" }),
      installationOwner: "globex",
    };
    expect(problems(config("registry.acme.example", basic), everyone)).toEqual([]);
  });

  it("treats Docker Hub's names as one host", () => {
    const context = configContextFromEnv({ FERRY_REGISTRY_HUB_HOSTS: "registry-1.docker.io" });
    expect(
      problems(config("docker.io", "{ username: u, passwordEnv: FERRY_REGISTRY_HUB }"), context),
    ).toEqual([]);
    expect(
      problems(config("index.docker.io", "{ username: u, passwordEnv: FERRY_REGISTRY_HUB }"), context),
    ).toEqual([]);
  });

  it("never lets a config name a binding as its secret", () => {
    expect(
      problems(
        config("registry.acme.example", "{ username: u, passwordEnv: FERRY_REGISTRY_ACME_HOSTS }"),
        configContextFromEnv(ACME),
      ),
    ).toEqual([
      expect.stringContaining("FERRY_REGISTRY_ACME_HOSTS is the binding of a secret, not a secret"),
    ]);
  });
});

describe("parsing the bindings", () => {
  it("refuses a binding that is not an exact host, or names nothing", () => {
    for (const value of ["https://ghcr.io", "*.acme.example", "ghcr.io/acme", "*", " , "])
      expect(() => configContextFromEnv({ FERRY_REGISTRY_X_HOSTS: value })).toThrow(/FERRY_REGISTRY_X_HOSTS/);
    expect(() => configContextFromEnv({ FERRY_REGISTRY_X_OWNERS: "acme,*" })).toThrow(
      /FERRY_REGISTRY_X_OWNERS/,
    );
    expect(() => configContextFromEnv({ FERRY_REGISTRY_X_OWNERS: "" })).toThrow(/names no installation/);
  });

  it("leaves alone variables that end so but bind nothing a config may name", () => {
    const context = configContextFromEnv({
      ALLOWED_HOSTS: "*",
      NODE_OWNERS: "",
      HARBOR_TOKEN_HOSTS: "harbor.example",
    });
    expect(context.secretBindings).toEqual({ kind: "bound", byName: new Map() });
    const allowed = configContextFromEnv({
      FERRY_REGISTRY_ENV_ALLOW: "HARBOR_TOKEN",
      HARBOR_TOKEN_HOSTS: "harbor.example",
    });
    expect(
      secretUseProblem(allowed.secretBindings, { secret: "HARBOR_TOKEN", host: "harbor.example" }),
    ).toBeUndefined();
  });

  it("binds nothing for a reader that sends no secret", () => {
    expect(
      secretUseProblem(SECRETS_NEVER_SENT, { secret: "ANY", host: "evil.example", owner: "x" }),
    ).toBeUndefined();
  });
});
