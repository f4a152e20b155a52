/**
 * Expected failures of a command (issue 9 §3): each is one line naming what failed, where, and the
 * variable that points at it; the command prints `error: <line>` and exits 1, with no stack trace.
 * Kept free of heavy imports so every command can load it.
 */
import { ConfigError } from "../config.js";

/** An expected failure; its message is the one line the command prints. */
export class StartupError extends Error {
  override name = "StartupError";
}

/** `url` with its password replaced by `***` and no trailing slash. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "<malformed URL>";
  }
}

/** The one line to print for an expected failure (ConfigError, StartupError), or null for a bug. */
export function failureLine(err: unknown): string | null {
  if (err instanceof StartupError || err instanceof ConfigError) return err.message;
  return null;
}
