import { RegistryProtocolError } from "./errors.js";
import type { FetchAnswer } from "./fetch-types.js";

/**
 * A registry answer's body read under a size cap (transport.ts): a success larger than the cap is refused,
 * before reading when its Content-Length says so; an error body is cut at a few KiB, read only for its code.
 */

export async function readCapped(registry: string, response: FetchAnswer, maxBytes: number): Promise<Buffer> {
  const okStatus = response.status >= 200 && response.status < 300;
  // Error bodies are only read for their error code: a few KiB is plenty.
  const cap = okStatus ? maxBytes : 4096;
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (okStatus && Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel();
    throw new RegistryProtocolError(
      "registry-response-too-large",
      `${registry}: response of ${declared} bytes exceeds the ${cap}-byte cap`,
    );
  }
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      await reader.cancel();
      if (!okStatus) break;
      throw new RegistryProtocolError(
        "registry-response-too-large",
        `${registry}: response exceeds the ${cap}-byte cap`,
      );
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}
