/**
 * docs/reliability.md "Inputs written into Git" (rows 14, 15), the command grammar of row 12, and
 * goal G8: for generated hostile values (newlines, YAML document markers, template syntax,
 * quotes, over-long tags, Unicode look-alikes, path traversal), either the value is valid and
 * exactly one YAML scalar changes, or nothing is written. Pure core, so thousands of cases run fast.
 */
import fc from "fast-check";
import { posix } from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { configPathProblem } from "../../src/core/config/schema.js";
import { UserError } from "../../src/core/errors.js";
import { isValidDigest, isValidTag } from "../../src/core/image-ref.js";
import { formatBody, parseBody } from "../../src/core/pr/body.js";
import { formatCommand, parseCommands } from "../../src/core/pr/commands.js";
import { escapeMarkdown } from "../../src/core/pr/markdown.js";
import { updateImage } from "../../src/core/yaml-edit/update-image.js";
import { finishFile, ledgerFile, record } from "../support/reliability-ledger.js";

ledgerFile("injection");
afterAll(() => finishFile("injection"));

const SEED = 8_14_15;

/** Hostile fragments from the catalogue (row 14) and their Unicode look-alikes. */
const HOSTILE = [
  "\n---\nkind: ClusterRoleBinding\n",
  "\n...\n",
  '"',
  "'",
  "{{ .Env.X }}",
  "${{ secrets.X }}",
  "${X}",
  "#",
  ": ",
  " &a",
  " *a",
  "!!binary",
  "\r\n",
  "\t",
  "\u2028",
  "\u0000",
  "\uFEFF",
  "１", // fullwidth digit one
  "\u0430", // Cyrillic a
  "\u2024", // one-dot leader, looks like "."
  "\u2010", // hyphen, looks like "-"
  "<script>",
  "[x](http://evil)",
  "|",
  "`",
];

/** Tags: valid ones, valid ones spoiled by a hostile fragment, edge lengths, and any Unicode. */
const tagArbitrary = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,40}$/),
  fc
    .tuple(
      fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,20}$/),
      fc.constantFrom(...HOSTILE),
      fc.stringMatching(/^[A-Za-z0-9._-]{0,10}$/),
    )
    .map(([a, bad, b]) => `${a}${bad}${b}`),
  fc.constantFrom(
    "a".repeat(128),
    "a".repeat(129),
    ".hidden",
    "-dash",
    "",
    "1.20",
    "yes",
    "null",
    "~",
    "0x1F",
    "1e3",
  ),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
);

const digestArbitrary = fc.oneof(
  fc.stringMatching(/^[0-9a-f]{64}$/).map((hex) => `sha256:${hex}`),
  fc
    .tuple(fc.stringMatching(/^[0-9a-f]{64}$/), fc.constantFrom(...HOSTILE))
    .map(([hex, bad]) => `sha256:${hex}${bad}`),
  fc.stringMatching(/^[0-9a-f]{63}$/).map((hex) => `sha256:${hex}`),
  fc.string({ maxLength: 80 }),
);

/** One file of each kind Ferry edits, each referencing ghcr.io/acme/shop once. */
const FILES: Record<string, string> = {
  kustomization:
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n  - name: ghcr.io/acme/shop # the app\n    newTag: 1.7.0\n  - name: ghcr.io/acme/other\n    newTag: 2.0.0\n",
  helm: 'replicas: 2\nimage:\n  repository: ghcr.io/acme/shop\n  tag: "1.7.0"\nsidecar:\n  image:\n    repository: ghcr.io/acme/other\n    tag: 2.0.0\n',
  manifest:
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: shop\nspec:\n  template:\n    spec:\n      containers:\n        - name: shop\n          image: ghcr.io/acme/shop:1.7.0\n        - name: other\n          image: ghcr.io/acme/other:2.0.0\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: shop\n",
  marker: "shop:\n  version: 1.7.0 # ferry: shop:tag\nother: 2.0.0\n",
};

/** Every scalar of every document as `doc/path = value`, to see exactly what changed. */
function scalars(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return out;
  docs.forEach((doc, index) => {
    const walk = (value: unknown, path: string): void => {
      if (value !== null && typeof value === "object") {
        for (const [key, inner] of Object.entries(value as Record<string, unknown>))
          walk(inner, `${path}/${key}`);
      } else out.set(`${index}${path}`, JSON.stringify(value));
    };
    walk(doc.toJS(), "");
  });
  out.set("#documents", String(docs.length));
  return out;
}

function changedKeys(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((key) => before.get(key) !== after.get(key));
}

