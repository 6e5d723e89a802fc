/**
 * Keeps the architecture of STYLE.md true: a pure core, dependencies pointing inward, and only
 * entry points importing Probot.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SRC = join(ROOT, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

function importsOf(text: string): string[] {
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
    ),
  ].map((m) => (m[1] ?? m[2])!);
}

const files = sourceFiles(SRC).map((path) => ({
  path: relative(SRC, path),
  text: readFileSync(path, "utf8"),
}));

describe("architecture", () => {
  it("finds the source tree", () => {
    expect(files.some((file) => file.path.startsWith("core/"))).toBe(true);
  });

  it("keeps the core pure: no I/O modules, env, clock, randomness or logging", () => {
    const offences: string[] = [];
    for (const file of files.filter((f) => f.path.startsWith("core/"))) {
      for (const spec of importsOf(file.text)) {
        if (
          /^(node:)?(fs|fs\/promises|http|https|net|child_process|dgram|dns|tls|os|worker_threads)$/.test(
            spec,
          )
        )
          offences.push(`${file.path} imports ${spec}`);
        if (/(^|\/)(adapters|app|handlers|reconciler|sandbox|cli)\//.test(spec))
          offences.push(`${file.path} imports outward: ${spec}`);
        if (/^(probot|pino|prom-client|@kubernetes\/client-node|@octokit\/)/.test(spec))
          offences.push(`${file.path} imports ${spec}`);
      }
      const code = file.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      if (/process\.env/.test(code)) offences.push(`${file.path} reads process.env`);
      if (/Date\.now\(\)|new Date\(\)/.test(code))
        offences.push(`${file.path} reads the clock (pass now in)`);
      if (/Math\.random\(\)/.test(code)) offences.push(`${file.path} uses Math.random`);
      if (/console\.(log|info|warn|error|debug)/.test(code))
        offences.push(`${file.path} logs (return diagnostics instead)`);
    }
    expect(offences).toEqual([]);
  });

  it("keeps the Probot app wiring out of the use cases, the core and the handlers", () => {
    const offences = files
      .filter((f) => /^(core|app|handlers|adapters)\//.test(f.path))
      .flatMap((file) =>
        importsOf(file.text)
          .filter((spec) => /(^|\/)probot-app\//.test(spec))
          .map((spec) => `${file.path} imports ${spec}`),
      );
    expect(offences).toEqual([]);
  });

  it("points dependencies inward: app use cases import neither adapters, handlers nor entry points", () => {
    const offences = files
      .filter((f) => f.path.startsWith("app/"))
      .flatMap((file) =>
        importsOf(file.text)
          .filter((spec) => /(^|\/)(adapters|handlers|reconciler|sandbox|cli)\/|\/(main|cli)\.js$/.test(spec))
          .map((spec) => `${file.path} imports ${spec}`),
      );
    expect(offences).toEqual([]);
  });

  it("lets only entry points, the Probot app wiring and the sandbox import probot", () => {
    const allowed = (path: string) =>
      ["main.ts", "cli/serve.ts"].includes(path) ||
      path.startsWith("probot-app/") ||
      path.startsWith("sandbox/");
    const offences = files
      .filter((file) => !allowed(file.path))
      .flatMap((file) =>
        importsOf(file.text)
          .filter((spec) => spec === "probot" || spec.startsWith("probot/"))
          .map(() => file.path),
      );
    expect(offences).toEqual([]);
  });

  it("reads process.env only in entry points", () => {
    const entry = (path: string) =>
      ["main.ts", "cli.ts"].includes(path) || path.startsWith("cli/") || path.startsWith("sandbox/");
    const offences = files
      .filter(
        (file) =>
          !entry(file.path) && /process\.env/.test(file.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")),
      )
      .map((file) => file.path);
    expect(offences).toEqual([]);
  });
});
