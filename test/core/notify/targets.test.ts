import { describe, expect, it } from "vitest";
import { notifyTargetsFromEnv, targetUseProblem } from "../../../src/core/notify/targets.js";
import { targetsFor } from "../../../src/core/config/notify-schema.js";

const SLACK = "https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX";

describe("notification targets from the operator's environment", () => {
  it("reads URL, kind, key and owners per name", () => {
    const targets = notifyTargetsFromEnv({
      FERRY_NOTIFY_RELEASES_URL: "https://hooks.example.com/ferry",
      FERRY_NOTIFY_RELEASES_SECRET: "k3y",
      FERRY_NOTIFY_RELEASES_OWNERS: "acme",
      FERRY_NOTIFY_TEAM_CHAT_URL: SLACK,
      FERRY_NOTIFY_TEAM_CHAT_KIND: "slack",
      OTHER_URL: "https://x.example",
    });
    expect([...targets.keys()]).toEqual(["releases", "team_chat"]);
    expect(targets.get("releases")).toMatchObject({
      kind: "json",
      secret: "k3y",
      host: "hooks.example.com",
      owners: ["acme"],
    });
    expect(targets.get("team_chat")).toMatchObject({ kind: "slack", host: "hooks.slack.com" });
  });

  it("refuses a malformed target in one line that never shows the URL", () => {
    const cases: Record<string, string>[] = [
      { FERRY_NOTIFY_A_URL: `${SLACK}`, FERRY_NOTIFY_A_KIND: "email" },
      { FERRY_NOTIFY_A_URL: SLACK },
      { FERRY_NOTIFY_A_URL: "ftp://hooks.slack.com/XXXXSECRETXXXX", FERRY_NOTIFY_A_KIND: "slack" },
      { FERRY_NOTIFY_A_URL: "https://user:XXXXSECRETXXXX@hooks.slack.com/", FERRY_NOTIFY_A_KIND: "slack" },
      { FERRY_NOTIFY_A_SECRET: "XXXXSECRETXXXX" },
      { FERRY_NOTIFY_A_URL: SLACK, FERRY_NOTIFY_A_KIND: "slack", FERRY_NOTIFY_A_OWNERS: "not a login" },
    ];
    for (const env of cases) {
      let message = "";
      try {
        notifyTargetsFromEnv(env);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message, JSON.stringify(env)).toMatch(/^FERRY_NOTIFY_A_\w+/);
      expect(message).not.toContain("XXXXSECRETXXXX");
      expect(message).not.toContain("\n");
    }
  });

  it("binds a target to the installations of _OWNERS, as every operator secret (none: refused in ferry serve)", () => {
    const targets = notifyTargetsFromEnv({
      FERRY_NOTIFY_ACME_URL: "https://hooks.example.com/a",
      FERRY_NOTIFY_ACME_SECRET: "k",
      FERRY_NOTIFY_ACME_OWNERS: "acme",
      FERRY_NOTIFY_ANY_URL: "https://hooks.example.com/b",
      FERRY_NOTIFY_ANY_SECRET: "k",
      FERRY_NOTIFY_ANY_OWNERS: "*",
      FERRY_NOTIFY_UNBOUND_URL: "https://hooks.example.com/c",
      FERRY_NOTIFY_UNBOUND_SECRET: "k",
    });
    expect(targetUseProblem(targets, "acme", "acme")).toBeUndefined();
    expect(targetUseProblem(targets, "acme", "ACME")).toBeUndefined();
    expect(targetUseProblem(targets, "acme", "globex")).toMatch(
      /FERRY_NOTIFY_ACME is not available to installation globex/,
    );
    expect(targetUseProblem(targets, "any", "globex")).toBeUndefined();
    expect(targetUseProblem(targets, "unbound", "acme")).toMatch(/FERRY_NOTIFY_UNBOUND_OWNERS/);
    expect(targetUseProblem(targets, "unbound", undefined)).toBeUndefined();
    expect(targetUseProblem(targets, "missing", "acme")).toMatch(/FERRY_NOTIFY_MISSING_URL/);
  });

  it("an environment's rules choose targets by event, each once", () => {
    const rules = [
      { target: "a" },
      { target: "b", events: ["promoted" as const] },
      { target: "a", events: ["held" as const] },
    ];
    expect(targetsFor(rules, "promoted")).toEqual(["a", "b"]);
    expect(targetsFor(rules, "held")).toEqual(["a"]);
    expect(targetsFor(undefined, "held")).toEqual([]);
  });
});

describe("notify: in a config", () => {
  it("warns in ferry serve, at its line, about a target bound to another installation or not configured", async () => {
    const { loadConfig } = await import("../../../src/core/config/load-config.js");
    const { DEFAULT_CONFIG_CONTEXT } = await import("../../../src/core/config/config-context.js");
    const text = [
      "images:",
      "  shop: { repository: ghcr.io/acme/shop }",
      "environments:",
      "  prod:",
      "    paths: [overlays/prod]",
      "    notify:",
      "      - target: releases",
      "      - target: acme_only",
      "      - target: nowhere",
      "",
    ].join("\n");
    const notifyTargets = notifyTargetsFromEnv({
      FERRY_NOTIFY_RELEASES_URL: "https://hooks.example.com/a",
      FERRY_NOTIFY_RELEASES_SECRET: "k",
      FERRY_NOTIFY_RELEASES_OWNERS: "*",
      FERRY_NOTIFY_ACME_ONLY_URL: "https://hooks.example.com/b",
      FERRY_NOTIFY_ACME_ONLY_SECRET: "k",
      FERRY_NOTIFY_ACME_ONLY_OWNERS: "acme",
    });
    const loaded = loadConfig(text, {
      ...DEFAULT_CONFIG_CONTEXT,
      notifyTargets,
      installationOwner: "globex",
    });
    expect(loaded.ok).toBe(true);
    const warnings = loaded.ok ? loaded.warnings.map((w) => `${w.line}: ${w.message}`) : [];
    expect(warnings).toEqual([
      expect.stringMatching(/^8: FERRY_NOTIFY_ACME_ONLY is not available to installation globex/),
      expect.stringMatching(/^9: notify target nowhere is not configured/),
    ]);
    const cli = loadConfig(text, DEFAULT_CONFIG_CONTEXT);
    expect(cli.ok && cli.warnings).toEqual([]);
  });
});
