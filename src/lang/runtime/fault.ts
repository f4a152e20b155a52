/**
 * The one runtime error of the language (language reference "Errors"): thrown by the interpreter
 * and by a family's `evaluate` (src/lang/families), it aborts the whole step. `range` is the
 * construct's place in the source; the message names the construct and its line, never a value,
 * so a token cannot leak into it.
 */
import type { Range } from "../ast.js";

export class RuntimeFault extends Error {
  override name = "RuntimeFault";
  constructor(message: string, readonly range?: Range) {
    super(range ? `line ${range.start.line}: ${message}` : message);
  }
}
