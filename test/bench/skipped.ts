/** Thrown by a bench area that cannot run on this machine; `run.ts` reports it apart from failures. */
export class BenchSkipped extends Error {}
