import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { localFileSource } from "../adapters/fs/local-file-source.js";
import type { RegistryClientOptions } from "../adapters/registry/index.js";
import { planEnvironment, type EnvironmentPlan } from "../app/plan-environment.js";
import type { FileSource } from "../app/plan-inputs.js";
import { upstreamPins } from "../app/upstream-pins.js";
import { CONFIG_PATH, formatProblems } from "../core/config/load-config.js";
import type { GeneratedEntry } from "../core/generate/expand-config.js";
import { formatGenerated } from "../core/generate/format-generated.js";
import { environmentOrder, type FerryConfig } from "../core/config/schema.js";
import { UserError } from "../core/errors.js";
import { isValidTag, shortDigest } from "../core/image-ref.js";
import { formatExplanation } from "../core/why/explain-tag.js";
import { explainImageTag, type WhySources } from "../app/why-tag.js";
import { gateNoticeForPlan } from "../core/policy/ci-gating.js";
import type { RegistryReader } from "../app/ports.js";
import { runRegistryReads } from "../app/run-registry-reads.js";
import { EXIT, UsageError, type CliIo } from "./io.js";
import { loadLocalConfig } from "./load-local-config.js";
import { cliRegistryClient } from "./registry-access.js";

const USAGE = "usage: ferry plan [--dir DIR] [--env NAME] [--json] [--why IMAGE[@TAG]]";

export interface PlanReport {
  changes: {
    environment: string;
    image: string;
    file: string;
    line: number;
    from: string;
    to: string;
    digest: string;
    reason: string;
  }[];
  /** `error: true` when the registry could not be read for that image (the command then exits 1). */
  unchanged: { environment: string; image: string; reason: string; error?: true }[];
  /** A running tag outside its policy, kept or moved back on purpose (allowDowngrade). */
  notices: { environment: string; image: string; message: string }[];
}

/**
 * `ferry plan`: reads the config repo checkout, queries the registries, and prints per environment
 * and image what would change and why — or why nothing does. Exit 0 when something would change,
 * 3 when nothing would, 1 for invalid input or an unreachable registry.
 */
export async function run(args: string[], io: CliIo): Promise<number> {
  return runPlan(args, io);
}