describe("rows 14 and G8: hostile tags and digests written into YAML", () => {
  for (const [kind, text] of Object.entries(FILES)) {
    it(`row 14: a hostile tag in a ${kind} file either changes exactly the one tag scalar to a valid tag, or nothing is written`, () => {
      const before = scalars(text);
      let tried = 0;
      let refused = 0;
      let written = 0;
      let sideEffects = 0;
      fc.assert(
        fc.property(tagArbitrary, (tag) => {
          tried++;
          let result: { text: string } | undefined;
          try {
            result = updateImage(
              text,
              { image: "ghcr.io/acme/shop", tag, pin: "tag" },
              { markerName: "shop" },
            );
          } catch (error) {
            // Refusal must be a typed, user-facing error, never a crash of another kind.
            expect(error).toBeInstanceOf(UserError);
            refused++;
            return;
          }
          if (result.text === text) return;
          written++;
          const changed = changedKeys(before, scalars(result.text));
          const ok =
            isValidTag(tag) &&
            changed.length === 1 &&
            JSON.parse(scalars(result.text).get(changed[0]!)!).toString().endsWith(tag);
          if (!ok) sideEffects++;
          expect(isValidTag(tag), `wrote invalid tag ${JSON.stringify(tag)}`).toBe(true);
          expect(changed, `for tag ${JSON.stringify(tag)}`).toHaveLength(1);
        }),
        { seed: SEED, numRuns: 1500 },
      );
      record("injection: tags into YAML", { tried, sideEffects });
      // Both outcomes were exercised: the property is not vacuous.
      expect(refused).toBeGreaterThan(100);
      expect(written).toBeGreaterThan(100);
    });
  }

  it("row 14: a hostile digest under pin: digest either writes a valid sha256 digest into exactly the pinned scalars or nothing", () => {
    const text = FILES.manifest!;
    const before = scalars(text);
    let tried = 0;
    let written = 0;
    fc.assert(
      fc.property(digestArbitrary, (digest) => {
        tried++;
        let result: { text: string };
        try {
          result = updateImage(text, { image: "ghcr.io/acme/shop", tag: "1.8.0", digest, pin: "digest" });
        } catch (error) {
          expect(error).toBeInstanceOf(UserError);
          return;
        }
        if (result.text === text) return;
        written++;
        expect(isValidDigest(digest), `wrote invalid digest ${JSON.stringify(digest)}`).toBe(true);
        // A manifest keeps tag and digest in one `image:` string: one scalar.
        expect(changedKeys(before, scalars(result.text))).toHaveLength(1);
        expect(result.text).toContain(`ghcr.io/acme/shop:1.8.0@${digest}`);
      }),
      { seed: SEED + 1, numRuns: 1000 },
    );
    record("injection: digests into YAML", { tried });
    expect(written).toBeGreaterThan(50);
  });

  it("row 14: a hostile image name never edits a reference to another image", () => {
    let tried = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constantFrom(
            "ghcr.io/acme/sh\u043ep",
            "ghcr.io/acme/shop\n",
            "ghcr.io/acme/*",
            "ghcr.io/acme/.*",
            "ghcr.io/acme/shop/../other",
            "ghcr.io/acme/other ",
          ),
          fc.string({ maxLength: 30 }),
        ),
        (image) => {
          tried++;
          for (const text of Object.values(FILES)) {
            let result: { text: string };
            try {
              result = updateImage(text, { image, tag: "9.9.9", pin: "tag" });
            } catch (error) {
              expect(error).toBeInstanceOf(UserError);
              continue;
            }
            expect(result.text, `image ${JSON.stringify(image)}`).toBe(text);
          }
        },
      ),
      { seed: SEED + 2, numRuns: 500 },
    );
    record("injection: image names", { tried });
  });
});

