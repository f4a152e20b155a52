/**
 * How the CLI's client commands print what the server answered (issue 9 §3).
 *
 * - `deploy`: a refused workflow's diagnostics as `check` prints them —
 *   `FILE:LINE:COL: error FLOWnnn: message`, the source line and the caret line under the range
 *   the server names (`^~~~`, exactly as `check` prints it) — then
 *   `1 file not deployed: N errors, N warnings`; exit 1. A deployed workflow prints the answer's JSON
 *   (stdout) and its warnings in the same format (stderr), then — when a link bypasses
 *   `[Authorize]` (FLOW312) — the `security:` line `check` prints too; exit 0. Any other refusal prints the
 *   problem JSON; exit 1.
 * - `raise` on a fanned-out slot without `--element`: a hint naming `--element` and the elements.
 */
import { formatDiagnostic, linksPastAuthorizeLine } from "../lang/compile.js";
import type { Diagnostic } from "../lang/diagnostics.js";
import type { ApiAnswer } from "./client.js";

/** A diagnostic as the HTTP API sends it (start position only). */
interface ApiDiagnostic {
  code: string;
  severity: "error" | "warning";
  message: string;
  line: number;
  column: number;
  /** Where the range ends (exclusive); absent from older servers, which give the start only. */
  endLine?: number;
  endColumn?: number;
}

function format(d: ApiDiagnostic, source: string, file: string): string {
  const start = { line: d.line, column: d.column, offset: 0 };
  const end = { line: d.endLine ?? d.line, column: d.endColumn ?? d.column, offset: 0 };
  const diagnostic: Diagnostic = { code: d.code, severity: d.severity, message: d.message, range: { start, end } };
  return formatDiagnostic(diagnostic, source, file);
}

/** Prints a `POST /api/workflows` answer; returns the exit code. */
export function printDeployAnswer(answer: ApiAnswer, source: string, file: string, out: (line: string) => void, err: (line: string) => void): number {
  const body = (typeof answer.body === "object" && answer.body !== null ? answer.body : {}) as { diagnostics?: ApiDiagnostic[]; warnings?: ApiDiagnostic[] };
  if (answer.status < 400) {
    out(JSON.stringify(answer.body, null, 2));
    for (const d of body.warnings ?? []) for (const line of format(d, source, file).split("\n")) err(line);
    const pastAuthorize = (body.warnings ?? []).filter((d) => d.code === "FLOW312").length;
    if (pastAuthorize > 0) err(linksPastAuthorizeLine(pastAuthorize));
    return 0;
  }
  if (Array.isArray(body.diagnostics)) {
    for (const d of body.diagnostics) for (const line of format(d, source, file).split("\n")) out(line);
    const count = (severity: string) => body.diagnostics!.filter((d) => d.severity === severity).length;
    const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
    out(`1 file not deployed: ${plural(count("error"), "error")}, ${plural(count("warning"), "warning")}`);
    return 1;
  }
  out(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body, null, 2));
  return 1;
}

/**
 * When `run` (a `GET /api/runs/{id}` body) has a fanned-out slot `alias`, the hint to print:
 * `hint: slot "x" is fanned out: name its element with --element N (elements: 0, 1, 2)`.
 */
export function fanOutHint(run: unknown, alias: string): string | null {
  const slots = (run as { slots?: { alias: string; element: number | null; status: string }[] })?.slots ?? [];
  const elements = slots.filter((s) => s.alias === alias && s.element !== null).map((s) => s.element as number);
  if (elements.length === 0) return null;
  const list = [...new Set(elements)].sort((a, b) => a - b).join(", ");
  return `hint: slot "${alias}" is fanned out: name its element with --element N (elements: ${list})`;
}
