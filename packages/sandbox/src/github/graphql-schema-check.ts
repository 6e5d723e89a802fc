/**
 * Checks a GraphQL document against GitHub's published schema (`@octokit/graphql-schema`, the
 * schema GitHub serves at /graphql), as github.com does before running anything: a field, an
 * argument, a type or a variable that GitHub's schema does not have is refused with HTTP 200 and
 * `errors[]` in GitHub's words (graphql-ruby's messages), never answered as if it worked.
 */
import { schema as published } from "@octokit/graphql-schema";
import { buildSchema, parse, validate, GraphQLError, type GraphQLSchema } from "graphql";

export interface GraphqlSchemaError {
  message: string;
  locations?: { line: number; column: number }[];
  extensions?: Record<string, string>;
}

let schema: GraphQLSchema | undefined;

/** GitHub's schema, built once per process; taken as GitHub publishes it (graphql-js would refuse a few of its deprecations). */
function githubSchema(): GraphQLSchema {
  if (schema === undefined) {
    schema = buildSchema(published.idl, { assumeValidSDL: true, assumeValid: true });
  }
  return schema;
}

/** GitHub's texts for the errors Ferry could meet (graphql-ruby's), the rest as graphql-js says them. */
const GITHUB_WORDS: { pattern: RegExp; message: (m: RegExpExecArray) => string; code: string }[] = [
  {
    pattern: /^Cannot query field "(\w+)" on type "(\w+)"\./,
    message: (m) => `Field '${m[1]}' doesn't exist on type '${m[2]}'`,
    code: "undefinedField",
  },
  {
    pattern: /^Unknown argument "(\w+)" on field "\w+\.(\w+)"\./,
    message: (m) => `Field '${m[2]}' doesn't accept argument '${m[1]}'`,
    code: "argumentNotAccepted",
  },
  {
    pattern: /^Argument "\w+\.(\w+)\((\w+):\)" of type "[^"]+" is required, but it was not provided\./,
    message: (m) => `Field '${m[1]}' is missing required arguments: ${m[2]}`,
    code: "missingRequiredArguments",
  },
  {
    pattern: /^Unknown type "(\w+)"\./,
    message: (m) => `${m[1]} isn't a defined input type`,
    code: "variableRequiresValidType",
  },
];

function inGitHubWords(error: GraphQLError): GraphqlSchemaError {
  const locations = error.locations?.map(({ line, column }) => ({ line, column }));
  for (const words of GITHUB_WORDS) {
    const m = words.pattern.exec(error.message);
    if (m)
      return {
        message: words.message(m),
        ...(locations ? { locations } : {}),
        extensions: { code: words.code },
      };
  }
  return { message: error.message, ...(locations ? { locations } : {}) };
}

/** The document's errors against GitHub's schema, or [] when GitHub would run it. */
export function graphqlSchemaErrors(query: string): GraphqlSchemaError[] {
  let document;
  try {
    document = parse(query);
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    const at = error.locations?.[0];
    // graphql-ruby: `Parse error on "}" (RCURLY) at [1, 5]`; the token names differ, the shape does not.
    return [
      {
        message: `Parse error ${at ? `at [${at.line}, ${at.column}]` : "in the document"}: ${error.message.replace(/^Syntax Error: /, "")}`,
        ...(at ? { locations: [{ line: at.line, column: at.column }] } : {}),
      },
    ];
  }
  return validate(githubSchema(), document).map(inGitHubWords);
}
