/**
 * `ferry reconcile --dry-run --diff` against kube-apiserver + etcd: live against what a
 * server-side dry-run apply would store, in `ferry diff`'s per-object format, and nothing written.
 */
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { main } from "../../src/cli.js";
import { captureIo } from "../support/cli-io.js";
import { configMapYaml, deploymentYaml, GIT_ENV } from "../support/reconciler-harness.js";
import { readObject } from "./contract/backend.js";
import { realBackend } from "./contract/real-backend.js";
import { createWorld, type World } from "./contract/world.js";

vi.setConfig({ testTimeout: 120_000 });

const backend = realBackend(inject("controlPlane"));
let world: World | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

const secretYaml = (password: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData:\n  password: ${password}\n  user: shop\n`;

function reconcile(w: World, ...extra: string[]) {
  const io = captureIo(w.repo.dir, { env: { ...GIT_ENV } });
  const args = [
    "reconcile",
    "--repo",
    w.repo.dir,
    "--path",
    "env",
    "--namespace",
    w.ns,
    "--environment",
    w.instance,
    "--kubeconfig",
    w.kubectl.kubeconfigFile,
    "--work-dir",
    w.temp.make("ferry-dry-run-diff-"),
    "--allow-plaintext-secrets",
    "--prune",
    ...extra,
  ];
  return main(args, io).then((code) => ({ code, out: io.out, err: io.err }));
}

describe("ferry reconcile --dry-run --diff against kube-apiserver", () => {
  it("prints each object's diff, live against desired, names the prune, hides the Secret and writes nothing", async () => {
    const w = (world = await createWorld(backend));
    w.repo.commit({
      "env/web.yaml": deploymentYaml("web", { image: "ghcr.io/acme/shop:1.7.3" }),
      "env/config.yaml": configMapYaml("web-config"),
      "env/kept.yaml": configMapYaml("kept"),
      "env/secret.yaml": secretYaml("first-password-value"),
    });
    const applied = await reconcile(w, "--once");
    expect(applied.err).not.toMatch(/ferry reconcile:/);
    expect(applied.code).toBe(0);

    w.repo.commit({
      "env/web.yaml": deploymentYaml("web", { image: "ghcr.io/acme/shop:1.8.0" }),
      "env/config.yaml": null,
      "env/secret.yaml": secretYaml("second-password-value"),
    });
    const { code, out, err } = await reconcile(w, "--dry-run", "--diff");
    expect(err).not.toMatch(/ferry reconcile:/);
    expect(code).toBe(0);
    const diff = out.slice(out.indexOf("=== "));
    expect(diff.split("\n")[0]).toBe(`=== ${w.instance}: 0 added, 2 changed, 1 removed, 1 unchanged`);
    expect(diff).toContain(`  prune: ConfigMap ${w.ns}/web-config would be pruned`);
    expect(diff).toContain(
      `  ghcr.io/acme/shop 1.7.3 → 1.8.0 (container web of Deployment.apps ${w.ns}/web)`,
    );
    expect(diff).toContain(
      `--- live/apps/v1/Deployment/${w.ns}/web\n+++ desired/apps/v1/Deployment/${w.ns}/web\n`,
    );
    // The server's answers on both sides: defaults, managedFields, resourceVersion never show as changes.
    const changedLines = diff
      // Objects are sorted by group: the Deployment (apps) comes last.
      .slice(diff.indexOf(`[changed] Deployment.apps`))
      .split("\n")
      .filter((line) => /^[-+] /.test(line));
    expect(changedLines).toHaveLength(2);
    expect(changedLines[0]).toMatch(/^- +(- )?image: ghcr\.io\/acme\/shop:1\.7\.3$/);
    expect(changedLines[1]).toMatch(/^\+ +(- )?image: ghcr\.io\/acme\/shop:1\.8\.0$/);
    expect(diff).toContain(`[changed] Secret ${w.ns}/db\nSecret keys changed: password (values never shown)`);
    expect(diff).toContain(
      `[removed] ConfigMap ${w.ns}/web-config\n--- live/v1/ConfigMap/${w.ns}/web-config\n+++ /dev/null`,
    );
    for (const value of ["first-password-value", "second-password-value"]) {
      expect(out).not.toContain(value);
      expect(out).not.toContain(Buffer.from(value).toString("base64"));
    }
    // A dry run: the cluster is as the first cycle left it.
    const web = await readObject(w.admin, "apps/v1", "Deployment", w.ns, "web");
    expect(JSON.stringify(web)).toContain("ghcr.io/acme/shop:1.7.3");
    expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "web-config")).toBeDefined();
  });

  it("refuses --diff without --dry-run", async () => {
    const w = (world = await createWorld(backend));
    const { code, err } = await reconcile(w, "--diff");
    expect(code).toBe(2);
    expect(err).toContain("--diff goes with --dry-run");
  });
});
