import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { gitHistorySource } from "../adapters/git/git-history-source.js";
import { environmentHistory } from "../app/environment-history.js";
import { DEFAULT_CONFIG_CONTEXT } from "../core/config/config-context.js";
import { CONFIG_PATH, formatProblems } from "../core/config/load-config.js";
import { SECRETS_NEVER_SENT } from "../core/config/secret-bindings.js";
import { UserError } from "../core/errors.js";
import {
  formatHistory,
  MAX_HISTORY_COMMITS,
  parseHistoryDate,
  type HistoryQuery,
} from "../core/history/history.js";
import { EXIT, UsageError, type CliIo } from "./io.js";
import { loadLocalConfig } from "./load-local-config.js";

const USAGE =
  "usage: ferry history [--dir DIR] <env> [image] [--since DATE | --at DATE] [--max-commits N] [--json]";

const HELP =
  "Answers from the checkout's git history alone (merge times): it has no GitHub access, so when a\n" +
  "reconciler reported a commit applied is not known here; `/ferry history` on the config repo adds that.\n";

/**
 * `ferry history`: which tag and digest ran in an environment over time, or at a moment, read from
 * the config checkout's own git history (promotions, reverts and hand edits of its files). It has
 * no GitHub access: the times are merge times, not when a reconciler reported the commit applied
 * (that is `/ferry history`, which reads the Deployment statuses).
 */
export async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      dir: { type: "string" },
      since: { type: "string" },
      at: { type: "string" },
      "max-commits": { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    io.stdout(`${USAGE}\n${HELP}`);
    return EXIT.ok;
  }
  const [environment, image, ...rest] = positionals;
  if (environment === undefined || rest.length > 0) throw new UsageError(USAGE);
  if (values.since !== undefined && values.at !== undefined)
    throw new UsageError(`--since and --at exclude each other\n${USAGE}`);
  const query: HistoryQuery = {};
  for (const key of ["since", "at"] as const) {
    const text = values[key];
    if (text === undefined) continue;
    const date = parseHistoryDate(text);
    if (date === undefined)
      throw new UsageError(`--${key} needs an ISO date such as 2026-03-10 or 2026-03-10T14:00Z\n${USAGE}`);
    query[key] = date;
  }
  if (image !== undefined) query.image = image;
  let maxCommits: number | undefined;
  if (values["max-commits"] !== undefined) {
    maxCommits = Number(values["max-commits"]);
    if (!Number.isInteger(maxCommits) || maxCommits < 1 || maxCommits > MAX_HISTORY_COMMITS)
      throw new UsageError(`--max-commits must be a whole number from 1 to ${MAX_HISTORY_COMMITS}\n${USAGE}`);
  }
  const root = resolve(io.cwd, values.dir ?? ".");
  // History reads Git only and sends no secret: the bindings of the config's secrets do not apply.
  const loaded = await loadLocalConfig(root, io.env, {
    ...DEFAULT_CONFIG_CONTEXT,
    secretBindings: SECRETS_NEVER_SENT,
  });
  if (loaded === undefined)
    throw new UserError("config-missing", `no ${CONFIG_PATH} in ${values.dir ?? "."}`);
  if (!loaded.ok)
    throw new UserError(
      "invalid-config",
      `invalid ${CONFIG_PATH}:\n${formatProblems(CONFIG_PATH, loaded.problems)}`,
    );
  if (image !== undefined && !(image in loaded.config.images))
    throw new UserError("unknown-image", `unknown image ${JSON.stringify(image)}`);
  const history = await environmentHistory(gitHistorySource(root), loaded.config, environment, {
    ...(maxCommits !== undefined ? { maxCommits } : {}),
  });
  if (values.json) io.stdout(`${JSON.stringify(history, null, 2)}\n`);
  else io.stdout(`${formatHistory(history, query, { markdown: false })}\n`);
  return EXIT.ok;
}
