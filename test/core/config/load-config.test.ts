import { describe, expect, it } from "vitest";
import { loadConfig, formatProblems } from "../../../src/core/config/load-config.js";
import { environmentOrder } from "../../../src/core/config/schema.js";
import { environmentPolicy } from "../../../src/core/policy/layered-policy.js";
import {
  configContextFromEnv,
  DEFAULT_CONFIG_CONTEXT,
  githubContainerRegistry,
} from "../../../src/core/config/config-context.js";

const DOCS_EXAMPLE = `images:
  shop:
    repository: ghcr.io/acme/shop     # where tags are looked up
    source: acme/shop
    policy: { range: "^1.0.0" }
environments:
  staging:
    paths: [overlays/staging]
    update: auto
    merge: auto
  prod:
    paths: [overlays/prod]
    from: staging
    update: manual
    merge: review
    soak: 30m
    promoters: { permission: maintain, teams: [acme/release] }
    policy: { shop: { range: "^1.0.0" } }
registries:
  ghcr.io: { auth: github }
  registry.example.com: { username: ferry, passwordEnv: FERRY_REGISTRY_PASSWORD }
  registry.internal:5000: { insecure: true }
`;

describe("loadConfig", () => {
  it("accepts the example from docs/config.md and fills defaults", () => {
    // The example names FERRY_REGISTRY_PASSWORD: its operator binds it to the registry it is for.
    const result = loadConfig(
      DOCS_EXAMPLE,
      configContextFromEnv({ FERRY_REGISTRY_PASSWORD_HOSTS: "registry.example.com" }),
    );
    if (!result.ok) throw new Error(formatProblems("ferry.yml", result.problems));
    expect(result.config.environments.prod!.promoters).toEqual({
      permission: "maintain",
      teams: ["acme/release"],
    });
    expect(environmentOrder(result.config)).toEqual(["staging", "prod"]);
    expect(environmentPolicy(result.config, "prod", "shop")).toMatchObject({
      strategy: "semver",
      range: "^1.0.0",
      pin: "tag",
    });
  });

  it("reports a pattern RE2 refuses, a group extract lacks and a range Masterminds refuses at their line and column", () => {
    const text = `images:
  shop:
    repository: ghcr.io/acme/shop
    policy:
      strategy: numerical
      allow: "^main-[a-f0-9]+-(?=[0-9]+)"
  cart:
    repository: ghcr.io/acme/cart
    policy: { strategy: numerical, allow: "^b-([0-9]+)$", extract: "$2" }
environments:
  staging:
    paths: [overlays/staging]
    policy: { cart: { strategy: semver, range: "^1.x, != 1.2.3.4" } }
`;
    const result = loadConfig(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const byPath = Object.fromEntries(result.problems.map((p) => [p.path, p]));
    expect(byPath["images.shop.policy.allow"]).toMatchObject({
      line: 6,
      column: 7,
      message: expect.stringContaining(
        "invalid RE2 regular expression: invalid or unsupported Perl syntax: `(?=`",
      ),
    });
    expect(byPath["images.cart.policy.extract"]).toMatchObject({
      line: 9,
      message: expect.stringContaining("extract references $2, which allow does not define"),
    });
    expect(byPath["environments.staging.policy.cart.range"]).toMatchObject({
      line: 13,
      message: expect.stringContaining("invalid semver range: improper constraint"),
    });
  });

  it("reports an ignore glob the pattern engine cannot match in linear time, or one over the bound, at its line and column", () => {
    const text = `images:
  shop:
    repository: ghcr.io/acme/shop
    policy:
      ignore:
        - "*-debug"
        - "!(1.*)"
environments:
  staging:
    paths: [overlays/staging]
    policy: { shop: { ignore: ["${"a".repeat(1025)}"] } }
`;
    const result = loadConfig(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const byPath = Object.fromEntries(result.problems.map((p) => [p.path, p]));
    expect(byPath["images.shop.policy.ignore.0"]).toBeUndefined();
    expect(byPath["images.shop.policy.ignore.1"]).toMatchObject({
      line: 7,
      column: 11,
      message: expect.stringContaining(
        'invalid glob "!(1.*)": a negated extglob !(…) cannot be matched by RE2',
      ),
    });
    expect(byPath["environments.staging.policy.shop.ignore.0"]).toMatchObject({
      line: 11,
      message: expect.stringContaining("pattern is 1025 characters long, over the 1024 limit"),
    });
  });

  it("reports every problem at once with its line and column", () => {
    const text = `images:
  shop:
    repository: ghcr.io/Acme/Shop
    policy: { range: "not a range", strategy: semver }
environments:
  prod:
    paths: [../../.github/workflows/x.yml]
    from: nowhere
    merge: sometimes
    password: hunter2
`;
    const result = loadConfig(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const byPath = Object.fromEntries(result.problems.map((p) => [p.path, p]));
    expect(byPath["images.shop.repository"]).toMatchObject({ line: 3, column: 5 });
    expect(byPath["images.shop.policy.range"]?.message).toMatch(/invalid semver range/);
    expect(byPath["images.shop.policy.range"]?.line).toBe(4);
    expect(byPath["environments.prod.paths.0"]?.message).toMatch(/must not leave the repository/);
    expect(byPath["environments.prod.paths.0"]?.line).toBe(7);
    expect(byPath["environments.prod.from"]?.message).toMatch(/unknown environment "nowhere"/);
    expect(byPath["environments.prod.merge"]?.line).toBe(9);
    expect(result.problems.some((p) => p.line === 10 && /password/.test(p.message))).toBe(true);
  });

  it("refuses a YAML alias bomb without expanding it", () => {
    const bomb = [
      "a: &a [x,x,x,x,x,x,x,x,x,x]",
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill("*" + String.fromCharCode(97 + i))
            .join(",")}]`,
      ),
    ].join("\n");
    const result = loadConfig(bomb);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems[0]!.message).toMatch(/alias/i);
  });

  it("detects promotion cycles", () => {
    const result = loadConfig(
      `images: {a: {repository: nginx}}\nenvironments:\n  x: {paths: [x], from: y}\n  y: {paths: [y], from: x}\n`,
    );
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.message).join("\n")).toMatch(/promotion cycle/);
  });
});

describe("loadConfig: environment policy overrides", () => {
  const config = (
    override: string,
    imagePolicy = `{ strategy: numerical, allow: "^b-(?P<n>[0-9]+)$" }`,
  ) => `images:
  shop:
    repository: nginx
    policy: ${imagePolicy}
environments:
  staging:
    paths: [x]
    policy: { shop: ${override} }
`;

  it("accepts an override that is valid once merged over the image's policy (extract using the image's allow)", () => {
    const result = loadConfig(config(`{ extract: "$n" }`));
    if (!result.ok) throw new Error(formatProblems("ferry.yml", result.problems));
    expect(environmentPolicy(result.config, "staging", "shop")).toMatchObject({
      strategy: "numerical",
      extract: "$n",
    });
  });

  it("reports an override that is invalid once merged (range under the image's numerical strategy) at the override", () => {
    const result = loadConfig(config(`{ range: "^1" }`));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      expect.objectContaining({
        path: "environments.staging.policy.shop.range",
        message: expect.stringMatching(/range applies only to strategy semver, not numerical/),
        line: 8,
      }),
    ]);
  });

  it("accepts an override that changes the strategy; the image's fields of the old strategy do not carry over", () => {
    const result = loadConfig(
      config(`{ strategy: digest, tag: latest }`, `{ range: "^1.0.0", prerelease: true }`),
    );
    if (!result.ok) throw new Error(formatProblems("ferry.yml", result.problems));
    const policy = environmentPolicy(result.config, "staging", "shop");
    expect(policy).toMatchObject({ strategy: "digest", tag: "latest", pin: "digest", prerelease: false });
    expect(policy.range).toBeUndefined();
  });

  it("reports an override that breaks the image's extract (an allow without its group) at the override", () => {
    const result = loadConfig(
      config(`{ allow: "^b-[0-9]+$" }`, `{ strategy: numerical, allow: "^b-(?P<n>[0-9]+)$", extract: "$n" }`),
    );
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems).toEqual([
        expect.objectContaining({
          path: "environments.staging.policy.shop.extract",
          message: expect.stringMatching(/\$n, which allow does not define/),
        }),
      ]);
  });

  it("reports a problem of the image's own policy once, at the image, not again at each override", () => {
    const result = loadConfig(config(`{ ignore: ["*-rc"] }`, `{ range: "nope" }`));
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems.map((problem) => problem.path)).toEqual(["images.shop.policy.range"]);
  });
});

describe("loadConfig: messages a person can act on", () => {
  it("names a missing required key", () => {
    const result = loadConfig(`images:\n  shop: { policy: {} }\n`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const messages = Object.fromEntries(result.problems.map((problem) => [problem.path, problem.message]));
    expect(messages["images.shop.repository"]).toBe('missing required key "repository"');
    expect(messages["environments"]).toBe('missing required key "environments"');
  });

  it("says why an image or environment name is refused, at the name's line", () => {
    const result = loadConfig(
      `images:\n  Shop: { repository: nginx }\nenvironments:\n  staging: { paths: [x] }\n`,
    );
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems).toEqual([
        expect.objectContaining({
          path: "images.Shop",
          line: 2,
          message: expect.stringMatching(/image names are lowercase letters/),
        }),
      ]);
  });
});

describe("registry rules of the Ferry that reads the config", () => {
  const withRegistries = (registries: string) =>
    `images:\n  shop:\n    repository: ghcr.io/acme/shop\nenvironments:\n  prod:\n    paths: [overlays/prod]\nregistries:\n${registries}`;

  it("refuses auth: github on any host but its GitHub's container registry, at the auth key", () => {
    const result = loadConfig(withRegistries("  registry.example.com:\n    auth: github\n"));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      expect.objectContaining({
        path: "registries.registry.example.com.auth",
        line: 9,
        column: 5,
        message: expect.stringMatching(/allowed only for ghcr\.io/),
      }),
    ]);
    expect(loadConfig(withRegistries("  ghcr.io: { auth: github, insecure: true }\n")).ok).toBe(false);
  });

  it("on GitHub Enterprise allows auth: github for containers.<host> and refuses ghcr.io", () => {
    const context = {
      ...DEFAULT_CONFIG_CONTEXT,
      githubContainerRegistry: githubContainerRegistry("https://ghe.example.com/api/v3"),
    };
    expect(context.githubContainerRegistry).toBe("containers.ghe.example.com");
    expect(githubContainerRegistry("https://api.acme.ghe.com")).toBe("containers.acme.ghe.com");
    expect(githubContainerRegistry("https://api.github.com")).toBe("ghcr.io");
    expect(loadConfig(withRegistries("  containers.ghe.example.com: { auth: github }\n"), context).ok).toBe(
      true,
    );
    expect(loadConfig(withRegistries("  ghcr.io: { auth: github }\n"), context).ok).toBe(false);
  });

  it("refuses registries at link-local addresses always, and at private ones where the server refuses them", () => {
    const image = (repository: string) =>
      `images:\n  shop:\n    repository: "${repository}"\nenvironments:\n  prod:\n    paths: [overlays/prod]\n`;
    const linkLocal = loadConfig(image("[::ffff:a9fe:a9fe]/latest/x"));
    expect(linkLocal.ok || linkLocal.problems).toEqual([
      expect.objectContaining({
        path: "images.shop.repository",
        line: 3,
        message: expect.stringMatching(/link-local/),
      }),
    ]);
    expect(loadConfig(image("10.0.0.5:5000/acme/shop")).ok).toBe(true);
    const production = { ...DEFAULT_CONFIG_CONTEXT, refusePrivateRegistries: true };
    expect(loadConfig(image("10.0.0.5:5000/acme/shop"), production).ok).toBe(false);
    expect(loadConfig(withRegistries("  127.0.0.1:5000: { insecure: true }\n"), production).ok).toBe(false);
  });

  it("refuses metadata addresses outside 169.254/16 and IPv6 forms carrying them like link-local, also with private registries allowed", () => {
    const image = (repository: string) =>
      `images:\n  shop:\n    repository: "${repository}"\nenvironments:\n  prod:\n    paths: [overlays/prod]\n`;
    for (const host of [
      "168.63.129.16",
      "100.100.100.200",
      "[::ffff:0:a9fe:a9fe]",
      "[64:ff9b:1::a9fe:a9fe]",
    ]) {
      const result = loadConfig(image(`${host}/latest/x`));
      expect([host, result.ok || result.problems]).toEqual([
        host,
        [
          expect.objectContaining({
            path: "images.shop.repository",
            message: expect.stringMatching(/link-local/),
          }),
        ],
      ]);
    }
    expect(loadConfig(withRegistries("  168.63.129.16: { insecure: true }\n")).ok).toBe(false);
  });
});
