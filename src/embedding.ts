/**
 * What the sandbox package (packages/sandbox) may use of Ferry, and nothing more: the two
 * processes it starts (the GitHub App server and the reconciler), the CLI's io and exit codes for
 * `ferry sandbox`, and the pure readers it needs to check Ferry's effects as a person would (pull
 * request bodies, the dashboard, image references). The sandbox imports Ferry only through this
 * file and the product never imports it (test/architecture/layers.test.ts; docs/architecture.md
 * "Layers").
 */
export { startFerryServer, type FerryServer } from "./server/ferry-server.js";
export { startReconciler, type RunningReconciler } from "./reconciler/start.js";
export { findExecutable, findRenderer, MISSING_RENDERER_HELP } from "./adapters/render/render-tools.js";
export { EXIT, type CliIo } from "./cli/io.js";
export { parseBody } from "./core/pr/body.js";
export { DASHBOARD_TITLE, parseState } from "./core/pr/dashboard.js";
export type { PlanBlock } from "./core/pr/plan-block.js";
export type { Hold } from "./core/state/ferry-state.js";
export { parseImageRef, shortDigest, TAG_PATTERN } from "./core/image-ref.js";
export { shortSha } from "./core/commit-sha.js";
export { describeDrift } from "./core/deployment-status.js";
