import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { currentImage } from "../../src/core/targets/index.js";
import { updateImage } from "../../src/core/yaml-edit/update-image.js";
import {
  DEFAULT_RENDERER_LIMITS,
  kubectlRenderer,
  kustomizeRenderer,
  runRenderer,
} from "../../src/adapters/render/render-tools.js";
import { CORPUS_CASES } from "../support/corpus-cases.js";

const CORPUS = fileURLToPath(new URL("../fixtures/corpus/", import.meta.url));
const readCorpus = (file: string): string => readFileSync(join(CORPUS, file), "utf8");

describe("the corpus copies", () => {
  // SOURCES.md lists each file's git blob id; the copy must hash to it (byte for byte).
  const sources = readCorpus("SOURCES.md");
  const rows: [string, string][] = [];
  let directory = "";
  for (const line of sources.split("\n")) {
    const heading = /^## ([\w.-]+)\/([\w.-]+)$/.exec(line);
    if (heading) directory = `${heading[1]}__${heading[2]}`;
    const row = /^\| `([^`]+)` \| `([0-9a-f]{40})` \|/.exec(line);
    if (row && directory) rows.push([`${directory}/${row[1]}`, row[2]!]);
  }

  it("lists the files the edit cases use", () => {
    for (const testCase of CORPUS_CASES) expect(rows.map(([file]) => file)).toContain(testCase.file);
  });

  it.each(rows)("%s is byte-for-byte the published blob", (file, blob) => {
    const bytes = readFileSync(join(CORPUS, file));
    const id = createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
    expect(id).toBe(blob);
  });
});

describe("editing real-world files", () => {
  it.each(CORPUS_CASES.map((testCase) => [testCase.file, testCase] as const))(
    "%s changes exactly the intended lines",
    (_file, testCase) => {
      const before = readCorpus(testCase.file);
      const result = updateImage(before, testCase.update, testCase.options);
      const beforeLines = before.split("\n");
      const afterLines = result.text.split("\n");
      expect(afterLines.length).toBe(beforeLines.length);
      const changed = beforeLines.flatMap((line, index) => (line === afterLines[index] ? [] : [index + 1]));
      expect(changed).toEqual(testCase.lines);
      for (const edit of result.edits) {
        // Put the old value back into the new line: the rest of the line is untouched.
        expect(afterLines[edit.line - 1]!.replace(edit.to, edit.from)).toBe(beforeLines[edit.line - 1]);
      }
      expect(parseAllDocuments(result.text).every((document) => document.errors.length === 0)).toBe(true);
      expect(updateImage(result.text, testCase.update, testCase.options).edits).toEqual([]);
    },
  );

  it("reads what the edited file now runs", () => {
    const testCase = CORPUS_CASES.find((candidate) => candidate.file.endsWith("bitnami/nginx/values.yaml"))!;
    const result = updateImage(readCorpus(testCase.file), testCase.update);
    expect(currentImage(result.text, "bitnami/nginx")).toMatchObject({
      tag: testCase.update.tag,
      digest: testCase.update.digest,
    });
    // The chart's other images (git, exporter) keep their tags.
    expect(currentImage(result.text, "bitnami/git")?.tag).toBe("2.51.0-debian-12-r0");
  });
});

/**
 * kubectl kustomize renders the new image. The corpus kustomizations name resources that are not
 * in the corpus, so each listed file is stubbed with a Deployment that uses the entry's `name`.
 */
describe("kubectl kustomize renders the edited overlays", () => {
  const renders = [
    {
      file: "fluxcd__kustomize-controller/config/manager/kustomization.yaml",
      resources: { "deployment.yaml": "fluxcd/kustomize-controller" },
      image: "fluxcd/kustomize-controller:v1.10.0",
    },
    {
      file: "argoproj__argo-cd/reposerver/repository/testdata/app-parameters/multi/kustomization.yaml",
      resources: { "guestbook.yaml": "quay.io/argoprojlabs/argocd-e2e-container" },
      image: "quay.io/argoprojlabs/argocd-e2e-container:0.2",
    },
    {
      file: "fluxcd__image-automation-controller/internal/update/testdata/setters/original/Kustomization",
      resources: { "irrelevant.yaml": "container" },
      image: "ghcr.io/acme/shop:v2",
    },
    {
      file: "argoproj__argo-cd/manifests/base/kustomization.yaml",
      resources: {},
      image: "quay.io/argoproj/argocd:v3.1.0",
    },
  ];

  it.each(renders)(
    "$file",
    async ({ file, resources, image }) => {
      const testCase = CORPUS_CASES.find((candidate) => candidate.file === file)!;
      const edited = updateImage(readCorpus(file), testCase.update, testCase.options).text;
      const dir = await mkdtemp(join(tmpdir(), "ferry-kustomize-"));
      try {
        const name = file.endsWith("/Kustomization") ? "Kustomization" : "kustomization.yaml";
        let text = edited;
        const stubs = Object.entries(resources);
        if (stubs.length === 0) {
          // This base lists folders of the Argo CD repo; render the images transformer over one stub instead.
          text = edited.replace(/^resources:\n(?:- .*\n)+/m, "resources:\n- stub.yaml\n");
          stubs.push(["stub.yaml", "quay.io/argoproj/argocd"]);
        }
        await writeFile(join(dir, name), text);
        for (const [resource, written] of stubs)
          await writeFile(join(dir, resource), deployment(resource.replace(/\.ya?ml$/, ""), written));
        // kubectl kustomize, or kustomize build where kubectl is absent, as the reconciler renders.
        const stdout = await runRenderer(
          [kubectlRenderer(), kustomizeRenderer()],
          dir,
          DEFAULT_RENDERER_LIMITS,
          { allowedPrefixes: [] },
        );
        expect(stdout).toContain(`image: ${image}\n`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});

function deployment(name: string, image: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: app
          image: ${image}
`;
}
