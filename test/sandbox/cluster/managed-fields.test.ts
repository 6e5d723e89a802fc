import { describe, expect, it } from "vitest";
import {
  describePath,
  fieldPaths,
  fromFieldsV1,
  recordUpdate,
  serverSideApply,
  toFieldsV1,
} from "../../../packages/sandbox/src/cluster/managed-fields.js";
import { ApiError } from "../../../packages/sandbox/src/cluster/status.js";

const now = new Date("2025-01-02T03:04:05Z");
const who = (manager: string, force = false) => ({
  manager,
  apiVersion: "apps/v1",
  now,
  force,
  kind: "deployments",
  name: "web",
});

function deployment(spec: Record<string, unknown>, labels?: Record<string, string>) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop", ...(labels ? { labels } : {}) },
    spec,
  };
}

describe("field paths", () => {
  it("keys container lists by name and treats other lists as atomic", () => {
    const paths = [
      ...fieldPaths(
        deployment({ template: { spec: { containers: [{ name: "app", image: "a", args: ["x", "y"] }] } } }),
        "all",
      ).keys(),
    ];
    expect(paths).toContain(
      JSON.stringify(["f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"app"}', "."]),
    );
    expect(paths).toContain(
      JSON.stringify(["f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"app"}', "f:args"]),
    );
    expect(paths).not.toContain(JSON.stringify(["f:metadata", "f:name"]));
  });

  it("round-trips through the FieldsV1 format", () => {
    const paths = fieldPaths(
      deployment(
        { replicas: 2, template: { spec: { containers: [{ name: "app", image: "a" }] } } },
        { app: "web" },
      ),
      "main",
    );
    expect([...fromFieldsV1(toFieldsV1(paths.values())).keys()].sort()).toEqual([...paths.keys()].sort());
  });

  it("prints keyed paths the way conflict messages do", () => {
    expect(
      describePath(["f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"app"}', "f:image"]),
    ).toBe('.spec.template.spec.containers[name="app"].image');
  });

  it("leaves status out of the main scope and keeps only status in the status scope", () => {
    const object = { ...deployment({ replicas: 1 }), status: { replicas: 1 } };
    expect([...fieldPaths(object, "main").keys()].some((k) => k.includes("f:status"))).toBe(false);
    expect([...fieldPaths(object, "status").keys()]).toEqual([JSON.stringify(["f:status", "f:replicas"])]);
  });
});

describe("server-side apply", () => {
  it("conflicts on an image another applier set, naming the container", () => {
    const first = serverSideApply(
      undefined,
      deployment({ template: { spec: { containers: [{ name: "app", image: "a:1" }] } } }),
      "main",
      who("ferry"),
    );
    let error: unknown;
    try {
      serverSideApply(
        first,
        deployment({ template: { spec: { containers: [{ name: "app", image: "a:2" }] } } }),
        "main",
        who("other"),
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe(
      'Apply failed with 1 conflict: conflict with "ferry" using apps/v1: .spec.template.spec.containers[name="app"].image',
    );
  });

  it("hands a forced field to the new applier and keeps the rest with the old one", () => {
    const first = serverSideApply(
      undefined,
      deployment({ replicas: 1, paused: false }),
      "main",
      who("ferry"),
    );
    const forced = serverSideApply(first, deployment({ replicas: 3 }), "main", who("hpa", true));
    const owners = Object.fromEntries(
      (forced.metadata as { managedFields: { manager: string; fieldsV1: unknown }[] }).managedFields.map(
        (m) => [m.manager, [...fromFieldsV1(m.fieldsV1).keys()]],
      ),
    );
    expect(owners.hpa).toEqual([JSON.stringify(["f:spec", "f:replicas"])]);
    expect(owners.ferry).toEqual([JSON.stringify(["f:spec", "f:paused"])]);
    expect((forced.spec as { replicas: number }).replicas).toBe(3);
  });

  it("drops a removed field only when no other manager also owns it", () => {
    const first = serverSideApply(
      undefined,
      deployment({ replicas: 1, paused: false }),
      "main",
      who("ferry"),
    );
    const shared = serverSideApply(first, deployment({ paused: false }), "main", who("other"));
    const after = serverSideApply(shared, deployment({ replicas: 1 }), "main", who("ferry"));
    expect(after.spec).toEqual({ replicas: 1, paused: false });
    const gone = serverSideApply(after, deployment({ replicas: 1 }), "main", who("other"));
    expect(gone.spec).toEqual({ replicas: 1 });
  });

  it("removes a container the applier no longer lists", () => {
    const first = serverSideApply(
      undefined,
      deployment({
        template: {
          spec: {
            containers: [
              { name: "app", image: "a" },
              { name: "log", image: "b" },
            ],
          },
        },
      }),
      "main",
      who("ferry"),
    );
    const after = serverSideApply(
      first,
      deployment({ template: { spec: { containers: [{ name: "app", image: "a" }] } } }),
      "main",
      who("ferry"),
    );
    expect(after.spec).toEqual({ template: { spec: { containers: [{ name: "app", image: "a" }] } } });
  });
});

describe("update ownership", () => {
  it("moves changed fields to the updater without conflict", () => {
    const applied = serverSideApply(
      undefined,
      deployment({ replicas: 1, paused: false }),
      "main",
      who("ferry"),
    );
    const next = structuredClone(applied);
    (next.spec as { replicas: number }).replicas = 4;
    recordUpdate(applied, next, "main", { manager: "kubectl-edit", apiVersion: "apps/v1", now });
    const entries = (
      next.metadata as { managedFields: { manager: string; operation: string; fieldsV1: unknown }[] }
    ).managedFields;
    expect(entries.map((e) => `${e.manager}/${e.operation}`)).toEqual(["ferry/Apply", "kubectl-edit/Update"]);
    expect([...fromFieldsV1(entries[1]!.fieldsV1).keys()]).toEqual([
      JSON.stringify(["f:spec", "f:replicas"]),
    ]);
  });
});
