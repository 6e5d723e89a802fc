/**
 * Faults on demand, so tests can prove that callers survive a failing API server: failed
 * LISTs (the reconciler must not prune on them), failed applies, and added latency.
 */
export type RequestVerb =
  "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection" | "discovery";

export interface RequestRecord {
  method: string;
  /** Path without the query string. */
  path: string;
  verb: RequestVerb;
  /** Resource plural (`deployments`), when the path names one. */
  resource?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** `apply` for server-side apply; `merge`, `strategic` or `json` for other patches. */
  patchType?: string;
  fieldManager?: string;
  dryRun: boolean;
  /** HTTP status of the answer (for watches: 200 once streaming starts). */
  status?: number;
}

export interface FaultRule {
  /** Matches this verb; `apply` matches server-side-apply PATCHes only; `write` any mutating verb. */
  verb?: RequestVerb | "apply" | "write";
  resource?: string;
  namespace?: string;
  name?: string;
  status: number;
  /** How many matching requests fail; Infinity for all until cleared. */
  count: number;
  message?: string;
}

const WRITE_VERBS = new Set<RequestVerb>(["create", "update", "patch", "delete", "deletecollection"]);

export class ClusterFaults {
  private rules: FaultRule[] = [];
  private latencyMs = 0;

  /** Fail the next `count` (default 1) LISTs of `resource` (any resource when omitted) with `status` (default 500). */
  failList(options: { resource?: string; namespace?: string; status?: number; count?: number } = {}): void {
    this.fail({ ...options, verb: "list" });
  }

  /** Fail the next `count` (default 1) server-side applies (optionally of one resource/name). */
  failApply(
    options: { resource?: string; namespace?: string; name?: string; status?: number; count?: number } = {},
  ): void {
    this.fail({ ...options, verb: "apply" });
  }

  fail(options: Partial<FaultRule>): void {
    this.rules.push({ ...options, status: options.status ?? 500, count: options.count ?? 1 });
  }

  /** Delay every API answer by `ms` (0 turns it off). */
  latency(ms: number): void {
    this.latencyMs = ms;
  }

  currentLatency(): number {
    return this.latencyMs;
  }

  clear(): void {
    this.rules = [];
    this.latencyMs = 0;
  }

  /** The rule this request trips, consuming one of its counts. */
  take(request: RequestRecord): FaultRule | undefined {
    const rule = this.rules.find((candidate) => matches(candidate, request));
    if (!rule) return undefined;
    rule.count--;
    if (rule.count <= 0) this.rules.splice(this.rules.indexOf(rule), 1);
    return rule;
  }
}

function matches(rule: FaultRule, request: RequestRecord): boolean {
  if (rule.verb === "apply") {
    if (request.patchType !== "apply") return false;
  } else if (rule.verb === "write") {
    if (!WRITE_VERBS.has(request.verb)) return false;
  } else if (rule.verb && rule.verb !== request.verb) {
    return false;
  }
  if (rule.resource && rule.resource !== request.resource) return false;
  if (rule.namespace && rule.namespace !== request.namespace) return false;
  if (rule.name && rule.name !== request.name) return false;
  return true;
}

export function reasonForStatus(status: number): string {
  const reasons: Record<number, string> = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
  };
  return reasons[status] ?? "Unknown";
}