describe("row 14: hostile values in PR text are escaped", () => {
  it("row 14: escaped text never carries a raw newline, HTML tag, link, table pipe or code fence", () => {
    let tried = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "grapheme", maxLength: 60 }),
          fc.constantFrom(...HOSTILE).map((bad) => `x${bad}y`),
        ),
        (value) => {
          tried++;
          const escaped = escapeMarkdown(value);
          expect(escaped).not.toMatch(/[\r\n\u2028\u2029]/);
          expect(escaped).not.toMatch(/<[a-z!/]/i);
          expect(escaped).not.toMatch(/(^|[^\\])\]\(/);
          expect(escaped).not.toMatch(/(^|[^\\])\|/);
          expect(escaped).not.toMatch(/(^|[^\\])`/);
        },
      ),
      { seed: SEED + 3, numRuns: 2000 },
    );
    record("injection: PR text escaping", { tried });
  });

  it("row 14: a PR body built from hostile values parses back to the same plan and cannot end its hidden block early", () => {
    let tried = 0;
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 40 }),
        fc.constantFrom(...HOSTILE, "-->", "<!-- ferry:pr {} -->"),
        (requester, bad) => {
          tried++;
          const plan = {
            version: 1 as const,
            environment: "staging",
            kind: "promote" as const,
            requestedBy: "mona",
            changes: [
              {
                image: "shop",
                repository: "ghcr.io/acme/shop",
                from: { tag: "1.7.0" },
                to: { tag: "1.8.0", digest: `sha256:${"a".repeat(64)}` },
              },
            ],
          };
          const body = formatBody({
            plan,
            rows: { shop: { image: "shop", policy: `semver ${bad}` } },
            webUrl: "https://github.com",
            note: `asked by ${requester}${bad}`,
          });
          expect(parseBody(body)).toEqual(plan);
        },
      ),
      { seed: SEED + 4, numRuns: 1000 },
    );
    record("injection: PR body round trip", { tried });
  });
});

describe("row 12: the comment command grammar is exact", () => {
  it("row 12: every command parsed from a hostile comment is one exact, canonical line of that comment", () => {
    const line = fc.oneof(
      fc.constantFrom(
        "/promote prod",
        "/promote prod shop@1.8.0",
        "/rollback prod",
        "/hold prod",
        "/unhold prod",
        "/ferry status",
      ),
      fc
        .tuple(
          fc.constantFrom(
            "/promote",
            "/rollback",
            "/hold",
            "\u2215promote",
            "／promote",
            "/Promote",
            "/promote\u200b",
          ),
          fc.constantFrom(" ", "\t", "  "),
          fc.oneof(
            fc.constantFrom("prod", "pr\u043ed", "../prod", "prod;rm", "prod\u0000", "prod shop@1.8.0\n---"),
            fc.string({ maxLength: 12 }),
          ),
        )
        .map(([verb, space, env]) => `${verb}${space}${env}`),
      fc.constantFrom(
        "> /promote prod",
        "```\n/promote prod\n```",
        "text /promote prod",
        "/promote prod please",
      ),
      fc.string({ unit: "grapheme", maxLength: 40 }),
    );
    let tried = 0;
    let parsed = 0;
    fc.assert(
      fc.property(fc.array(line, { maxLength: 6 }), (lines) => {
        tried++;
        const body = lines.join("\n");
        const bodyLines = new Set(body.split(/\r?\n/).map((text) => text.trim().replace(/[ \t]+/g, " ")));
        for (const command of parseCommands(body)) {
          parsed++;
          if (command.name !== "status") expect(command.environment).toMatch(/^[a-z0-9][a-z0-9_-]{0,62}$/);
          if ("image" in command && command.image) expect(isValidTag(command.image.tag)).toBe(true);
          // The canonical form of the command is literally one of the comment's lines.
          expect(bodyLines.has(formatCommand(command))).toBe(true);
        }
      }),
      { seed: SEED + 5, numRuns: 3000 },
    );
    record("injection: comment commands", { tried });
    expect(parsed).toBeGreaterThan(100);
  });

  it("row 12: commands inside quotes, code fences or after other words are not commands", () => {
    for (const body of [
      "> /promote prod",
      "```\n/promote prod\n```",
      "please /promote prod",
      "/promote prod now",
      "\u2215promote prod",
      "／promote prod",
      "/promote pr\u043ed",
    ]) {
      expect(parseCommands(body), JSON.stringify(body)).toEqual([]);
    }
    record("injection: comment commands", { tried: 7 });
  });
});

describe("row 15: configured target paths stay inside the repository", () => {
  const segment = fc.oneof(
    fc.constantFrom(
      "..",
      ".",
      "",
      ".git",
      ".github",
      "%2e%2e",
      "%2E%2e",
      "..%2f",
      "..\\..",
      "\u2024\u2024",
      "overlays",
      "prod",
      "a\u0000b",
      "C:",
      "~",
    ),
    fc.stringMatching(/^[A-Za-z0-9._-]{1,8}$/),
  );
  const pathArbitrary = fc
    .tuple(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 6 }))
    .map(([absolute, parts]) => `${absolute ? "/" : ""}${parts.join("/")}`);

  it("row 15: every path the config accepts resolves inside the repository and outside .git/ and .github/", () => {
    let tried = 0;
    let accepted = 0;
    let refused = 0;
    let escapes = 0;
    fc.assert(
      fc.property(pathArbitrary, (path) => {
        tried++;
        const problem = configPathProblem(path);
        if (problem !== undefined) {
          refused++;
          return;
        }
        accepted++;
        const resolved = posix.normalize(path);
        const first = resolved.split("/")[0];
        const escaped =
          resolved === ".." ||
          resolved.startsWith("../") ||
          posix.isAbsolute(resolved) ||
          first === ".git" ||
          first === ".github" ||
          path.includes("\0") ||
          /%2e/i.test(path) ||
          path.includes("\\");
        if (escaped) escapes++;
        expect(escaped, `accepted ${JSON.stringify(path)}`).toBe(false);
      }),
      { seed: SEED + 6, numRuns: 5000 },
    );
    record("injection: config paths", { tried, sideEffects: escapes });
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it("row 15: the catalogue's named paths are refused", () => {
    const named = [
      "../../.github/workflows/x.yml",
      "/etc/passwd",
      "%2e%2e/secrets",
      "overlays/\u0000/x",
      ".github/workflows/deploy.yml",
      "overlays/../../x",
      ".git/config",
      "C:\\x",
    ];
    for (const path of named) expect(configPathProblem(path), path).toBeDefined();
    record("injection: config paths", { tried: named.length });
  });
});
