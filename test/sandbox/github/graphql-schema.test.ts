/**
 * The emulator checks every GraphQL document against GitHub's published schema
 * (`@octokit/graphql-schema`) before running it, as github.com does ("GraphQL API: Forming calls":
 * a query is validated against the schema, and an invalid one returns `errors` with HTTP 200).
 * Ferry's own documents are read from its source, so a typo there fails here, not on github.com.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphqlSchemaErrors } from "../../../packages/sandbox/src/github/graphql-schema-check.js";
import { startWorld, type World } from "../../support/github-emulator-world.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");

/** The template literals passed to `octokit.graphql(` in Ferry's GitHub adapter. */
function ferryDocuments(): { file: string; document: string }[] {
  const found: { file: string; document: string }[] = [];
  for (const file of ["github-repo-issues.ts", "github-repo-merges.ts"]) {
    const text = readFileSync(join(ROOT, "src", "adapters", "github", file), "utf8");
    for (const m of text.matchAll(/\.graphql\(\s*`([^`]*)`/g))
      // A `${…}` inside a document would be a splice of a value: put a valid literal in its place.
      found.push({ file, document: m[1]!.replace(/\$\{[^}]*\}/g, "1") });
  }
  return found;
}

describe("GraphQL documents checked against GitHub's schema", () => {
  it("finds Ferry's documents and GitHub's schema admits each of them", () => {
    const documents = ferryDocuments();
    expect(documents.length).toBeGreaterThanOrEqual(4);
    for (const { file, document } of documents)
      expect({ file, errors: graphqlSchemaErrors(document) }).toEqual({ file, errors: [] });
  });

  it("refuses a field, an argument and a required argument GitHub's schema does not allow, in GitHub's words", () => {
    expect(
      graphqlSchemaErrors(
        `mutation { enablePullRequestAutoMerges(input: {pullRequestId: "x"}) { clientMutationId } }`,
      ),
    ).toEqual([
      expect.objectContaining({
        message: "Field 'enablePullRequestAutoMerges' doesn't exist on type 'Mutation'",
        extensions: { code: "undefinedField" },
      }),
    ]);
    expect(graphqlSchemaErrors(`query { repository(owner: "a", name: "b", id: 1) { id } }`)).toEqual([
      expect.objectContaining({ message: "Field 'repository' doesn't accept argument 'id'" }),
    ]);
    expect(graphqlSchemaErrors(`query { repository(owner: "a") { id } }`)).toEqual([
      expect.objectContaining({ message: "Field 'repository' is missing required arguments: name" }),
    ]);
    expect(graphqlSchemaErrors(`query { repository(`)[0]!.message).toMatch(/^Parse error at \[1, 20\]/);
  });

  describe("over HTTP", () => {
    let world: World;
    beforeAll(async () => {
      world = await startWorld();
    });
    afterAll(async () => {
      await world.emu.close();
    });

    it("answers an invalid document with HTTP 200 and errors[], running nothing", async () => {
      const response = await fetch(`${world.emu.apiUrl}/graphql`, {
        method: "POST",
        headers: { authorization: `token ${world.tokens.mona}`, "content-type": "application/json" },
        body: JSON.stringify({ query: `mutation { pinIssue(input: {issueId: "x"}) { clientMutationIds } }` }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        errors: [
          expect.objectContaining({
            message: "Field 'clientMutationIds' doesn't exist on type 'PinIssuePayload'",
          }),
        ],
      });
    });
  });
});
