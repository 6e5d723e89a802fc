/**
 * `windows:`, `freeze:` and `overrideFreeze:` in `.github/ferry.yml` (docs/config.md "Change
 * windows and freezes"): what is read, and a one-line problem for what cannot be.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config/load-config.js";

const config = (prod: string) => `images:
  shop: { repository: ghcr.io/acme/shop }
environments:
  prod:
    paths: [apps/prod]
${prod}`;

function problems(prod: string): string[] {
  const loaded = loadConfig(config(prod));
  return loaded.ok ? [] : loaded.problems.map((problem) => `${problem.path}: ${problem.message}`);
}

describe("window config", () => {
  it("reads windows, freezes and who may override, with UTC by default", () => {
    const loaded = loadConfig(
      config(`    windows:
      - { days: [mon, tue], start: "09:00", end: "17:00", timeZone: Europe/Berlin }
      - { start: "22:00", end: "02:00" }
    freeze:
      - { from: 2026-12-20, to: 2027-01-04, reason: end-of-year }
    overrideFreeze: { users: [alice], teams: [acme/sre] }
`),
    );
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const prod = loaded.config.environments.prod!;
    expect(prod.windows).toEqual([
      { days: ["mon", "tue"], start: "09:00", end: "17:00", timeZone: "Europe/Berlin" },
      { start: "22:00", end: "02:00", timeZone: "UTC" },
    ]);
    expect(prod.freeze).toEqual([
      { from: "2026-12-20", to: "2027-01-04", reason: "end-of-year", timeZone: "UTC" },
    ]);
    expect(prod.overrideFreeze).toEqual({ users: ["alice"], teams: ["acme/sre"] });
  });

  it.each([
    ['    windows: [{ start: "09:00", end: "17:00", timeZone: Mars/Olympus }]\n', /unknown time zone/],
    ['    windows: [{ start: "09:00", end: "09:00" }]\n', /end equals start/],
    ['    windows: [{ start: "24:00", end: "09:00" }]\n', /start is HH:MM/],
    ['    windows: [{ start: "9:00", end: "17:00" }]\n', /start is HH:MM/],
    ['    windows: [{ days: [monday], start: "09:00", end: "17:00" }]\n', /days/],
    ["    freeze: [{ from: 2026-02-30, to: 2026-03-04, reason: x }]\n", /from is a date or date-time/],
    ["    freeze: [{ from: 2026-03-04, to: 2026-03-04, reason: x }]\n", /to must be after from/],
    ["    freeze: [{ from: 2026-03-04, to: 2026-03-05 }]\n", /reason/],
    ['    freeze: [{ from: 2026-03-04, to: 2026-03-05, reason: "a\\nb" }]\n', /reason is printable text/],
  ])("refuses %s", (prod, expected) => {
    const found = problems(prod);
    expect(found.length).toBeGreaterThan(0);
    expect(found.join("\n")).toMatch(expected);
  });

  it("bounds the number of windows", () => {
    const many = Array.from({ length: 21 }, () => '      - { start: "09:00", end: "17:00" }').join("\n");
    expect(problems(`    windows:\n${many}\n`).join("\n")).toMatch(/at most 20 windows/);
  });
});
