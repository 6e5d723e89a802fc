/**
 * The control-plane helper cleans up after itself: on stop, and when the process that started it
 * is killed without a chance to stop anything (the watchdog).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { eventually } from "./contract/backend.js";
import { apiRequest, serviceAccountToken, startControlPlane } from "./control-plane.js";

vi.setConfig({ testTimeout: 240_000 });

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function childPids(dir: string): number[] {
  // The helper's children are the only processes whose arguments name its temp dir.
  const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes(dir) && /\/(etcd|kube-apiserver) /.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe("the control-plane helper", () => {
  it("serves RBAC-checked requests, mints ServiceAccount tokens, and leaves no process or file after stop", async () => {
    const controlPlane = await startControlPlane();
    const pids = childPids(controlPlane.dir);
    try {
      expect(pids).toHaveLength(2);
      expect((await apiRequest(controlPlane, "GET", "/readyz")).status).toBe(200);
      expect((await apiRequest(controlPlane, "GET", "/api/v1/namespaces", { token: "wrong" })).status).toBe(
        401,
      );
      await apiRequest(controlPlane, "POST", "/api/v1/namespaces/default/serviceaccounts", {
        body: { metadata: { name: "probe" } },
      });
      const token = await serviceAccountToken(controlPlane, "default", "probe");
      // Authenticated as the ServiceAccount, authorized for nothing: RBAC is on.
      const denied = await apiRequest(controlPlane, "GET", "/api/v1/namespaces/default/configmaps", {
        token,
      });
      expect(denied.status).toBe(403);
      expect(denied.body).toMatch(/system:serviceaccount:default:probe/);
    } finally {
      await controlPlane.stop();
    }
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(controlPlane.dir)).toBe(false);
  });

  it("is taken down by its watchdog when the process that started it is killed", async () => {
    const script = `
      import { startControlPlane } from ${JSON.stringify(path.resolve("test/cluster/control-plane.ts"))};
      const cp = await startControlPlane();
      process.stdout.write(cp.dir + "\\n");
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const dir = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(out.trim());
      });
      child.once("exit", (code) =>
        reject(new Error(`the starter exited ${code} before the control plane was up`)),
      );
    });
    const pids = childPids(dir);
    expect(pids).toHaveLength(2);
    child.kill("SIGKILL");
    await eventually(
      async () => pids.filter(alive),
      (left) => left.length === 0,
      60_000,
      "etcd and kube-apiserver to stop",
    );
    await eventually(
      async () => existsSync(dir),
      (exists) => !exists,
      30_000,
      "the temp dir to go",
    );
  });
});
