import type { Registry } from "prom-client";
import { sendText, type Route } from "./route.js";

/** `GET /healthz` (liveness) and `GET /metrics` (Prometheus). */
export function createHealthRoutes(metrics: Registry): Route {
  return async (req, res, path) => {
    if (req.method !== "GET") return false;
    if (path === "/healthz") {
      sendText(res, 200, "text/plain", "ok\n");
      return true;
    }
    if (path === "/metrics") {
      sendText(res, 200, metrics.contentType, await metrics.metrics());
      return true;
    }
    return false;
  };
}
