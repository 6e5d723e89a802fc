/**
 * Parses `WWW-Authenticate` challenges (RFC 7235) as registries send them:
 * `Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"`.
 * Tolerates unquoted values, escaped quotes, commas inside quotes, odd spacing and several
 * challenges in one header, because registries and proxies differ in all of these.
 */
export interface AuthChallenge {
  /** Lower-cased scheme: `bearer`, `basic`. */
  scheme: string;
  /** Parameters with lower-cased names. */
  params: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

export function parseWwwAuthenticate(header: string | null | undefined): AuthChallenge[] {
  if (!header) return [];
  const challenges: AuthChallenge[] = [];
  let rest = header.trim();
  let current: AuthChallenge | undefined;
  while (rest.length > 0) {
    rest = rest.replace(/^[\s,]+/, "");
    if (rest.length === 0) break;
    const name = TOKEN.exec(rest)?.[0];
    if (!name) break; // garbage: stop rather than guess
    const afterName = rest.slice(name.length).replace(/^\s+/, "");
    if (afterName.startsWith("=") && current) {
      // auth-param of the current challenge
      let value: string;
      let remaining = afterName.slice(1).replace(/^\s+/, "");
      if (remaining.startsWith('"')) {
        let index = 1;
        value = "";
        while (index < remaining.length && remaining[index] !== '"') {
          if (remaining[index] === "\\" && index + 1 < remaining.length) index += 1;
          value += remaining[index];
          index += 1;
        }
        remaining = remaining.slice(index + 1);
      } else {
        const match = /^[^,\s]*/.exec(remaining)![0];
        value = match;
        remaining = remaining.slice(match.length);
      }
      current.params[name.toLowerCase()] = value;
      rest = remaining;
    } else {
      // a new challenge: a scheme not followed by `=`
      current = { scheme: name.toLowerCase(), params: {} };
      challenges.push(current);
      rest = afterName;
    }
  }
  return challenges;
}
