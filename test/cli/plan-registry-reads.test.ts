import { describe, expect, it } from "vitest";
import type { FileSource } from "../../src/app/plan-inputs.js";
import type { ImageDescription, RegistryReader } from "../../src/app/ports.js";
import { buildPlanReport } from "../../src/cli/plan.js";
import { loadConfig } from "../../src/core/config/load-config.js";
import type { FerryConfig } from "../../src/core/config/schema.js";

const IMAGES = ["api", "web", "worker"];
const TAGS = ["1.0.0", "1.1.0", "1.2.0"];
const digestOf = (image: string, tag: string): string =>
  `sha256:${Buffer.from(`${image}:${tag}`).toString("hex").padEnd(64, "0").slice(0, 64)}`;

/** dev follows the registry; staging is promoted from dev, prod from staging; all run `tag`. */
function world(tag: string): { config: FerryConfig; files: FileSource } {
  const text = [
    "images:",
    ...IMAGES.map((image) => `  ${image}:\n    repository: registry.test/acme/${image}`),
    "environments:",
    "  dev:\n    paths: [envs/dev]",
    "  staging:\n    paths: [envs/staging]\n    from: dev",
    "  prod:\n    paths: [envs/prod]\n    from: staging",
    "",
  ].join("\n");
  const loaded = loadConfig(text);
  if (!loaded.ok) throw new Error("test config is invalid");
  const overlay = `images:\n${IMAGES.map((image) => `- name: registry.test/acme/${image}\n  newTag: ${tag}`).join("\n")}\n`;
  const files: FileSource = {
    listFiles: async (paths) => paths.map((path) => `${path}/kustomization.yaml`),
    readFile: async () => overlay,
  };
  return { config: loaded.config, files };
}

/**
 * A registry whose every answer arrives on a later turn of the event loop, recording each call
 * and the most calls ever waiting at once.
 */
function recordingRegistry(): RegistryReader & { calls: string[]; maxInFlight: () => number } {
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const later = <T>(value: () => T): Promise<T> => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    return new Promise((resolve) =>
      setImmediate(() => {
        inFlight -= 1;
        resolve(value());
      }),
    );
  };
  const image = (repository: string): string => repository.slice(repository.lastIndexOf("/") + 1);
  const describeRef = (repository: string, reference: string): ImageDescription => {
    const tag = reference.startsWith("sha256:")
      ? TAGS.find((candidate) => digestOf(image(repository), candidate) === reference)!
      : reference;
    return {
      digest: digestOf(image(repository), tag),
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      platforms: ["linux/amd64"],
      labels: {},
    };
  };
  return {
    calls,
    maxInFlight: () => maxInFlight,
    listTags: (repository) => {
      calls.push(`tags ${repository}`);
      return later(() => [...TAGS]);
    },
    resolveDigest: (repository, reference) => {
      calls.push(`digest ${repository}:${reference}`);
      return later(() => describeRef(repository, reference).digest);
    },
    describe: (repository, reference) => {
      calls.push(`describe ${repository}:${reference}`);
      return later(() => describeRef(repository, reference));
    },
  };
}

describe("ferry plan's registry reads", () => {
  it("asks the registry about a tag once per plan, however many environments run it", async () => {
    const registry = recordingRegistry();
    const { config, files } = world("1.1.0");
    const report = await buildPlanReport(registry, files, config, ["dev", "staging", "prod"], new Date(0));
    expect(report.changes.filter((change) => change.environment === "dev")).toHaveLength(IMAGES.length);
    // Each image: its tag list (dev), and the tag staging and prod promote, described once.
    const asked = registry.calls.filter((call) => call.includes(":1.1.0") || call.includes(":sha256:"));
    expect(new Set(asked).size).toBe(asked.length);
    expect(registry.calls.filter((call) => call.startsWith("digest "))).toEqual([]);
    for (const image of IMAGES)
      expect(registry.calls.filter((call) => call.endsWith(`acme/${image}:1.1.0`))).toHaveLength(1);
  });

  it("overlaps the reads of different images and environments instead of waiting for each", async () => {
    const registry = recordingRegistry();
    const { config, files } = world("1.0.0");
    await buildPlanReport(registry, files, config, ["dev", "staging", "prod"], new Date(0));
    expect(registry.maxInFlight()).toBeGreaterThan(1);
  });

  it("reports the same plan as one environment at a time", async () => {
    const { config, files } = world("1.0.0");
    const together = await buildPlanReport(
      recordingRegistry(),
      files,
      config,
      ["dev", "staging", "prod"],
      new Date(0),
    );
    const apart = { changes: [] as unknown[], unchanged: [] as unknown[], notices: [] as unknown[] };
    for (const environment of ["dev", "staging", "prod"]) {
      const one = await buildPlanReport(recordingRegistry(), files, config, [environment], new Date(0));
      apart.changes.push(...one.changes);
      apart.unchanged.push(...one.unchanged);
      apart.notices.push(...one.notices);
    }
    expect(together).toEqual(apart);
  });
});
