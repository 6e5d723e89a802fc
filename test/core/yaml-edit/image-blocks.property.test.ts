import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { UserError } from "../../../src/core/errors.js";
import { updateImage, type ImageUpdate } from "../../../src/core/yaml-edit/update-image.js";

/**
 * For image blocks in every layout Ferry reads (repository/tag with or without registry,
 * ingress-nginx's registry/image/tag/digest, Argo CD Image Updater's name/tag, a whole
 * `repo:tag@digest` string, a digest carried in the tag), with null, `~` and empty parts: after an
 * edit, the reference the chart renders is the one intended, and the other images' are unchanged.
 */

const DIGESTS = [`sha256:${"1".repeat(64)}`, `sha256:${"2".repeat(64)}`, `sha256:${"3".repeat(64)}`];

/** Joins the parts as common charts do: `{{registry}}/{{repository}}:{{tag}}@{{digest}}`, empty parts dropped. */
function renderChart(value: unknown): string {
  if (typeof value === "string") return value;
  const block = value as Record<string, unknown>;
  const part = (key: string): string =>
    block[key] === null || block[key] === undefined ? "" : String(block[key]);
  const chroot = block.chroot === true;
  const name =
    "image" in block
      ? part("repository") ||
        [part("registry"), `${part("image")}${chroot ? "-chroot" : ""}`].filter(Boolean).join("/")
      : [part("registry"), part("repository") || part("name")].filter(Boolean).join("/");
  const digest = chroot ? part("digestChroot") : part("digest");
  return `${name}${part("tag") ? `:${part("tag")}` : ""}${digest ? `@${digest}` : ""}`;
}

type Layout = "repository" | "ingress-nginx" | "name" | "string";
const NULLISH = ["absent", "null", "~", '""', "empty"] as const;

const blockShape = fc.record({
  layout: fc.constantFrom<Layout[]>("repository", "ingress-nginx", "name", "string"),
  name: fc.constantFrom("ghcr.io/acme/shop", "docker.io/acme/shop", "localhost:5000/acme/shop"),
  /** Whether the registry host is written in its own key. */
  splitRegistry: fc.boolean(),
  /** How an absent registry key is written. */
  noRegistry: fc.constantFrom(...NULLISH),
  tag: fc.option(fc.constantFrom("1.7.0", "v1.7.0", "1.20", "7"), { nil: undefined }),
  quote: fc.constantFrom("plain", "single", "double"),
  digest: fc.constantFrom("absent", "null", "~", '""', "empty", "pinned", "in-tag"),
  chroot: fc.boolean(),
  key: fc.constantFrom("image", "workerImage"),
});
type Shape = typeof blockShape extends fc.Arbitrary<infer T> ? T : never;

const quoteValue = (value: string, quote: string): string =>
  quote === "single"
    ? `'${value}'`
    : quote === "double"
      ? `"${value}"`
      : /^[0-9.]+$/.test(value)
        ? `"${value}"`
        : value;

function nullish(written: (typeof NULLISH)[number]): string | undefined {
  return written === "absent" ? undefined : written === "empty" ? "" : written;
}

/** The block's lines under `key:` at `indent`, and whether it keeps a digest key. */
function blockLines(shape: Shape, indent: string): string[] {
  const slash = shape.name.indexOf("/");
  const host = shape.name.slice(0, slash);
  const path = shape.name.slice(slash + 1);
  const tag = shape.tag;
  if (shape.layout === "string") {
    const digest = shape.digest === "pinned" || shape.digest === "in-tag" ? `@${DIGESTS[0]}` : "";
    return [
      `${indent}${shape.key}: ${quoteValue(`${shape.name}${tag ? `:${tag}` : ""}${digest}`, shape.quote)}`,
    ];
  }
  const lines = [`${indent}${shape.key}:`];
  const inner = `${indent}  `;
  const nameKey = shape.layout === "ingress-nginx" ? "image" : shape.layout;
  if (shape.layout === "ingress-nginx" && shape.chroot) lines.push(`${inner}chroot: true`);
  if (shape.splitRegistry || shape.layout === "ingress-nginx") {
    lines.push(`${inner}registry: ${host}`, `${inner}${nameKey}: ${path}`);
  } else {
    const none = nullish(shape.noRegistry);
    if (none !== undefined) lines.push(`${inner}registry:${none === "" ? "" : ` ${none}`}`);
    lines.push(`${inner}${nameKey}: ${shape.name}`);
  }
  // ingress-nginx's block always has a tag (the chart requires one).
  const writtenTag = tag ?? (shape.layout === "ingress-nginx" ? "1.7.0" : undefined);
  if (writtenTag !== undefined) {
    const value = shape.digest === "in-tag" ? `${writtenTag}@${DIGESTS[0]}` : writtenTag;
    lines.push(`${inner}tag: ${quoteValue(value, shape.quote)}`);
  }
  lines.push(`${inner}pullPolicy: IfNotPresent`);
  const digestKey = shape.layout === "ingress-nginx" && shape.chroot ? "digestChroot" : "digest";
  if (shape.digest === "pinned") lines.push(`${inner}${digestKey}: ${DIGESTS[0]}`);
  else if (shape.digest !== "absent" && shape.digest !== "in-tag") {
    const none = nullish(shape.digest);
    lines.push(`${inner}${digestKey}:${none === "" ? "" : ` ${none}`}`);
  }
  return lines;
}

