/**
 * Webhook payloads reuse the REST builders, but GitHub's webhook schemas are stricter in
 * places (fixed property sets) and differ in others (push events' Unix-time repository
 * dates, the slimmer check suite inside a check_run). This adapts a payload built from REST
 * shapes to what the event actually carries.
 */
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** REST-only fields that webhook objects do not carry. */
function trim(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(trim);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = trim(value);
  if ("login" in out && "gravatar_id" in out) delete out.user_view_type;
  if ("full_name" in out && "forks_url" in out) {
    delete out.network_count;
    delete out.subscribers_count;
  }
  if ("slug" in out && "client_id" in out && "external_url" in out) delete out.client_id;
  if ("verified" in out && "reason" in out && "signature" in out) delete out.verified_at;
  return out;
}

const CHECK_RUN_SUITE_FIELDS = [
  "after",
  "app",
  "before",
  "conclusion",
  "created_at",
  "head_branch",
  "head_sha",
  "id",
  "node_id",
  "pull_requests",
  "status",
  "updated_at",
  "url",
];
const CHECK_SUITE_FIELDS = [
  ...CHECK_RUN_SUITE_FIELDS,
  "check_runs_url",
  "head_commit",
  "latest_check_runs_count",
  "rerequestable",
  "runs_rerequestable",
];

function pick(object: Json, fields: string[]): Json {
  return Object.fromEntries(Object.entries(object).filter(([key]) => fields.includes(key)));
}

export function toWebhookPayload(event: string, payload: Json): Json {
  const result = trim(structuredClone(payload)) as Json;
  const repository = result.repository;
  if (isObject(repository) && event === "push") {
    // Push events carry the repository's dates as Unix seconds (a long-standing GitHub quirk).
    for (const field of ["created_at", "pushed_at"]) {
      const value = repository[field];
      if (typeof value === "string") repository[field] = Math.floor(new Date(value).getTime() / 1000);
    }
  }
  const checkRun = result.check_run;
  if (isObject(checkRun) && isObject(checkRun.check_suite))
    checkRun.check_suite = pick(checkRun.check_suite, CHECK_RUN_SUITE_FIELDS);
  if (isObject(result.check_suite)) result.check_suite = pick(result.check_suite, CHECK_SUITE_FIELDS);
  return result;
}
