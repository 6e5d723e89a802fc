/**
 * Templates of generated config: `{name}` placeholders replaced by values (docs/config.md
 * "Generated images and environments"). Only the fields the docs name are templates; everything
 * else of a template (policy globs with their own `{a,b}`) is copied as written.
 */

const PLACEHOLDER = /\{([A-Za-z0-9_]*)\}/g;

/** Why the template names a placeholder outside `known`, or undefined. */
export function templateProblem(template: string, known: readonly string[]): string | undefined {
  for (const [, name] of template.matchAll(PLACEHOLDER))
    if (!known.includes(name!))
      return `unknown placeholder {${name}} in ${JSON.stringify(template)} (known: ${known.map((k) => `{${k}}`).join(", ")})`;
  return undefined;
}

/**
 * The template with each placeholder replaced. A placeholder without a value (a `{3}` where the
 * pattern captured two segments) throws TemplateError, said in one line.
 */
export function fillTemplate(template: string, values: Record<string, string | undefined>): string {
  return template.replace(PLACEHOLDER, (_whole, name: string) => {
    const value = values[name];
    if (value === undefined)
      throw new TemplateError(`{${name}} in ${JSON.stringify(template)} has no value here`);
    return value;
  });
}

export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateError";
  }
}

/** Captured segments as the placeholders {1}, {2}, …. */
export function capturePlaceholders(captures: readonly string[]): Record<string, string> {
  return Object.fromEntries(captures.map((capture, index) => [String(index + 1), capture]));
}