const documentShape = fc.record({
  block: blockShape,
  helmRelease: fc.boolean(),
  fillers: fc.array(fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,8}$/), { maxLength: 4 }),
  crlf: fc.boolean(),
});
type DocumentShape = typeof documentShape extends fc.Arbitrary<infer T> ? T : never;

function render(shape: DocumentShape): { text: string; at: (values: unknown) => unknown } {
  const root = shape.helmRelease ? "    " : "";
  const lines = shape.helmRelease
    ? [
        "apiVersion: helm.toolkit.fluxcd.io/v2",
        "kind: HelmRelease",
        "metadata:",
        "  name: shop",
        "spec:",
        "  values:",
      ]
    : ["# values"];
  shape.fillers.forEach((filler, index) =>
    lines.push(`${root}f${index}${filler}:`, `${root}  enabled: true`),
  );
  lines.push(
    `${root}proxy:`,
    `${root}  image:`,
    `${root}    repository: ghcr.io/acme/proxy`,
    `${root}    tag: 1.7.0`,
  );
  lines.push(`${root}shop:`, ...blockLines(shape.block, `${root}  `));
  const eol = shape.crlf ? "\r\n" : "\n";
  const values = (document: unknown): Record<string, Record<string, unknown>> =>
    (shape.helmRelease ? (document as { spec: { values: unknown } }).spec.values : document) as Record<
      string,
      Record<string, unknown>
    >;
  return {
    text: lines.join(eol) + eol,
    at: (document) => values(document).shop![shape.block.key],
  };
}

const update = fc.record({
  tag: fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,20}$/),
  digest: fc.constantFrom(DIGESTS[1]!, DIGESTS[2]!),
  pin: fc.constantFrom<ImageUpdate["pin"][]>("tag", "digest", "digest-only"),
});

describe("image blocks in every layout", () => {
  it("render the intended reference after an edit, and the other images' stay as they were", () => {
    fc.assert(
      fc.property(documentShape, update, (shape, wanted) => {
        const { text, at } = render(shape);
        const before = parse(text) as unknown;
        const rendered = renderChart(at(before));
        const withoutDigest = rendered.replace(/@.*$/, "");
        const name = withoutDigest.replace(/:[^:/]*$/, "");
        const currentTag = /:([^:/]+)$/.exec(withoutDigest.replace(/^[^/]*\//, ""))?.[1];
        const pinned = rendered.includes("@");
        const change: ImageUpdate = { image: name, ...wanted };
        let result: ReturnType<typeof updateImage>;
        try {
          result = updateImage(text, change);
        } catch (error) {
          // The one refusal: a digest-only pin with nowhere to write the digest.
          expect(error).toBeInstanceOf(UserError);
          expect((error as UserError).message).toContain("no digest key to pin");
          expect(wanted.pin).toBe("digest-only");
          expect(pinned).toBe(false);
          return;
        }
        const after = parse(result.text) as unknown;
        let intended: string;
        if (wanted.pin === "digest-only")
          intended =
            shape.block.layout === "string"
              ? `${name}@${wanted.digest}`
              : `${name}${currentTag !== undefined ? `:${currentTag}` : ""}@${wanted.digest}`;
        else
          intended = `${name}:${wanted.tag}${wanted.pin === "digest" || pinned ? `@${wanted.digest}` : ""}`;
        expect(renderChart(at(after))).toBe(intended);
        const proxy = (document: unknown) =>
          renderChart(
            (shape.helmRelease
              ? (document as { spec: { values: { proxy: { image: unknown } } } }).spec.values
              : (document as { proxy: { image: unknown } })
            ).proxy.image,
          );
        expect(proxy(after)).toBe(proxy(before));
        // Editing again changes nothing.
        expect(updateImage(result.text, change).edits).toEqual([]);
      }),
      { seed: 20261201, numRuns: 600 },
    );
  });
});
