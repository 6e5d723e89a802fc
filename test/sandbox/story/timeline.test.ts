import { describe, expect, it } from "vitest";
import {
  failedStep,
  formatEndpoints,
  formatStepLine,
  formatSummary,
  toJson,
  type EnvironmentSummary,
  type StepResult,
} from "../../../packages/sandbox/src/story/timeline.js";

const DIGEST = `sha256:${"ab12".repeat(16)}`;
const environments: EnvironmentSummary[] = [
  {
    environment: "staging",
    version: "1.8.0",
    digest: DIGEST,
    sync: "Synced",
    health: "Healthy",
    held: false,
  },
  {
    environment: "prod",
    version: "1.7.3",
    digest: `sha256:${"cd34".repeat(16)}`,
    sync: "OutOfSync",
    health: "Progressing",
    held: true,
  },
];

describe("the sandbox timeline", () => {
  it("prints one line per step with its mark, number, name, latency and detail", () => {
    const line = formatStepLine({ name: "staging-pr", ok: true, ms: 1748.4, detail: "#1 merged" }, 2);
    expect(line).toMatch(/^✓ +2\. staging-pr +1748 ms {2}#1 merged\n$/);
    expect(formatStepLine({ name: "rollback", ok: false, ms: 15_040, detail: "timed out" }, 7)).toMatch(
      /^✗ +7\. rollback +15\.0 s {2}timed out\n$/,
    );
  });

  it("prints the summary as aligned columns with short digests and the hold", () => {
    const lines = formatSummary(environments).trimEnd().split("\n");
    expect(lines[0]).toMatch(/^environment +version +digest +sync +health +held$/);
    expect(lines[2]).toMatch(/^staging +1\.8\.0 +sha256:ab12ab12ab12 +Synced +Healthy +no$/);
    expect(lines[3]).toMatch(/^prod +1\.7\.3 +sha256:cd34cd34cd34 +OutOfSync +Progressing +yes$/);
    const digestColumn = lines.map((line) => line.indexOf("sha256:")).filter((index) => index >= 0);
    expect(new Set(digestColumn).size).toBe(1);
  });

  it("shows a dash for an environment whose digest is not known", () => {
    const [, , row] = formatSummary([{ ...environments[0]!, digest: "" }]).split("\n");
    expect(row).toMatch(/^staging +1\.8\.0 +- +Synced +Healthy +no$/);
  });

  it("lists every endpoint and a token per user", () => {
    const text = formatEndpoints({
      github: "http://127.0.0.1:1",
      repositories: { "acme/shop-config": "http://127.0.0.1:1/repos/acme/shop-config" },
      registry: "127.0.0.1:2",
      cluster: "http://127.0.0.1:3",
      status: "http://127.0.0.1:4/status",
      tokens: { mona: "t-mona", eve: "t-eve" },
    });
    for (const expected of [
      "http://127.0.0.1:1",
      "/repos/acme/shop-config",
      "127.0.0.1:2",
      "http://127.0.0.1:3",
      "http://127.0.0.1:4/status",
      "mona",
      "t-mona",
      "eve",
      "t-eve",
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).toMatch(/^Ferry page +http:\/\/127\.0\.0\.1:4\/$/m);
  });

  it("names the first failed step, or none when all passed", () => {
    const steps: StepResult[] = [
      { name: "push", ok: true, ms: 1, detail: "" },
      { name: "staging-pr", ok: false, ms: 1, detail: "no PR" },
    ];
    expect(failedStep(steps)?.name).toBe("staging-pr");
    expect(failedStep(steps.slice(0, 1))).toBeUndefined();
  });

  it("shapes the JSON as steps and environments, with endpoints only when given", () => {
    expect(Object.keys(toJson([], environments))).toEqual(["steps", "environments"]);
    expect(
      Object.keys(
        toJson([], environments, {
          github: "",
          repositories: {},
          registry: "",
          cluster: "",
          status: "",
          tokens: {},
        }),
      ),
    ).toEqual(["steps", "environments", "endpoints"]);
  });
});
