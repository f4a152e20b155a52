/**
 * Structured logs (pino, JSON lines on stdout). Tokens never reach a log line: the access log
 * writes route templates and redacted unmatched paths (src/web/access-log.ts), and as a last line
 * of defence every serialized line passes `redactLogLine`: the token segment of any callback path
 * (in any letter case) is blanked, and so is every run of 43 or more token characters (a token's
 * length), wherever it appears.
 */
import { pino, type Logger } from "pino";
import { redactTokens } from "./engine/sealing/seal.js";

export type { Logger };

const LONG_TOKEN_RUN = /[A-Za-z0-9_-]{43,}/g;

/** A serialized log line with every token-shaped string blanked. */
export function redactLogLine(line: string): string {
  return redactTokens(line).replace(LONG_TOKEN_RUN, "[redacted]");
}

/** A logger writing JSON lines to `destination` (default stdout), with links redacted. */
export function createLogger(level = "info", destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      hooks: {
        streamWrite: redactLogLine,
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
