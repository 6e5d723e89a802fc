/**
 * A deadline on one awaited effect that says what it waited for when it passes (a bare test
 * timeout says only how long). Deadlines here are for a machine ten times slower than a loaded
 * 2-core one: they catch a hang, never a slow run.
 */
export async function within<T>(timeoutMs: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${timeoutMs} ms: ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
