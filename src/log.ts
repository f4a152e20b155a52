/**
 * Structured logs (pino, JSON lines on stdout). Tokens never reach a log line: the access log
 * writes the callback path as `/api/workflow/callback/[redacted]`, and as a last line of defence
 * every serialized line passes `redactTokens`, which blanks the token segment of any callback path.
 */
import { pino, type Logger } from "pino";
import { redactTokens } from "./engine/seal.js";

export type { Logger };

/** A logger writing JSON lines to `destination` (default stdout), with links redacted. */
export function createLogger(level = "info", destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      hooks: {
        streamWrite: (line: string) => redactTokens(line),
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
