import type { FerryConfig } from "../config/schema.js";

/**
 * Where an environment's health is read, whatever engine applies it (docs/config.md "Health"):
 * one of three GitHub records, each counted only from the identity the config names for it
 * (docs/security.md "Health").
 */
export type HealthSource =
  /** Deployments of a GitHub environment and their statuses, created by one of `reporters`. */
  | { kind: "deployments"; environment: string; reporters: string[]; label: string }
  /** Commit statuses whose context matches, created by one of `reporters`. */
  | { kind: "statuses"; context: ContextMatch; reporters: string[]; label: string }
  /** Check runs of this name created by the GitHub App `appId`. */
  | { kind: "check-run"; name: string; appId: number; label: string };

/**
 * A commit status context: exactly `exact`, or (`segments`) `prefix` followed by at most one more
 * `/segment` (Flux's default context, `kind/name/<provider id>`). Compared without case when
 * `caseless` (Flux lowercases its contexts).
 */
export interface ContextMatch {
  exact: string;
  withSegment?: boolean;
  caseless?: boolean;
}

/** Argo CD Notifications' documented template labels its status `continuous-delivery/<app>` (docs/with-argocd.md). */
export function argoCdContext(application: string): string {
  return `continuous-delivery/${application}`;
}

/**
 * The source of `environment`'s health. `appLogin` is the default reporter of Ferry's own
 * reconciler (an installation token of the app); without it and without `reporters`, nothing counts.
 */
export function healthSourceOf(
  config: FerryConfig,
  environment: string,
  appLogin: string | undefined,
): HealthSource {
  const health = config.environments[environment]?.health;
  const reporters = health?.reporters ?? [];
  switch (health?.source ?? "ferry") {
    case "argocd": {
      const application = health!.application!;
      if (health!.deployment !== undefined)
        return {
          kind: "deployments",
          environment: health!.deployment,
          reporters,
          label: `argocd app ${application}`,
        };
      return {
        kind: "statuses",
        context: { exact: health!.context ?? argoCdContext(application) },
        reporters,
        label: `argocd app ${application}`,
      };
    }
    case "flux": {
      const [kind, name] =
        health!.kustomization !== undefined
          ? ["kustomization", health!.kustomization]
          : ["helmrelease", health!.helmRelease!];
      return {
        kind: "statuses",
        context:
          health!.context !== undefined
            ? { exact: health!.context }
            : { exact: `${kind}/${name}`, withSegment: true, caseless: true },
        reporters,
        label: `flux ${kind}/${name}`,
      };
    }
    case "status":
      return {
        kind: "statuses",
        context: { exact: health!.context! },
        reporters,
        label: `commit status ${health!.context!}`,
      };
    case "check-run":
      return {
        kind: "check-run",
        name: health!.checkRun!,
        appId: health!.appId!,
        label: `check run ${health!.checkRun!}`,
      };
    default:
      return {
        kind: "deployments",
        environment,
        reporters: health?.reporters ?? (appLogin ? [appLogin] : []),
        label: "ferry's reconciler",
      };
  }
}

/** Whether a commit status context is the one `match` names. */
export function contextMatches(match: ContextMatch, context: string): boolean {
  const fold = (text: string) => (match.caseless ? text.toLowerCase() : text);
  const wanted = fold(match.exact);
  const seen = fold(context);
  if (seen === wanted) return true;
  if (!match.withSegment || !seen.startsWith(`${wanted}/`)) return false;
  const rest = seen.slice(wanted.length + 1);
  return rest.length > 0 && !rest.includes("/");
}

/**
 * A check run's state as a health state: completed with success is healthy, neutral and skipped
 * say nothing, any other conclusion failed; a run not completed is pending.
 */
export function checkRunState(
  status: string,
  conclusion: string | null | undefined,
): "success" | "failure" | "pending" | undefined {
  if (status !== "completed") return "pending";
  if (conclusion === "success") return "success";
  if (conclusion === "neutral" || conclusion === "skipped" || conclusion == null) return undefined;
  return "failure";
}

/** One report of a commit's health: its state and when it was posted. */
export interface HealthReport {
  state: "success" | "failure" | "error" | "pending";
  at: Date;
  description?: string;
}

/**
 * The health a commit's reports say, newest first: the newest report's state, since the oldest
 * report of the unbroken run of that state that ends with it (a re-sent "success" does not
 * restart a soak; a "failure" in between does).
 */
export function latestRun(
  reports: readonly HealthReport[],
): { state: HealthReport["state"]; since: Date; description?: string } | undefined {
  const newest = reports[0];
  if (newest === undefined) return undefined;
  let since = newest.at;
  for (const report of reports) {
    if (report.state !== newest.state) break;
    since = report.at;
  }
  return {
    state: newest.state,
    since,
    ...(newest.description !== undefined ? { description: newest.description } : {}),
  };
}
