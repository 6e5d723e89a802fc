/**
 * How the bench starts `ferry serve`: with the node flags the image ships (read from the
 * Dockerfile) and from dist/ when it is current. Kept apart from serve-process.ts, which starts
 * the worlds, so the package test can check it without loading them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * The flags the image gives `node` before `dist/cli.js` (the Dockerfile's ENTRYPOINT, one place):
 * the bench runs Ferry with the V8 settings it ships with.
 */
export function imageNodeFlags(dockerfile = readFileSync(path.join(ROOT, "Dockerfile"), "utf8")): string[] {
  const line = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1];
  if (line === undefined) throw new Error("Dockerfile: no ENTRYPOINT in JSON form");
  const words = JSON.parse(line) as string[];
  const node = words.indexOf("node");
  const cli = words.indexOf("/app/dist/cli.js");
  if (node < 0 || cli < node)
    throw new Error(`Dockerfile: ENTRYPOINT ${line} does not run node /app/dist/cli.js`);
  return words.slice(node + 1, cli);
}

/**
 * How to run `ferry serve`: as the image does (`node <the image's flags> dist/cli.js`) when dist/
 * is newer than every file of src/ (`.ci/run` builds it before the bench), else from the sources
 * through tsx, whose loader adds its own memory (`fromDist` says which).
 */
export function serveCommand(): { args: string[]; fromDist: boolean } {
  const dist = path.join(ROOT, "dist", "cli.js");
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((entry) =>
        entry.isDirectory()
          ? newest(path.join(dir, entry.name))
          : statSync(path.join(dir, entry.name)).mtimeMs,
      ),
    );
  const flags = imageNodeFlags();
  if (existsSync(dist) && statSync(dist).mtimeMs >= newest(path.join(ROOT, "src")))
    return { args: [...flags, dist], fromDist: true };
  return { args: [...flags, "--import", "tsx", "src/cli.ts"], fromDist: false };
}
