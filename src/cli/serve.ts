import { parseArgs } from "node:util";
import type { CliIo } from "./io.js";

/** `ferry serve`: the GitHub App server, configured from the environment (see src/server/ferry-server.ts). */
export async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string" }, host: { type: "string" } },
    allowPositionals: false,
  });
  const { startFerryServer } = await import("../server/ferry-server.js");
  const { serverOptionsFromEnv } = await import("../server/server-options.js");
  const options = serverOptionsFromEnv(io.env);
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
