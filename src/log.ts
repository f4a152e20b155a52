/**
 * Structured logs (pino, JSON lines on stdout). Tokens never reach a log line: the access log
 * writes the callback path as `/api/workflow/callback/[redacted]`, and as a last line of defence
 * every serialized line passes `redactLinks`, which blanks the token segment of any callback path.
 */
import { pino, type Logger } from "pino";

export type { Logger };

const CALLBACK_PATH = /(\/api\/workflow\/callback\/)[^\s"'?#\\/<>]+/g;

/** Replaces the token in every callback path or URL inside `text` with `[redacted]`. */
export function redactLinks(text: string): string {
  return text.replace(CALLBACK_PATH, "$1[redacted]");
}

/** A logger writing JSON lines to `destination` (default stdout), with links redacted. */
export function createLogger(level = "info", destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      hooks: {
        streamWrite: (line: string) => redactLinks(line),
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
