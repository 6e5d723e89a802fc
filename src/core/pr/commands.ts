import { isValidTag } from "../image-ref.js";

/**
 * The comment command grammar (DESIGN.md "GitHub conventions"): a command is the first word of a
 * line and the whole line must match exactly; anything else on the line makes it not a command.
 *   /promote <env> [image@tag]   /rollback <env> [image@tag]   /hold <env>   /unhold <env>
 *   /unfloor <env> [image]       /ferry status
 */
export type Command =
  | { name: "promote" | "rollback"; environment: string; image?: { name: string; tag: string } }
  | { name: "hold" | "unhold"; environment: string }
  /** Lowers the floor of one image (or of every image) of an environment: only a command does. */
  | { name: "unfloor"; environment: string; imageName?: string }
  | { name: "status" };

const NAME = "[a-z0-9][a-z0-9_-]{0,62}";
const TAG = "[A-Za-z0-9_][A-Za-z0-9._-]{0,127}";
const WITH_IMAGE = new RegExp(`^/(promote|rollback)[ \\t]+(${NAME})(?:[ \\t]+(${NAME})@(${TAG}))?[ \\t]*$`);
const ENVIRONMENT_ONLY = new RegExp(`^/(hold|unhold)[ \\t]+(${NAME})[ \\t]*$`);
const UNFLOOR = new RegExp(`^/unfloor[ \\t]+(${NAME})(?:[ \\t]+(${NAME}))?[ \\t]*$`);
const STATUS = /^\/ferry[ \t]+status[ \t]*$/;
/** Bound the work on huge comments: commands are in the first lines. */
const MAX_LINES = 50;

/** Every command in a comment, in order; lines inside fenced code blocks and quotes are ignored. */
export function parseCommands(body: string): Command[] {
  const commands: Command[] = [];
  let fenced = false;
  for (const rawLine of body.split(/\r?\n/).slice(0, MAX_LINES * 4)) {
    const line = rawLine.trim();
    if (line.startsWith("```") || line.startsWith("~~~")) {
      fenced = !fenced;
      continue;
    }
    if (fenced || !line.startsWith("/")) continue;
    const command = parseCommandLine(line);
    if (command) commands.push(command);
    if (commands.length >= MAX_LINES) break;
  }
  return commands;
}

export function parseCommandLine(line: string): Command | undefined {
  const withImage = WITH_IMAGE.exec(line);
  if (withImage) {
    const [, name, environment, image, tag] = withImage;
    if (tag !== undefined && !isValidTag(tag)) return undefined;
    return image !== undefined && tag !== undefined
      ? { name: name as "promote" | "rollback", environment: environment!, image: { name: image, tag } }
      : { name: name as "promote" | "rollback", environment: environment! };
  }
  const environmentOnly = ENVIRONMENT_ONLY.exec(line);
  if (environmentOnly)
    return { name: environmentOnly[1] as "hold" | "unhold", environment: environmentOnly[2]! };
  const unfloor = UNFLOOR.exec(line);
  if (unfloor)
    return unfloor[2] !== undefined
      ? { name: "unfloor", environment: unfloor[1]!, imageName: unfloor[2] }
      : { name: "unfloor", environment: unfloor[1]! };
  if (STATUS.test(line)) return { name: "status" };
  return undefined;
}

export function formatCommand(command: Command): string {
  switch (command.name) {
    case "status":
      return "/ferry status";
    case "hold":
    case "unhold":
      return `/${command.name} ${command.environment}`;
    case "unfloor":
      return `/unfloor ${command.environment}${command.imageName !== undefined ? ` ${command.imageName}` : ""}`;
    default:
      return `/${command.name} ${command.environment}${command.image ? ` ${command.image.name}@${command.image.tag}` : ""}`;
  }
}
