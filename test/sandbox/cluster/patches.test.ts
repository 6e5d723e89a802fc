import { describe, expect, it } from "vitest";
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
} from "../../../packages/sandbox/src/cluster/patches.js";
import { matchesLabels, parseLabelSelector } from "../../../packages/sandbox/src/cluster/selectors.js";
import { ApiError } from "../../../packages/sandbox/src/cluster/status.js";

const podSpec = {
  containers: [
    { name: "app", image: "a:1" },
    { name: "log", image: "b:1" },
  ],
};

describe("patches", () => {
  it("merge patch replaces lists whole and deletes keys set to null", () => {
    expect(applyMergePatch({ a: 1, b: { c: 2 }, l: [1, 2] }, { a: null, b: { d: 3 }, l: [3] })).toEqual({
      b: { c: 2, d: 3 },
      l: [3],
    });
  });

  it("strategic merge patch updates one container by name and keeps the others", () => {
    const patched = applyStrategicMergePatch(podSpec, { containers: [{ name: "log", image: "b:2" }] });
    expect(patched).toEqual({
      containers: [
        { name: "app", image: "a:1" },
        { name: "log", image: "b:2" },
      ],
    });
  });

  it("strategic merge patch deletes an element with $patch: delete and ignores $setElementOrder", () => {
    const patched = applyStrategicMergePatch(podSpec, {
      $setElementOrder: { containers: [{ name: "app" }] },
      containers: [{ name: "log", $patch: "delete" }],
    });
    expect(patched).toEqual({ containers: [{ name: "app", image: "a:1" }] });
  });

  it("json patch applies add, replace, remove and fails a test that does not hold", () => {
    const patched = applyJsonPatch({ spec: { replicas: 1, paused: true } }, [
      { op: "replace", path: "/spec/replicas", value: 3 },
      { op: "remove", path: "/spec/paused" },
      { op: "add", path: "/metadata", value: { labels: { "a/b": "c" } } },
    ]);
    expect(patched).toEqual({ spec: { replicas: 3 }, metadata: { labels: { "a/b": "c" } } });
    expect(() => applyJsonPatch({ a: 1 }, [{ op: "test", path: "/a", value: 2 }])).toThrow(ApiError);
    expect(() => applyJsonPatch({ a: 1 }, [{ op: "remove", path: "/missing" }])).toThrow(ApiError);
  });
});

describe("label selectors", () => {
  const labels = { env: "prod", tier: "web" };
  it.each([
    ["env=prod", true],
    ["env==prod,tier=web", true],
    ["env!=prod", false],
    ["env in (dev, prod)", true],
    ["env notin (prod)", false],
    ["tier", true],
    ["!tier", false],
    ["missing!=x", true],
  ])("%s matches %s", (selector, expected) => {
    expect(matchesLabels(labels, parseLabelSelector(selector))).toBe(expected);
  });

  it("rejects a selector it cannot parse with 400", () => {
    expect(() => parseLabelSelector("a in b")).toThrow(expect.objectContaining({ code: 400 }));
  });
});
