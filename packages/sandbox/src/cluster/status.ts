/**
 * Errors in the shape the real API server sends them: a `Status` object whose `reason` and
 * `code` clients switch on (client-node surfaces `body.reason`, kubectl prints `message`).
 */
export interface StatusCause {
  type?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Success" | "Failure";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A failed API call; `toStatus()` is what goes on the wire. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = "ApiError";
  }

  toStatus(): KubeStatus {
    const status: KubeStatus = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** `<plural>.<group>` as the real server names a resource in messages (`deployments.apps`). */
function qualifiedResource(plural: string, group: string): string {
  return group ? `${plural}.${group}` : plural;
}

export function notFound(plural: string, group: string, name: string): ApiError {
  return new ApiError(404, "NotFound", `${qualifiedResource(plural, group)} "${name}" not found`, {
    name,
    group,
    kind: plural,
  });
}

export function alreadyExists(plural: string, group: string, name: string): ApiError {
  return new ApiError(409, "AlreadyExists", `${qualifiedResource(plural, group)} "${name}" already exists`, {
    name,
    group,
    kind: plural,
  });
}

export function resourceVersionConflict(plural: string, group: string, name: string): ApiError {
  return new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedResource(plural, group)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group, kind: plural },
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, "BadRequest", message);
}

export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const summary = causes.map((cause) => `${cause.field ?? ""}: ${cause.message}`).join(", ");
  return new ApiError(422, "Invalid", `${kind}${group ? "." + group : ""} "${name}" is invalid: ${summary}`, {
    name,
    group,
    kind,
    causes: causes.map((cause) => ({ type: cause.type ?? "FieldValueInvalid", ...cause })),
  });
}

export function methodNotAllowed(): ApiError {
  return new ApiError(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
  );
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (got ${contentType})`,
  );
}

export function successStatus(details: StatusDetails): KubeStatus {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details, code: 200 };
}
