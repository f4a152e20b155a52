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
