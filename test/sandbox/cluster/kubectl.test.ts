/** kubectl (preinstalled, v1.32) against the simulator, with kubectl's default behaviour throughout. */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startClusterSimulator, type ClusterSimulator } from "../../../packages/sandbox/src/cluster/index.js";

const run = promisify(execFile);
const KUBECTL = "/usr/bin/kubectl";

const manifest = (replicas: number, image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: app
          image: ${image}
`;

let sim: ClusterSimulator;
let dir: string;

async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      KUBECTL,
      ["--kubeconfig", join(dir, "kubeconfig"), "--cache-dir", join(dir, "cache"), ...args],
      {
        env: { PATH: process.env.PATH ?? "", HOME: dir },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe.runIf(await import("node:fs").then((fs) => fs.existsSync(KUBECTL)))(
  "cluster simulator with kubectl",
  () => {
    beforeAll(async () => {
      sim = await startClusterSimulator({ rolloutStepMs: 10 });
      dir = await mkdtemp(join(tmpdir(), "ferry-kubectl-"));
      await sim.writeKubeconfig(join(dir, "kubeconfig"));
      await writeFile(join(dir, "shop.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n");
      await writeFile(join(dir, "web.yaml"), manifest(2, "nginx:1.27"));
      await writeFile(join(dir, "web-3.yaml"), manifest(3, "nginx:1.27"));
    });
    afterAll(async () => {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("lists namespaces with kubectl get ns", async () => {
      const result = await kubectl("get", "ns");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^default\s/m);
      expect(result.stdout).toMatch(/^kube-system\s/m);
    });

    it("creates a namespace and server-side applies a Deployment into it", async () => {
      // Not `kubectl create namespace`: its typed generator sends protobuf, which the simulator refuses.
      expect((await kubectl("create", "-f", join(dir, "shop.yaml"))).code).toBe(0);
      const applied = await kubectl("apply", "--server-side", "-f", join(dir, "web.yaml"));
      expect(applied.stderr).toBe("");
      expect(applied.stdout).toContain("deployment.apps/web serverside-applied");
      const stored = sim.get("apps/v1", "Deployment", "shop", "web");
      expect(stored?.metadata).toMatchObject({
        managedFields: [expect.objectContaining({ manager: "kubectl", operation: "Apply" })],
      });
    });

    it("prints the Deployment with its rolled-out status as JSON", async () => {
      await sim.waitFor(
        "apps/v1",
        "Deployment",
        "shop",
        "web",
        (d: any) => d.status?.availableReplicas === 2,
      );
      const result = await kubectl("get", "deploy", "-n", "shop", "-o", "json");
      expect(result.code).toBe(0);
      const list = JSON.parse(result.stdout);
      expect(list.items).toHaveLength(1);
      expect(list.items[0].spec.template.spec.containers[0].image).toBe("nginx:1.27");
      expect(list.items[0].status.readyReplicas).toBe(2);
      const table = await kubectl("get", "deploy", "-n", "shop");
      expect(table.stdout).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/m);
      expect(table.stdout).toMatch(/^web\s+2\/2\s+2\s+2\s+\d+s$/m);
    });

    it("reports a conflict when re-applying after kubectl scale, and takes the field back with --force-conflicts", async () => {
      expect((await kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")).code).toBe(0);
      expect(sim.get("apps/v1", "Deployment", "shop", "web")?.spec).toMatchObject({ replicas: 5 });
      const conflicted = await kubectl("apply", "--server-side", "-f", join(dir, "web-3.yaml"));
      expect(conflicted.code).not.toBe(0);
      expect(conflicted.stderr).toContain(".spec.replicas");
      const forced = await kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        join(dir, "web-3.yaml"),
      );
      expect(forced.code).toBe(0);
      expect(sim.get("apps/v1", "Deployment", "shop", "web")?.spec).toMatchObject({ replicas: 3 });
    });

    it("rolls out a new image set with kubectl set image and reports it with kubectl rollout status", async () => {
      expect((await kubectl("set", "image", "deploy/web", "-n", "shop", "app=nginx:1.28")).code).toBe(0);
      const status = await kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=20s");
      expect(status.code).toBe(0);
      expect(status.stdout).toContain('deployment "web" successfully rolled out');
      const replicaSets = sim.list("apps/v1", "ReplicaSet", "shop") as any[];
      expect(
        replicaSets.map((rs) => [rs.spec.template.spec.containers[0].image, rs.spec.replicas]).sort(),
      ).toEqual([
        ["nginx:1.27", 0],
        ["nginx:1.28", 3],
      ]);
    });

    it("deletes the namespace together with everything in it", async () => {
      expect((await kubectl("delete", "namespace", "shop")).code).toBe(0);
      expect(sim.list("apps/v1", "Deployment")).toEqual([]);
      expect(sim.list("apps/v1", "ReplicaSet")).toEqual([]);
    });
  },
);
