import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { renderPath } from "../../src/reconciler/render-folder.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), "ferry-helm-"));
  dirs.push(root);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

const CHART = {
  "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
  "app/values.yaml": "image: registry.test/acme/app:1.0.0\n",
  "app/templates/cm.yaml":
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: {{ .Release.Namespace }}\ndata:\n  image: {{ .Values.image | quote }}\n",
};

describe("rendering a chart folder", () => {
  it("renders with helm template, the chart's values, then the given values files in order", async () => {
    const root = repo({ ...CHART, "env/prod.yaml": "image: registry.test/acme/app:2.0.0\n" });
    const objects = await renderPath(root, "app", { helmValues: ["env/prod.yaml"], helmNamespace: "shop" });
    expect(objects.map((rendered) => rendered.object)).toEqual([
      expect.objectContaining({
        kind: "ConfigMap",
        metadata: { name: "app", namespace: "shop" },
        data: { image: "registry.test/acme/app:2.0.0" },
      }),
    ]);
  });

  it("refuses a values file outside the config repo", async () => {
    const root = repo(CHART);
    const outside = repo({ "secret.yaml": "image: x\n" });
    await expect(
      renderPath(root, "app", { helmValues: [path.relative(root, path.join(outside, "secret.yaml"))] }),
    ).rejects.toThrow(/leaves the config repo/);
  });

  it("refuses a chart file that links outside the config repo before helm runs", async () => {
    const root = repo(CHART);
    const outside = repo({ "passwd.yaml": "stolen: true\n" });
    symlinkSync(path.join(outside, "passwd.yaml"), path.join(root, "app/templates/leak.yaml"));
    await expect(renderPath(root, "app")).rejects.toThrow(/app\/templates\/leak.yaml leaves the config repo/);
  });

  it("refuses a values file with an alias bomb before helm runs", async () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (let level = 1; level < 12; level++)
      bomb.push(
        `${String.fromCharCode(97 + level)}: &${String.fromCharCode(97 + level)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + level)}`)
          .join(", ")}]`,
      );
    const root = repo({ ...CHART, "app/values.yaml": `${bomb.join("\n")}\n` });
    await expect(renderPath(root, "app")).rejects.toThrow(/aliases/);
  });

  it("inflates a kustomization's helmCharts from its charts/ folder with helm", async () => {
    const root = repo({
      "env/kustomization.yaml":
        "helmCharts:\n  - name: app\n    releaseName: web\n    namespace: shop\n    valuesInline: { image: registry.test/acme/app:3.0.0 }\n",
      "env/charts/app/Chart.yaml": CHART["app/Chart.yaml"],
      "env/charts/app/values.yaml": CHART["app/values.yaml"],
      "env/charts/app/templates/cm.yaml": CHART["app/templates/cm.yaml"],
    });
    const objects = await renderPath(root, "env");
    expect(objects.map((rendered) => rendered.object)).toEqual([
      expect.objectContaining({
        metadata: { name: "web", namespace: "shop" },
        data: { image: "registry.test/acme/app:3.0.0" },
      }),
    ]);
  });

  it("says how to install helm when it is missing", async () => {
    const root = repo(CHART);
    await expect(renderPath(root, "app", { env: { PATH: "/nonexistent" } })).rejects.toThrow(
      /cannot render app: helm is not on PATH: install helm v3\.22\.0/,
    );
  });
});
