import { parseArgs } from "node:util";
import type { CliIo } from "./io.js";

/** `ferry serve`: the GitHub App server, configured from the environment (see src/server/ferry-server.ts). */
export async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string" }, host: { type: "string" }, kubeconfig: { type: "string" } },
    allowPositionals: false,
  });
  const { startFerryServer } = await import("../server/ferry-server.js");
  const { serverOptionsFromEnv } = await import("../server/server-options.js");
  const { memberIdentity, needsLeases, singleMembership } =
    await import("../adapters/kubernetes/membership.js");
  const options = serverOptionsFromEnv(io.env);
  // In a pod or with --kubeconfig: one Lease per replica, and the periodic scan is shared. Only
  // then is the Kubernetes client loaded.
  const line = (fields: object, message: string): void =>
    io.stderr(`${JSON.stringify({ msg: message, ...fields })}\n`);
  const setting = {
    env: io.env,
    ...(values.kubeconfig !== undefined ? { kubeconfigFile: values.kubeconfig } : {}),
  };
  options.membership = needsLeases(setting)
    ? (await import("../adapters/kubernetes/lease-membership.js")).membershipFromEnv({
        ...setting,
        log: { info: line, warn: line },
      })
    : singleMembership(memberIdentity(io.env));
  if (values.port !== undefined) options.port = Number(values.port);
  if (values.host !== undefined) options.host = values.host;
  const server = await startFerryServer(options);
  io.stdout(`ferry serving on ${server.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      void server.close().then(resolve);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  return 0;
}
