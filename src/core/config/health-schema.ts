import * as z from "zod";
import { isDuration } from "../duration.js";

/**
 * `health:` and `soak:` of an environment (docs/config.md "Health"): where the environment's health
 * comes from (Ferry's reconciler, Argo CD Notifications, Flux notification-controller, a commit
 * status or a check run) and who may report it, and how a follower soaks on it.
 */

/** A GitHub login, a bot's with its `[bot]` suffix (`ferry[bot]`). */
export const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/;
/** A Kubernetes object name (DNS subdomain, lowercase), as Argo CD and Flux name theirs. */
const OBJECT_NAME = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;
/** A commit status context or check run name: printable, no control characters. */
const CONTEXT = /^[^\p{Cc}]{1,255}$/u;

export const HEALTH_SOURCES = ["ferry", "argocd", "flux", "status", "check-run"] as const;
export type HealthSourceName = (typeof HEALTH_SOURCES)[number];

const duration = z.string().refine(isDuration, { message: "invalid duration: use e.g. 30s, 5m, 1h30m, 2d" });

export const healthSchema = z
  .strictObject({
    source: z
      .enum(HEALTH_SOURCES)
      .default("ferry")
      .describe(
        "ferry: Ferry's reconciler's Deployment statuses (default). argocd: the commit status (or, with deployment, the Deployment statuses) Argo CD Notifications' github service writes for application. flux: the commit status Flux notification-controller's github provider writes for kustomization or helmRelease. status: a commit status by context. check-run: a check run by name, from appId.",
      ),
    reporters: z
      .array(z.string().regex(LOGIN, "a reporter is a GitHub login (a bot's with [bot])"))
      .min(1)
      .max(20)
      .optional()
      .describe(
        "The logins whose statuses count as this environment's health (the login that created the Deployment or commit status; a GitHub App's is <slug>[bot]); default for ferry: the app itself. Required for argocd, flux and status.",
      ),
    application: z
      .string()
      .regex(OBJECT_NAME, "application is an Argo CD Application name")
      .optional()
      .describe("argocd: the Application that applies this environment."),
    deployment: z
      .string()
      .regex(CONTEXT, "deployment is a GitHub environment name")
      .optional()
      .describe(
        "argocd: read the Deployment statuses Argo CD writes for this GitHub environment (its template's github.deployment.environment) instead of the commit status.",
      ),
    kustomization: z
      .string()
      .regex(OBJECT_NAME, "kustomization is a Flux Kustomization name")
      .optional()
      .describe("flux: the Kustomization that applies this environment."),
    helmRelease: z
      .string()
      .regex(OBJECT_NAME, "helmRelease is a Flux HelmRelease name")
      .optional()
      .describe("flux: the HelmRelease that applies this environment."),
    context: z
      .string()
      .regex(CONTEXT, "context is a commit status context")
      .optional()
      .describe(
        "status: the commit status context (required). argocd: the template's github.status.label (default continuous-delivery/<application>). flux: the Provider's commitStatusExpr result (default <kind>/<name>/<id>).",
      ),
    checkRun: z
      .string()
      .regex(CONTEXT, "checkRun is a check run name")
      .optional()
      .describe("check-run: the check run's name."),
    appId: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("check-run: the id of the GitHub App whose check run counts."),
  })
  .superRefine((health, ctx) => {
    for (const problem of healthProblems(health)) ctx.addIssue({ code: "custom", ...problem });
  });

export type HealthConfig = z.infer<typeof healthSchema>;

const FIELDS_OF: Record<HealthSourceName, readonly string[]> = {
  ferry: ["reporters"],
  argocd: ["reporters", "application", "deployment", "context"],
  flux: ["reporters", "kustomization", "helmRelease", "context"],
  status: ["reporters", "context"],
  "check-run": ["checkRun", "appId"],
};

/** What a `health:` block misses or has that its source does not read, each at its key. */
function healthProblems(health: HealthConfig): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  const { source } = health;
  const need = (key: keyof HealthConfig, why: string): void => {
    if (health[key] === undefined) problems.push({ path: [key], message: `source: ${source} needs ${why}` });
  };
  for (const key of Object.keys(health))
    if (key !== "source" && !FIELDS_OF[source].includes(key))
      problems.push({ path: [key], message: `${key} does not apply to source: ${source}` });
  if (source === "argocd") {
    need("application", "application (the Argo CD Application)");
    need("reporters", "reporters (the login Argo CD Notifications writes with)");
  }
  if (source === "flux") {
    need("reporters", "reporters (the login notification-controller writes with)");
    if ((health.kustomization === undefined) === (health.helmRelease === undefined))
      problems.push({ path: [], message: "source: flux needs one of kustomization or helmRelease" });
  }
  if (source === "status") {
    need("context", "context (the commit status context)");
    need("reporters", "reporters (the logins whose status counts)");
  }
  if (source === "check-run") {
    need("checkRun", "checkRun (the check run's name)");
    need("appId", "appId (the GitHub App whose check run counts)");
  }
  return problems;
}

export const soakSchema = z
  .union([
    duration,
    z.strictObject({
      duration,
      basis: z
        .enum(["health", "time"])
        .default("health")
        .describe(
          "health (default): the upstream must have reported healthy, with the versions being promoted, for duration. time: the versions must have been on the upstream's branch for duration, whatever its health.",
        ),
    }),
  ])
  .describe(
    "How long the upstream must have been healthy with the versions being promoted (e.g. 30m), or { duration, basis: time } to soak on time alone.",
  );

export type SoakConfig = z.infer<typeof soakSchema>;

/** A `soak:` as one shape: the duration and what it counts. */
export function soakSettings(
  soak: SoakConfig | undefined,
): { duration: string; basis: "health" | "time" } | undefined {
  if (soak === undefined) return undefined;
  if (typeof soak === "string") return { duration: soak, basis: "health" };
  return { duration: soak.duration, basis: soak.basis };
}
