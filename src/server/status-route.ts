import { sendText, type Route } from "./route.js";

/** `GET /status`: environments × images of every configured repository, as JSON. */
export function createStatusRoute(status: () => Promise<Record<string, unknown>>): Route {
  return async (req, res, path) => {
    if (req.method !== "GET" || path !== "/status") return false;
    sendText(res, 200, "application/json", JSON.stringify(await status()));
    return true;
  };
}
