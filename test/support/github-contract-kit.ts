/**
 * Validators that keep the emulator honest: REST responses against api.github.com's OpenAPI
 * description (the operation's schema for the answered status) and webhook payloads against
 * @octokit/webhooks-schemas.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import type { Octokit } from "@octokit/rest";

const require = createRequire(import.meta.url);
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      { operationId: string; responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }
    >
  >;
}

/**
 * OpenAPI 3.0's `nullable: true` is not JSON Schema: rewrite it as a `null` type (or an anyOf
 * with null when the schema has no `type`), so ajv checks exactly what the description means.
 */
function rewriteNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteNullable);
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node))
    out[key] = key === "example" || key === "examples" ? value : rewriteNullable(value);
  if (!("nullable" in out)) return out;
  const nullable = out.nullable === true;
  delete out.nullable;
  if (!nullable) return out;
  if (typeof out.type === "string") {
    out.type = [out.type, "null"];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: "null" }] };
}

let openapi: OpenApi | undefined;
let restAjv: Ajv | undefined;
const restValidators = new Map<string, ValidateFunction>();

function loadOpenApi(): { spec: OpenApi; ajv: Ajv } {
  if (!openapi || !restAjv) {
    openapi = rewriteNullable(
      JSON.parse(readFileSync(require.resolve("@octokit/openapi/generated/api.github.com.json"), "utf8")),
    ) as OpenApi;
    restAjv = new Ajv({ strict: false, allErrors: true, validateSchema: false, validateFormats: true });
    addFormats(restAjv);
    restAjv.addSchema({ ...(openapi as object), $id: "openapi" });
  }
  return { spec: openapi, ajv: restAjv };
}

export interface ContractFailure {
  operation: string;
  status: number;
  errors: string[];
}

export interface CheckedResponse {
  operation: string;
  status: number;
  /** `METHOD /path/{}` with parameters blanked, comparable with `Router.list()`. */
  route: string;
}

function blankRoute(method: string, template: string): string {
  return `${method.toUpperCase()} ${template.split("?")[0]!.replace(/\{\+?\w+\}/g, "{}")}`;
}

/**
 * Defects in the published description itself, which real GitHub responses fail too. Each is
 * narrow: one operation, one instance path pattern, and the reason.
 */
const KNOWN_SPEC_DEFECTS: { operation: string; instancePath: RegExp; reason: string }[] = [
  {
    operation: "apps/list-installations",
    instancePath: /^\/\d+\/account$/,
    reason:
      "the list inlines `account` as allOf [simple-user, enterprise] where apps/get-installation says anyOf",
  },
];

/** Escapes a JSON pointer segment. */
function pointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Validates one response against the operation's schema; returns undefined when the spec has no JSON body for it. */
export function validateRestResponse(
  method: string,
  template: string,
  status: number,
  body: unknown,
): { operation: string; errors: string[] } | undefined {
  const { spec, ajv } = loadOpenApi();
  const path = template.replace(/\{\+?(\w+)\}/g, "{$1}").split("?")[0]!;
  const operation = spec.paths[path]?.[method.toLowerCase()];
  if (!operation)
    return { operation: `${method} ${path}`, errors: [`no such operation in the OpenAPI description`] };
  const response = operation.responses[String(status)];
  if (!response)
    return {
      operation: operation.operationId,
      errors: [`status ${status} is not documented for this operation`],
    };
  if (!response.content?.["application/json"]?.schema) return undefined;
  const key = `${path} ${method} ${status}`;
  let validate = restValidators.get(key);
  if (!validate) {
    const ref = `openapi#/paths/${pointer(path)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
    validate = ajv.compile({ $ref: ref });
    restValidators.set(key, validate);
  }
  const ok = validate(body);
  const errors = (ok ? [] : (validate.errors ?? [])).filter(
    (e) =>
      !KNOWN_SPEC_DEFECTS.some(
        (d) => d.operation === operation.operationId && d.instancePath.test(e.instancePath),
      ),
  );
  return {
    operation: operation.operationId,
    errors: errors.slice(0, 10).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`),
  };
}

/** Records every response an Octokit client receives and validates it against the OpenAPI description. */
export function recordContract(
  octokit: Octokit,
  checked: CheckedResponse[],
  failures: ContractFailure[],
): void {
  octokit.hook.after("request", (response, options) => {
    // GraphQL is not part of the REST description; graphql.test-style assertions cover it.
    if (options.url === "/graphql") return;
    const result = validateRestResponse(options.method, options.url, response.status, response.data) ?? {
      operation: `${options.method} ${options.url} (documented without a body)`,
      errors: [],
    };
    checked.push({
      operation: result.operation,
      status: response.status,
      route: blankRoute(options.method, options.url),
    });
    if (result.errors.length)
      failures.push({ operation: result.operation, status: response.status, errors: result.errors });
  });
  octokit.hook.error("request", (error, options) => {
    const e = error as { status?: number; response?: { data?: unknown } };
    if (e.status && e.response && options.url !== "/graphql") {
      const result = validateRestResponse(options.method, options.url, e.status, e.response.data);
      if (result) {
        checked.push({
          operation: result.operation,
          status: e.status,
          route: blankRoute(options.method, options.url),
        });
        if (result.errors.length)
          failures.push({ operation: result.operation, status: e.status, errors: result.errors });
      }
    }
    throw error;
  });
}

let webhookAjv: Ajv | undefined;

/** Validates a webhook payload against `<event>$<action>` (or `<event>$event`) of @octokit/webhooks-schemas. */
export function validateWebhook(event: string, payload: Record<string, unknown>): string[] {
  if (!webhookAjv) {
    const schema = JSON.parse(
      readFileSync(require.resolve("@octokit/webhooks-schemas/schema.json"), "utf8"),
    ) as Record<string, unknown>;
    webhookAjv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    addFormats(webhookAjv);
    webhookAjv.addSchema({ ...schema, $id: "webhooks" });
  }
  const action = typeof payload.action === "string" ? payload.action : "event";
  const validate = webhookAjv.getSchema(`webhooks#/definitions/${event}$${action}`);
  if (!validate) return [`no schema for ${event}$${action}`];
  return validate(payload)
    ? []
    : (validate.errors ?? [])
        .slice(0, 10)
        .map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

export interface ReceivedWebhook {
  event: string;
  delivery: string;
  signatureValid: boolean;
  headers: Record<string, string | string[] | undefined>;
  payload: Record<string, unknown>;
}

/** A webhook receiver on 127.0.0.1 that checks signatures and keeps what it got. */
export async function startReceiver(
  secret: string,
  answer = 200,
): Promise<{ url: string; received: ReceivedWebhook[]; close(): Promise<void>; server: Server }> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
      const given = Buffer.from(String(req.headers["x-hub-signature-256"] ?? ""));
      received.push({
        event: String(req.headers["x-github-event"]),
        delivery: String(req.headers["x-github-delivery"]),
        signatureValid: given.length === expected.length && timingSafeEqual(given, expected),
        headers: req.headers,
        payload: JSON.parse(body.toString("utf8")) as Record<string, unknown>,
      });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
