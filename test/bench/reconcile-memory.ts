/**
 * Issue #33 goal 3: the reconciler's peak RSS as a process of its own (`ferry reconcile --once`,
 * as the image runs it: its node flags, dist/ when current) converging N objects into an empty
 * namespace of kube-apiserver, beside `kubectl apply --server-side` applying the same objects into
 * another, both measured by GNU time (the peak resident set the kernel recorded for the process).
 * At two sizes, so the figures say how memory and time grow with the number of objects; at the
 * smaller, the median of three runs each.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { apiRequest, kubeconfigFor, type ControlPlaneInfo } from "../cluster/control-plane.js";
import { benchConfigRepo, manifests } from "./reconcile.js";
import { serveCommand } from "./serve-command.js";
import { BenchSkipped } from "./skipped.js";
import { median } from "./whole-process.js";

const GNU_TIME = process.env.FERRY_GNU_TIME ?? "/usr/bin/time";

interface Measured {
  peakMb: number;
  ms: number;
}

/** Runs `command` to its end under GNU time: its peak RSS and wall time; throws unless it exits 0. */
function measured(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Measured> {
  const report = path.join(mkdtempSync(path.join(tmpdir(), "ferry-bench-time-")), "time");
  return new Promise((resolve, reject) => {
    const child = spawn(GNU_TIME, ["-f", "%M %e", "-o", report, "--", command, ...args], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const collect = (chunk: Buffer) => (output = (output + chunk.toString("utf8")).slice(-4_000));
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        if (code !== 0)
          throw new Error(`${path.basename(command)} ${args[0]}: exit ${code}: ${output.trim()}`);
        const [kib, seconds] = readFileSync(report, "utf8").trim().split(/\s+/).slice(-2).map(Number);
        resolve({ peakMb: kib! / 1024, ms: seconds! * 1000 });
      } catch (error) {
        reject(error);
      } finally {
        rmSync(path.dirname(report), { recursive: true, force: true });
      }
    });
  });
}

export async function createNamespace(info: ControlPlaneInfo, name: string): Promise<void> {
  const created = await apiRequest(info, "POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name } },
  });
  if (created.status !== 201) throw new Error(`create namespace ${name}: HTTP ${created.status}`);
}

/**
 * Ferry and kubectl each converging `objects` objects into a namespace of their own, `runs` times
 * in turn: the median of each figure (one process's peak RSS varies by several MB from run to run).
 */
async function side(
  info: ControlPlaneInfo,
  objects: number,
  runs: number,
): Promise<{ ferry: Measured; kubectl: Measured }> {
  const { root, repo, env } = benchConfigRepo(objects);
  try {
    const kubeconfig = path.join(root, "kubeconfig");
    writeFileSync(kubeconfig, kubeconfigFor(info));
    const manifestFile = path.join(root, "all.yaml");
    writeFileSync(manifestFile, manifests(objects));
    const ferryRuns: Measured[] = [];
    const kubectlRuns: Measured[] = [];
    for (let run = 0; run < runs; run++) {
      const ferryNamespace = `mem-ferry-${objects}-${run}`;
      const kubectlNamespace = `mem-kubectl-${objects}-${run}`;
      await createNamespace(info, ferryNamespace);
      await createNamespace(info, kubectlNamespace);
      // Both start cold: no discovery cache (kubectl keeps one under $HOME/.kube), a fresh clone.
      ferryRuns.push(
        await measured(
          process.execPath,
          [
            ...serveCommand().args,
            "reconcile",
            "--once",
            "--repo",
            repo,
            "--path",
            "env",
            "--namespace",
            ferryNamespace,
            "--environment",
            ferryNamespace,
            "--kubeconfig",
            kubeconfig,
            "--work-dir",
            path.join(root, `work-${run}`),
          ],
          { ...env, HOME: path.join(root, `home-ferry-${run}`) },
          path.resolve(import.meta.dirname, "../.."),
        ),
      );
      kubectlRuns.push(
        await measured(
          "kubectl",
          [
            "apply",
            "--server-side",
            "--field-manager=bench",
            "--kubeconfig",
            kubeconfig,
            "-n",
            kubectlNamespace,
            "-f",
            manifestFile,
          ],
          { PATH: process.env.PATH, HOME: path.join(root, `home-kubectl-${run}`) },
          root,
        ),
      );
    }
    const middle = (all: Measured[]): Measured => ({
      peakMb: median(all.map((one) => one.peakMb)),
      ms: median(all.map((one) => one.ms)),
    });
    return { ferry: middle(ferryRuns), kubectl: middle(kubectlRuns) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The figures at `small` and `large` objects (1,000 and 5,000 in a full run). */
export async function reconcileMemory(
  info: ControlPlaneInfo,
  small: number,
  large: number,
): Promise<Record<string, number>> {
  if (!existsSync(GNU_TIME)) throw new BenchSkipped(`${GNU_TIME} (Debian's time package) is not installed`);
  const figures: Record<string, number> = {
    // Through tsx when dist/ is older than src/: its loader adds to Ferry's figure.
    "reconcile_real_apiserver.own_process.ferry_from_dist_cli_js": serveCommand().fromDist ? 1 : 0,
  };
  const at: Record<number, { ferry: Measured; kubectl: Measured }> = {};
  for (const objects of [small, large]) {
    // Three runs at the smaller size (its ratio is the goal's), one at the larger (its growth).
    const { ferry, kubectl } = (at[objects] = await side(info, objects, objects === small ? 3 : 1));
    const prefix = `reconcile_real_apiserver.own_process_${objects}_objects`;
    figures[`${prefix}.ferry_peak_rss_mb`] = ferry.peakMb;
    figures[`${prefix}.kubectl_apply_server_side_peak_rss_mb`] = kubectl.peakMb;
    figures[`${prefix}.peak_rss_ratio`] = ferry.peakMb / kubectl.peakMb;
    figures[`${prefix}.ferry_ms`] = ferry.ms;
    figures[`${prefix}.kubectl_ms`] = kubectl.ms;
  }
  const growth = `reconcile_real_apiserver.own_process_${large}_over_${small}_objects`;
  figures[`${growth}.ferry_peak_rss_ratio`] = at[large]!.ferry.peakMb / at[small]!.ferry.peakMb;
  figures[`${growth}.ferry_time_ratio`] = at[large]!.ferry.ms / at[small]!.ferry.ms;
  figures[`${growth}.kubectl_peak_rss_ratio`] = at[large]!.kubectl.peakMb / at[small]!.kubectl.peakMb;
  figures[`${growth}.kubectl_time_ratio`] = at[large]!.kubectl.ms / at[small]!.kubectl.ms;
  return figures;
}
