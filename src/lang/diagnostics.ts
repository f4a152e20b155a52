/**
 * Diagnostics are data: a stable code, a severity, a message and a source range.
 * `formatDiagnostic` renders one as `FILE:LINE:COL: error FLOWnnn: message`, then the source line
 * and a caret under the range (language reference §9). The list of codes, each with an example,
 * is docs/diagnostics.md.
 */
import type { Range } from "./ast.js";

export type Severity = "error" | "warning";

export interface Diagnostic {
  /** Stable code, `FLOW` and three digits. */
  code: string;
  severity: Severity;
  message: string;
  range: Range;
}

/**
 * At most this many diagnostics are reported per file (issue 8 item 17): the rest are summed up in
 * one final FLOW008 diagnostic, and the parser stops after this many syntax errors. A file with an
 * error on every line then costs time linear in its size, and a deploy's answer stays small.
 */
export const MAX_DIAGNOSTICS = 100;
