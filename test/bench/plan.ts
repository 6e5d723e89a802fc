/**
 * `ferry plan` against a distant registry: 20 images × 3 environments (dev follows semver, staging
 * is promoted from dev, prod from staging), 200 tags per image, through a loopback proxy that adds
 * 50 ms to every registry request. Reports the registry requests and the wall time of one plan,
 * on loopback and at that distance.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { main } from "../../src/cli.js";
import type { CliIo } from "../../src/cli/io.js";
import { startEmbeddedRegistry } from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { sized } from "./size.js";
import { startTimingRelay } from "./timing-relay.js";

const IMAGES = sized(20, 3);
const TAGS = sized(200, 40);
/** Tags per image pushed as distinct images (the rest re-tag one of them). */
const DISTINCT = 20;
const LATENCY_MS = 50;
const ENVIRONMENTS = ["dev", "staging", "prod"] as const;

export async function bench(): Promise<Record<string, number>> {
  const registry = await startEmbeddedRegistry();
  const proxy = await startTimingRelay(new URL(registry.url), LATENCY_MS);
  const dir = await mkdtemp(join(tmpdir(), "ferry-bench-plan-"));
  try {
    const images = Array.from({ length: IMAGES }, (_, index) => `bench/svc-${index}`);
    await Promise.all(
      images.map(async (image) => {
        // The newest tags are real images; the older ones re-tag one manifest (one PUT each) so
        // that seeding 4,000 tags stays quick. The tag list is what the plan walks.
        for (let tag = TAGS - DISTINCT; tag < TAGS; tag += 1)
          await pushImage(registry.url, image, `1.${tag}.0`, { content: `${image}-${tag}` });
        const manifest = await fetch(`${registry.url}/v2/${image}/manifests/1.${TAGS - 1}.0`, {
          headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
        });
        const body = Buffer.from(await manifest.arrayBuffer());
        const type = manifest.headers.get("content-type") ?? "application/vnd.oci.image.manifest.v1+json";
        for (let tag = 0; tag < TAGS - DISTINCT; tag += 1) {
          const put = await fetch(`${registry.url}/v2/${image}/manifests/1.${tag}.0`, {
            method: "PUT",
            headers: { "content-type": type },
            body,
          });
          if (put.status !== 201) throw new Error(`re-tagging ${image}: HTTP ${put.status}`);
        }
      }),
    );
    const put = async (path: string, text: string): Promise<void> => {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    };
    const config = [
      "images:",
      ...images.map((image, index) => `  svc-${index}:\n    repository: ${proxy.host}/${image}`),
      "environments:",
      "  dev:\n    paths: [envs/dev]",
      "  staging:\n    paths: [envs/staging]\n    from: dev",
      "  prod:\n    paths: [envs/prod]\n    from: staging",
      "",
    ].join("\n");
    await put(".github/ferry.yml", config);
    const io: CliIo = {
      stdout: () => undefined,
      stderr: (text) => void process.stderr.write(text),
      readStdin: async () => "",
      cwd: dir,
      env: {},
      now: () => new Date(),
    };
    const plan = async (): Promise<{ requests: number; wallMs: number }> => {
      const before = proxy.requests();
      const started = performance.now();
      const code = await main(["plan", "--dir", dir, "--json"], io);
      const wallMs = performance.now() - started;
      if (code !== 0 && code !== 3) throw new Error(`ferry plan exited ${code}`);
      return { requests: proxy.requests() - before, wallMs };
    };
    const figures: Record<string, number> = {};
    // "promotions": each environment runs an older tag than the one before it, so every
    // environment changes; "steady": all three run the newest tag, so nothing does.
    const scenarios = { promotions: (rank: number) => TAGS - 10 - rank * 5, steady: () => TAGS - 1 };
    for (const [scenario, minor] of Object.entries(scenarios)) {
      for (const [rank, environment] of ENVIRONMENTS.entries()) {
        const entries = images.map((image) => `- name: ${proxy.host}/${image}\n  newTag: 1.${minor(rank)}.0`);
        await put(`envs/${environment}/kustomization.yaml`, `images:\n${entries.join("\n")}\n`);
      }
      // The first plan (no latency) also loads the code; the second is the same plan, 50 ms away.
      proxy.setLatency(0);
      await plan();
      const near = await plan();
      proxy.setLatency(LATENCY_MS);
      const far = await plan();
      const label = `plan.${scenario}.${IMAGES}_images_x_${ENVIRONMENTS.length}_envs_x_${TAGS}_tags`;
      figures[`${label}.registry_requests`] = far.requests;
      figures[`${label}.wall_ms_on_loopback`] = Math.round(near.wallMs);
      figures[`${label}.wall_ms_at_${LATENCY_MS}ms_per_request`] = Math.round(far.wallMs);
      figures[`${label}.latency_added_ms`] = Math.round(far.wallMs - near.wallMs);
    }
    return figures;
  } finally {
    await rm(dir, { recursive: true, force: true });
    await proxy.close();
    await registry.close();
  }
}
