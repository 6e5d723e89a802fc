/**
 * `ferry set-image` on a 100,000-line Helm values file, as a whole process, side by side with the
 * peer people script the same edit with: mikefarah's Go `yq -i` v4 (built from its Go module into
 * ~/.cache/ferry on first use). Pairs alternate (ferry, yq, ferry, yq, …) so that load on the
 * machine falls on both alike; the figures are the medians and their ratio (goal ≤ 0.5, issue
 * "Close to the floor"). Runs the built CLI (`dist/cli.js`, `npm run build`), as the image does.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { generateValues } from "./edit.js";
import { sized } from "./size.js";
import { BenchSkipped } from "./skipped.js";

const YQ_VERSION = "v4.54.3";
const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli.js");

/** The yq binary, built once into the cache (Go's module proxy) when it is missing. */
function yqBinary(): string {
  const bin = join(
    process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"),
    "ferry",
    `yq-${YQ_VERSION}`,
    "bin",
  );
  const yq = join(bin, "yq");
  if (existsSync(yq)) return yq;
  if (spawnSync("go", ["version"]).status !== 0)
    throw new BenchSkipped(`yq ${YQ_VERSION} is not built and there is no go to build it`);
  execFileSync("go", ["install", `github.com/mikefarah/yq/v4@${YQ_VERSION}`], {
    env: { ...process.env, GOBIN: bin },
    stdio: "ignore",
  });
  return yq;
}

function timed(command: string, args: string[]): number {
  const started = performance.now();
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "pipe"] });
  const ms = performance.now() - started;
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(" ")}: exit ${result.status}: ${result.stderr}`);
  return ms;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

export async function bench(): Promise<Record<string, number>> {
  if (!existsSync(CLI)) throw new BenchSkipped("dist/cli.js is not built: npm run build");
  const yq = yqBinary();
  const lines = sized(100_000, 10_000);
  const size = `${lines / 1000}k_lines`;
  const dir = mkdtempSync(join(tmpdir(), "ferry-bench-set-image-"));
  try {
    const text = generateValues(lines);
    const ferryFile = join(dir, "ferry-values.yaml");
    const yqFile = join(dir, "yq-values.yaml");
    const ferry: number[] = [];
    const peer: number[] = [];
    const pairs = sized(7, 3);
    for (let pair = 0; pair < pairs; pair++) {
      // A fresh copy each time, and a tag that differs from the file's: every run really edits.
      writeFileSync(ferryFile, text);
      writeFileSync(yqFile, text);
      const tag = `1.8.${pair}`;
      ferry.push(timed(process.execPath, [CLI, "set-image", ferryFile, `ghcr.io/acme/shop:${tag}`]));
      peer.push(timed(yq, ["-i", `.shop.image.tag = "${tag}"`, yqFile]));
    }
    const ferryMs = median(ferry);
    const yqMs = median(peer);
    return {
      [`set_image.${size}.ferry_ms`]: Math.round(ferryMs),
      [`set_image.${size}.yq_go_${YQ_VERSION}_ms`]: Math.round(yqMs),
      [`set_image.${size}.ratio_to_yq (goal <= 0.5)`]: Math.round((ferryMs / yqMs) * 100) / 100,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
