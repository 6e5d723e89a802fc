/**
 * Reading a live object's loosely typed fields for the health rules (`health.ts`): a missing or
 * mistyped field reads as empty, never throws, since status is whatever a controller wrote.
 */
import type { HealthReport, HealthStatus } from "./types.js";

export type Json = Record<string, unknown>;

export function record(value: unknown): Json {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};
}

export function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.map(record) : [];
}

export function int(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** `spec.replicas` is a pointer in Go: absent means "no expectation", not zero. */
export function optionalInt(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export function report(status: HealthStatus, message = ""): HealthReport {
  return { status, message };
}

export function conditions(status: Json): Json[] {
  return list(status.conditions);
}

/** The condition of `type` in `status.conditions`, if any. */
export function condition(status: Json, type: string): Json | undefined {
  return conditions(status).find((entry) => entry.type === type);
}
