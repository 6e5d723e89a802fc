/**
 * A short command parses its config once (docs/capacity.md "Start-up"). zod's JIT compiles a
 * function for each object schema at its first parse, which no code cache keeps: in a process
 * that parses once, that costs more than it saves. Each command bundle loads this module before
 * any schema is built (deploy/bundle-cli.mjs); the servers, which parse again and again, keep
 * the JIT.
 */
import * as z from "zod";

z.config({ jitless: true });
