/**
 * One open document as the language server sees it: its text compiled by the compiler of
 * `slotflow check` (src/lang/compile.ts), the symbol index of its tree (../symbols.ts), and the
 * last analysis whose source parsed — completion keeps offering names while the text is broken
 * mid-edit. Positions: LSP's 0-based line and UTF-16 character, converted through LineIndex.
 */
import type { Position as LspPosition, Range as LspRange, TextEdit } from "vscode-languageserver";
import type { Range } from "../../lang/ast.js";
import { compile, type CompileResult } from "../../lang/compile.js";
import { LineIndex } from "../../lang/positions.js";
import { buildIndex, type SymbolIndex } from "../symbols.js";

export class Analysis {
  readonly lines: LineIndex;
  readonly result: CompileResult;
  private indexed: SymbolIndex | null | undefined;
  private formatted: TextEdit[] | null | undefined;

  constructor(
    readonly uri: string,
    readonly version: number,
    readonly text: string,
    /** The newest earlier analysis whose text parsed (for completion while this one does not). */
    lastGood: Analysis | null,
    /** False for a text-only view (no compile): completion on a document changed since its last analysis. */
    compiled = true,
  ) {
    this.lines = new LineIndex(text);
    this.result = compiled ? compile(text, uri) : { diagnostics: [], workflow: null, ast: null };
    // Kept only while this text does not parse: an analysis that parsed is its own fallback, and
    // holding the earlier one too would keep every version of the document alive, one per edit
    // (the heap, and with it the collector's share of each request, grew over the bench's edits).
    this.lastGood = this.result.ast !== null ? null : lastGood?.good ?? null;
  }

  /** The newest earlier analysis whose text parsed, while this one does not parse; else null. */
  readonly lastGood: Analysis | null;

  /**
   * The index of this text's tree; null when it does not parse. Built on first use and kept, so
   * publishing diagnostics (which need none) does not pay for it, and every later request on the
   * same version reuses it (issue 21 item 2: 50 ms per request on a 2,000-line file).
   */
  get index(): SymbolIndex | null {
    if (this.indexed === undefined) this.indexed = this.result.ast !== null ? buildIndex(this.result.ast) : null;
    return this.indexed;
  }

  /**
   * The formatting edits of this version, computed once by `compute` and kept: a second format
   * request on an unchanged document (format on save after a format command) answers at once.
   */
  formattingEdits(compute: () => TextEdit[] | null): TextEdit[] | null {
    if (this.formatted === undefined) this.formatted = compute();
    return this.formatted;
  }

  /** This analysis when it parsed, else the last one that did. */
  get good(): Analysis | null {
    return this.result.ast !== null ? this : this.lastGood;
  }

  offset(p: LspPosition): number {
    const starts = this.lines.lineStarts;
    if (p.line < 0) return 0;
    if (p.line >= starts.length) return this.text.length;
    const end = p.line + 1 < starts.length ? starts[p.line + 1] : this.text.length;
    return Math.min(starts[p.line] + Math.max(0, p.character), end);
  }

  position(offset: number): LspPosition {
    const p = this.lines.position(offset);
    return { line: p.line - 1, character: p.column - 1 };
  }

  range(r: Range): LspRange {
    return { start: { line: r.start.line - 1, character: r.start.column - 1 }, end: { line: r.end.line - 1, character: r.end.column - 1 } };
  }

  slice(r: Range): string {
    return this.text.slice(r.start.offset, r.end.offset);
  }
}