/** `registryOverrides`: tests only, the loopback endpoints of the providers' fakes. */
export async function runPlan(
  args: string[],
  io: CliIo,
  registryOverrides: Partial<RegistryClientOptions> = {},
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      dir: { type: "string" },
      env: { type: "string" },
      json: { type: "boolean" },
      why: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}\n${USAGE}`);
  const dir = resolve(io.cwd, values.dir ?? ".");
  const { config, generated, shadowed } = await readConfig(dir, io.env);
  const environments = values.env !== undefined ? [values.env] : environmentOrder(config);
  if (values.env !== undefined && !(values.env in config.environments)) {
    throw new UserError(
      "unknown-environment",
      `unknown environment ${JSON.stringify(values.env)} (known: ${Object.keys(config.environments).join(", ")})`,
    );
  }
  const registry = cliRegistryClient(config, io.env, registryOverrides);
  const files = localFileSource(dir);
  if (values.why !== undefined)
    return printWhy(
      values.why,
      { registry, files, config, now: io.now() },
      environments,
      values.json === true,
      io,
    );
  const output = await buildPlanReport(registry, files, config, environments, io.now());
  // The expanded list: which entries were generated, by which rule or set (docs/config.md).
  const expanded = generated.length > 0 || shadowed.length > 0 ? { generated, shadowed } : {};
  if (values.json) io.stdout(`${JSON.stringify({ ...output, ...expanded }, null, 2)}\n`);
  else {
    for (const line of formatGenerated(generated, shadowed)) io.stdout(`${line}\n`);
    io.stdout(formatPlanReport(output));
  }
  // Everything readable was planned and printed; an image whose registry failed still fails the run.
  const failed = output.unchanged.filter((entry) => entry.error);
  if (failed.length > 0) {
    io.stderr(
      `ferry plan: ${failed.map((entry) => `${entry.environment}/${entry.image}`).join(", ")} could not be planned (registry errors above)\n`,
    );
    return EXIT.invalid;
  }
  return output.changes.length > 0 ? EXIT.ok : EXIT.noMatch;
}

/**
 * Plans each environment. An environment with `from` shows the promotion it would get: exactly
 * what its upstream runs (same digest); a manual one without `from` changes only by command.
 */
export async function buildPlanReport(
  registry: RegistryReader,
  files: FileSource,
  config: FerryConfig,
  environments: string[],
  now: Date,
): Promise<PlanReport> {
  // One run's reads are shared by every environment, and environments are planned side by side:
  // the registry client bounds how many requests run at once per registry.
  const reads = runRegistryReads(registry);
  const parts = await Promise.all(
    environments.map((environment) => planReportFor(reads, files, config, environment, now)),
  );
  const output: PlanReport = { changes: [], unchanged: [], notices: [] };
  for (const part of parts) {
    output.changes.push(...part.changes);
    output.unchanged.push(...part.unchanged);
    output.notices.push(...part.notices);
  }
  return output;
}

async function planReportFor(
  registry: RegistryReader,
  files: FileSource,
  config: FerryConfig,
  environment: string,
  now: Date,
): Promise<PlanReport> {
  const output: PlanReport = { changes: [], unchanged: [], notices: [] };
  const settings = config.environments[environment]!;
  let plan: EnvironmentPlan;
  if (settings.from !== undefined) {
    const { pins, failed } = await upstreamPins(registry, files, config, settings.from, {
      onRegistryError: "report",
    });
    // Only what upstream runs is promoted: an image it does not run is not taken from the registry.
    plan = await planEnvironment({ registry, files, now }, config, environment, {
      pins,
      images: Object.keys(pins),
      onRegistryError: "report",
    });
    plan.unchanged.push(...failed);
    for (const change of plan.changes) change.reason = `promotion from ${settings.from}: ${change.reason}`;
    for (const image of Object.keys(config.images)) {
      if (!(image in pins) && !failed.some((entry) => entry.image === image))
        plan.unchanged.push({
          image,
          reason: `${settings.from} does not run ${image}, so there is nothing to promote`,
        });
    }
  } else if (settings.update === "manual") {
    for (const image of Object.keys(config.images))
      output.unchanged.push({
        environment,
        image,
        reason: "update: manual (changes only by /promote or /rollback)",
      });
    return output;
  } else {
    plan = await planEnvironment({ registry, files, now }, config, environment, {
      onRegistryError: "report",
    });
    // The app gates these tags on the source commit's CI, which this command cannot see: say so.
    for (const change of plan.changes) {
      const source = config.images[change.image]?.source;
      if (source === undefined || change.to.tag === undefined) continue;
      const gate = {
        tag: change.to.tag,
        source,
        ...(change.revision ? { revision: change.revision } : {}),
      };
      plan.notices.push({ image: change.image, message: gateNoticeForPlan(gate) });
    }
  }
  for (const change of plan.changes) {
    for (const edit of change.edits) {
      output.changes.push({
        environment,
        image: change.image,
        file: edit.file,
        line: edit.line,
        from: edit.from,
        to: edit.to,
        digest: change.to.digest,
        reason: change.reason,
      });
    }
  }
  for (const entry of plan.unchanged) output.unchanged.push({ environment, ...entry });
  for (const notice of plan.notices) output.notices.push({ environment, ...notice });
  return output;
}

export function formatPlanReport(output: PlanReport): string {
  const lines: string[] = [];
  for (const change of output.changes) {
    lines.push(
      `${change.environment}  ${change.image}  ${change.file}:${change.line}  ${change.from === "" ? "(none)" : change.from} -> ${change.to}  ${shortDigest(change.digest)}  (${change.reason})`,
    );
  }
  for (const entry of output.unchanged)
    lines.push(`${entry.environment}  ${entry.image}  unchanged: ${entry.reason}`);
  for (const entry of output.notices)
    lines.push(`${entry.environment}  ${entry.image}  notice: ${entry.message}`);
  if (lines.length === 0) lines.push("nothing to plan: no environments");
  return `${lines.join("\n")}\n`;
}

async function readConfig(
  dir: string,
  env: CliIo["env"],
): Promise<{ config: FerryConfig; generated: GeneratedEntry[]; shadowed: GeneratedEntry[] }> {
  const result = await loadLocalConfig(dir, env);
  if (result === undefined) throw new UserError("config-missing", `no ${CONFIG_PATH} in ${dir}`);
  if (!result.ok)
    throw new UserError(
      "invalid-config",
      `invalid ${CONFIG_PATH}:\n${formatProblems(CONFIG_PATH, result.problems)}`,
    );
  return result;
}

/**
 * `ferry plan --why IMAGE[@TAG]`: the reason chain for that tag (or the policy's newest) in each
 * environment, or in `--env`. What needs GitHub (Ferry's state, CI gating, soak) says so.
 */
async function printWhy(
  question: string,
  sources: WhySources,
  environments: string[],
  json: boolean,
  io: CliIo,
): Promise<number> {
  const at = question.indexOf("@");
  const image = at < 0 ? question : question.slice(0, at);
  const tag = at < 0 ? undefined : question.slice(at + 1);
  if (!(image in sources.config.images))
    throw new UserError(
      "unknown-image",
      `unknown image ${JSON.stringify(image)} (known: ${Object.keys(sources.config.images).join(", ")})`,
    );
  if (tag !== undefined && !isValidTag(tag))
    throw new UsageError(`--why: ${JSON.stringify(tag)} is not a valid tag`);
  const answers = [];
  for (const environment of environments)
    answers.push({
      environment,
      ...(await explainImageTag(sources, { environment, image, ...(tag !== undefined ? { tag } : {}) })),
    });
  if (json) io.stdout(`${JSON.stringify(answers, null, 2)}\n`);
  else io.stdout(`${answers.map((answer) => formatExplanation(answer)).join("\n\n")}\n`);
  return EXIT.ok;
}
