import { describe, expect, it } from "vitest";
import {
  emptyState,
  formatStateFile,
  parseStateFile,
  recordDeployment,
  setUnitHold,
  unitHold,
  versionBefore,
} from "../../../src/core/state/ferry-state.js";

describe("the history of deployed versions", () => {
  const v = (tag: string) => ({ tag, digest: `sha256:${tag.replace(/\./g, "").padStart(64, "0")}` });

  it("keeps promotions in order, drops a version once rolled back from, and survives the state file", () => {
    const state = emptyState();
    recordDeployment(state, "staging", "shop", { from: v("1.7.0"), to: v("1.8.0"), rollback: false });
    recordDeployment(state, "staging", "shop", { from: v("1.8.0"), to: v("1.9.0"), rollback: false });
    expect(versionBefore(state, "staging", "shop", v("1.9.0"))).toEqual(v("1.8.0"));
    recordDeployment(state, "staging", "shop", { from: v("1.9.0"), to: v("1.8.0"), rollback: true });
    const read = parseStateFile(formatStateFile(state));
    expect(read.history.staging?.shop).toEqual([v("1.7.0"), v("1.8.0")]);
    expect(versionBefore(read, "staging", "shop", v("1.8.0"))).toEqual(v("1.7.0"));
    expect(versionBefore(read, "staging", "shop", v("1.7.0"))).toBeUndefined();
  });

  it("drops malformed entries and keeps at most 20 versions per image", () => {
    const state = emptyState();
    for (let minor = 0; minor < 30; minor++)
      recordDeployment(state, "prod", "shop", { from: {}, to: { tag: `1.${minor}.0` }, rollback: false });
    expect(state.history.prod?.shop).toHaveLength(20);
    const text = JSON.stringify({
      version: 1,
      holds: {},
      floors: {},
      history: { prod: { shop: [{ tag: "a b" }, 3, { tag: "1.0.0" }] } },
    });
    expect(parseStateFile(text).history).toEqual({ prod: { shop: [{ tag: "1.0.0" }] } });
  });
});

describe('unit holds (docs/config.md "Grouping")', () => {
  const hold = { by: "mona", at: "2026-01-01T00:00:00.000Z", reason: "hold" as const };
  const group = { kind: "group" as const, name: "team-a" };

  it("reads a state file from before groups unchanged, and writes it back to the same bytes", () => {
    const old = `${JSON.stringify({ version: 1, holds: { prod: hold }, floors: { prod: { shop: "1.8.0" } }, history: {} }, null, 2)}\n`;
    const state = parseStateFile(old);
    expect(state.holds).toEqual({ prod: hold });
    expect(state.unitHolds).toBeUndefined();
    expect(formatStateFile(state)).toBe(old);
    // An environment-wide hold holds each of its units.
    expect(unitHold(state, "prod", group)).toEqual(hold);
  });

  it("holds one unit without the others, survives the file, and drops malformed entries", () => {
    const state = emptyState();
    setUnitHold(state, "prod", group, hold);
    expect(unitHold(state, "prod", group)).toEqual(hold);
    expect(unitHold(state, "prod", { kind: "group", name: "team-b" })).toBeUndefined();
    expect(unitHold(state, "prod")).toBeUndefined();
    const read = parseStateFile(formatStateFile(state));
    expect(read.unitHolds).toEqual({ prod: { "group:team-a": hold } });
    const tampered = JSON.stringify({
      version: 1,
      holds: {},
      unitHolds: {
        prod: { "group:team-a": hold, "team:x": hold, "image:Shop": hold, "image:cart": { by: 3 } },
      },
      floors: {},
      history: {},
    });
    expect(parseStateFile(tampered).unitHolds).toEqual({ prod: { "group:team-a": hold } });
    setUnitHold(read, "prod", group, undefined);
    expect(formatStateFile(read)).toBe(formatStateFile(emptyState()));
  });
});
