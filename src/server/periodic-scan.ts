/** Runs `scan` every `intervalMs` with ±20 % jitter, which spreads the scans of several replicas and installations. */
export function schedulePeriodicScan(
  intervalMs: number | false,
  scan: () => Promise<unknown>,
  onError: (error: unknown) => void,
): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = (): void => {
    if (intervalMs === false || stopped) return;
    const delay = intervalMs * (0.8 + Math.random() * 0.4);
    timer = setTimeout(() => {
      scan().catch(onError).finally(schedule);
    }, delay);
    timer.unref();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
