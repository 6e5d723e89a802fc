/**
 * Keeps the layering of docs/architecture.md "Layers" true: a pure core, dependencies pointing inward, only
 * entry points importing Probot, and the sandbox package (packages/sandbox) outside the product, using Ferry
 * only through src/embedding.ts.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SRC = join(ROOT, "src");
const SANDBOX = join(ROOT, "packages", "sandbox");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

function importsOf(text: string): string[] {
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s+["']([^"']+)["']/g,
    ),
  ].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

const files = sourceFiles(SRC).map((path) => ({
  path: relative(SRC, path),
  text: readFileSync(path, "utf8"),
}));

/** The sandbox package's modules, with paths relative to the repository root. */
const sandboxFiles = sourceFiles(join(SANDBOX, "src")).map((path) => ({
  path: relative(ROOT, path),
  text: readFileSync(path, "utf8"),
}));

const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");

describe("architecture", () => {
  it("finds the source tree", () => {
    expect(files.some((file) => file.path.startsWith("core/"))).toBe(true);
  });

  it("keeps the core pure: no I/O modules, env, clock, randomness or logging", () => {
    const offences: string[] = [];
    for (const file of files.filter((f) => f.path.startsWith("core/"))) {
      for (const spec of importsOf(file.text)) {
        if (
          /^(node:)?(fs|fs\/promises|http|https|net|child_process|dgram|dns|tls|os|worker_threads|v8)$/.test(
            spec,
          )
        )
          offences.push(`${file.path} imports ${spec}`);
        if (/(^|\/)(adapters|app|handlers|reconciler|sandbox|cli|server)\//.test(spec))
          offences.push(`${file.path} imports outward: ${spec}`);
        if (/^(probot|pino|prom-client|@kubernetes\/client-node|@octokit\/)/.test(spec))
          offences.push(`${file.path} imports ${spec}`);
      }
      const code = file.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      if (/process\.env/.test(code)) offences.push(`${file.path} reads process.env`);
      if (/Date\.now\(\)|new Date\(\)/.test(code))
        offences.push(`${file.path} reads the clock (pass now in)`);
      if (/Math\.random\(\)/.test(code)) offences.push(`${file.path} uses Math.random`);
      // A process-wide V8 flag changes every other module's behaviour (the old regex fallback).
      if (/setFlagsFromString/.test(code)) offences.push(`${file.path} sets process-wide V8 flags`);
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
          .filter((spec) => /(^|\/)(adapters|handlers|reconciler|sandbox|cli|server)\/|\/cli\.js$/.test(spec))
          .map((spec) => `${file.path} imports ${spec}`),
      );
    expect(offences).toEqual([]);
  });

  it("keeps the HTTP server outside the event handlers: handlers import neither the server nor the CLI", () => {
    const offences = files
      .filter((f) => f.path.startsWith("handlers/"))
      .flatMap((file) =>
        importsOf(file.text)
          .filter((spec) => /(^|\/)(server|cli|sandbox)\/|\/cli\.js$/.test(spec))
          .map((spec) => `${file.path} imports ${spec}`),
      );
    expect(offences).toEqual([]);
  });

  it("takes every inbound hint the same way, route → event → use case: the routes hand a payload only to the event handlers", () => {
    // server/ferry-server.ts is the server's wiring (it binds each route's output to the app);
    // every other file of server/ is a route or its plumbing and reaches no use case and no wiring.
    const offences = files
      .filter((f) => f.path.startsWith("server/") && f.path !== "server/ferry-server.ts")
      .flatMap((file) =>
        importsOf(file.text)
          .filter((spec) => /(^|\/)(app|probot-app)\//.test(spec))
          .map((spec) => `${file.path} imports ${spec}`),
      );
    expect(offences).toEqual([]);
  });

  it("keeps the event handlers thin: they import only app/, core/ and handlers/, and the Octokit's type, and never call Octokit", () => {
    const offences: string[] = [];
    for (const file of files.filter((f) => f.path.startsWith("handlers/"))) {
      for (const match of file.text.matchAll(
        /(?:^|\n)\s*(import|export)(\s+type)?\s[^;]*?from\s+["']([^"']+)["']/g,
      )) {
        const [, , typeOnly, spec] = match;
        const target = relative(SRC, resolve(SRC, dirname(file.path), spec!));
        if (!spec!.startsWith(".")) offences.push(`${file.path} imports ${spec}`);
        else if (/^(app|core|handlers)\//.test(target)) continue;
        // The handlers pass the event's Octokit on to the wiring's depsFor, as a type only.
        else if (typeOnly && target === "adapters/github/github-repo.js") continue;
        else offences.push(`${file.path} imports ${spec}`);
      }
      // GitHub is reached through the ports (app/github-port.ts), never from a handler.
      if (
        /\boctokit\??\.(rest|paginate|graphql|request)\b|\.rest\.\w+\.\w+\(/.test(withoutComments(file.text))
      )
        offences.push(`${file.path} calls Octokit`);
    }
    expect(offences).toEqual([]);
  });

  it("holds no use case in the event handlers: each GitHub handler module exports its on<Event> functions only", () => {
    // services.ts is what the wiring hands the handlers; the flood guard is the handlers' own state.
    const support = ["handlers/github/services.ts", "handlers/github/command-flood-guard.ts"];
    const offences = files
      .filter((f) => f.path.startsWith("handlers/github/") && !support.includes(f.path))
      .flatMap((file) =>
        [...file.text.matchAll(/^export\s+(?:async\s+)?function\s+(\w+)/gm)]
          .map((m) => m[1]!)
          .filter((name) => !/^on[A-Z]/.test(name))
          .map((name) => `${file.path} exports ${name}`),
      );
    expect(offences).toEqual([]);
  });

  it("lets only entry points and the Probot app wiring import probot", () => {
    const allowed = (path: string) =>
      ["server/ferry-server.ts", "server/ferry-octokit.ts", "cli/serve.ts"].includes(path) ||
      path.startsWith("probot-app/");
    const offences = files
      .filter((file) => !allowed(file.path))
      .flatMap((file) =>
        importsOf(file.text)
          .filter((spec) => spec === "probot" || spec.startsWith("probot/"))
          .map(() => file.path),
      );
    expect(offences).toEqual([]);
  });

  it("places every top-level folder of src/ in a known layer", () => {
    const layers = ["adapters", "app", "cli", "core", "handlers", "probot-app", "reconciler", "server"];
    const folders = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
    // A new folder needs its place in docs/architecture.md "Layers" and its rules in this file.
    expect(folders.filter((name) => !layers.includes(name))).toEqual([]);
  });

  it("keeps the sandbox out of the product: only the sandbox command names its package, and never imports it", () => {
    const offences = files.flatMap((file) => [
      ...importsOf(file.text)
        .filter((spec) => /(^|\/)(packages|sandbox)\/|^@ferry\/sandbox(\/|$)|(^|\/)embedding\.js$/.test(spec))
        .map((spec) => `${file.path} imports ${spec}`),
      ...(file.path !== "cli/sandbox.ts" && /@ferry\/sandbox/.test(withoutComments(file.text))
        ? [`${file.path} names @ferry/sandbox`]
        : []),
    ]);
    expect(offences).toEqual([]);
    // The command loads the package by name, at run time, so that dist/ builds from src/ alone.
    const command = files.find((file) => file.path === "cli/sandbox.ts");
    expect(command?.text).toMatch(/"@ferry\/sandbox\/command"/);
    expect(command?.text).toMatch(/await import\(SANDBOX_COMMAND\)/);
  });

  it("finds the sandbox package", () => {
    expect(sandboxFiles.some((file) => file.path.startsWith("packages/sandbox/src/github/"))).toBe(true);
  });

  it("lets the sandbox import Ferry only through src/embedding.ts", () => {
    const entry = join(SRC, "embedding.js");
    const offences = sandboxFiles.flatMap((file) =>
      importsOf(file.text)
        .filter((spec) => {
          if (/^ferry(\/|$)/.test(spec)) return true;
          if (!spec.startsWith(".")) return false;
          const target = resolve(ROOT, dirname(file.path), spec);
          return !target.startsWith(SANDBOX + "/") && target !== entry;
        })
        .map((spec) => `${file.path} imports ${spec}`),
    );
    expect(offences).toEqual([]);
  });

  it("declares every package the sandbox imports in its own package.json", () => {
    const manifest = JSON.parse(readFileSync(join(SANDBOX, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const declared = Object.keys(manifest.dependencies ?? {});
    const offences = sandboxFiles.flatMap((file) =>
      importsOf(file.text)
        .filter((spec) => !spec.startsWith(".") && !spec.startsWith("node:"))
        .map((spec) =>
          (spec.startsWith("@") ? spec.split("/").slice(0, 2) : spec.split("/").slice(0, 1)).join("/"),
        )
        .filter((name) => !declared.includes(name))
        .map((name) => `${file.path} imports ${name}`),
    );
    expect(offences).toEqual([]);
  });

  it("matches patterns on one engine: only src/core/patterns imports re2js, nothing imports minimatch, and RegExp( is built only from the constants of a known few files", () => {
    // A RegExp built at run time must never come from a config, a request or a registry: each of
    // these builds one from its own module's constants (docs/security.md "Patterns").
    const constantRegExps = [
      "core/image-ref.ts",
      "core/config/names.ts",
      "core/pr/title.ts",
      "core/pr/commands.ts",
    ];
    const offences: string[] = [];
    for (const file of files) {
      for (const spec of importsOf(file.text)) {
        if (spec === "minimatch" || spec === "picomatch" || spec === "micromatch")
          offences.push(`${file.path} imports ${spec}`);
        if (spec === "re2js" && !file.path.startsWith("core/patterns/"))
          offences.push(`${file.path} imports re2js (use src/core/patterns)`);
      }
      const code = file.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      if (/\bRegExp\s*\(/.test(code) && !constantRegExps.includes(file.path))
        offences.push(`${file.path} builds a RegExp at run time (use src/core/patterns)`);
    }
    expect(offences).toEqual([]);
  });

  it("parses YAML through core/yaml/unique-keys.ts, whose duplicate-key check is linear (the library's own is quadratic)", () => {
    // plaintext-secrets.ts parses with uniqueKeys off on purpose (it reads broken files too).
    const allowed = ["core/yaml/unique-keys.ts", "core/check/plaintext-secrets.ts"];
    const offences: string[] = [];
    for (const file of files) {
      if (allowed.includes(file.path)) continue;
      for (const match of withoutComments(file.text).matchAll(
        /import\s*\{([^}]*)\}\s*from\s*["']yaml["']/g,
      )) {
        const names = match[1]!.split(",").map((name) => name.trim().split(/\s+as\s+/)[0]!);
        for (const name of names)
          if (["parse", "parseDocument", "parseAllDocuments"].includes(name))
            offences.push(`${file.path} imports ${name} from yaml (use core/yaml/unique-keys.ts)`);
      }
    }
    expect(offences).toEqual([]);
  });

  it("never imports the test tree from src/", () => {
    const offences = files.flatMap((file) =>
      importsOf(file.text)
        .filter(
          (spec) => /(^|\/)test\//.test(spec) || /^vitest(\/|$)/.test(spec) || /^fast-check$/.test(spec),
        )
        .map((spec) => `${file.path} imports ${spec}`),
    );
    expect(offences).toEqual([]);
  });

  it("takes node:http, node:https, node:http2 and node:tls as values only through adapters/http/node-http.ts", () => {
    // Their ESM face reads every export, and node:http's WebSocket getters load Node's bundled
    // undici (about 14 MB of resident memory): a type import, or the helper, never does.
    const offences: string[] = [];
    for (const file of files) {
      if (file.path === "adapters/http/node-http.ts") continue;
      for (const match of withoutComments(file.text).matchAll(
        /(?:^|\n)\s*(import|export)(\s+type)?\s[^;]*?from\s+["'](node:)?(https?|http2|tls)["']|import\(\s*["'](node:)?(https?|http2|tls)["']\s*\)/g,
      )) {
        if (match[2] === undefined) offences.push(`${file.path} imports node:${match[4] ?? match[6]}`);
      }
    }
    expect(offences).toEqual([]);
  });

  it("reads process.env only in entry points", () => {
    const entry = (path: string) => path === "cli.ts" || path.startsWith("cli/");
    const offences = files
      .filter(
        (file) =>
          !entry(file.path) && /process\.env/.test(file.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")),
      )
      .map((file) => file.path);
    expect(offences).toEqual([]);
  });
});
