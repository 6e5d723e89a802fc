import { describe, expect, it } from "vitest";
import { syncRepository } from "../../src/app/sync-repository.js";
import type { Notifier } from "../../src/app/notifier.js";
import { eventId, type NotifyEvent } from "../../src/core/notify/notify-event.js";
import { configRepo, FakeGitHub, FakeRegistry, fakeDeps } from "../support/app-fakes.js";

/** `blocked` notifications from where Ferry decides: CI gating on a sync, told once per held tag. */
describe("blocked notifications", () => {
  const gated = (files: Record<string, string>) => ({
    ...files,
    ".github/ferry.yml": files[".github/ferry.yml"]!.replace(
      "    repository: ghcr.io/acme/shop\n",
      "    repository: ghcr.io/acme/shop\n    source: acme/shop\n",
    ),
  });

  it("a tag held back by CI gating is a blocked event with reason gating, the same event on every scan", async () => {
    const github = new FakeGitHub(gated(configRepo()));
    const registry = new FakeRegistry();
    registry.push("ghcr.io/acme/shop", "1.7.0", "a".repeat(40));
    registry.push("ghcr.io/acme/shop", "1.8.0", "b".repeat(40));
    github.protectedBranches.set("main", ["ci"]);
    const published: NotifyEvent[] = [];
    const notify: Notifier = { publish: (_config, event) => published.push(event) };
    const deps = { ...fakeDeps(github, registry), notify };
    github.checks.set("b".repeat(40), "failure");
    await syncRepository(deps, { reason: "scan" });
    await syncRepository(deps, { reason: "scan" });
    const blocked = published.filter((event) => event.kind === "blocked");
    expect(blocked.length).toBeGreaterThanOrEqual(2);
    expect(blocked.every((event) => event.reason === "gating" && event.environment === "staging")).toBe(true);
    expect(blocked[0]!.detail).toMatch(/^shop: .*1\.8\.0/);
    // Every scan meets the same block: one event id, which the outbox and the ledger send once.
    expect(new Set(blocked.map(eventId)).size).toBe(1);
  });
});
