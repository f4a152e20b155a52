/**
 * One open document as the language server sees it: its text lexed and parsed once
 * (src/lang/compile.ts parseSource; after an edit inside one declaration, only that declaration:
 * src/lang/reparse.ts), the symbol index of its tree (../symbols.ts), its compile
 * result (the compiler of `slotflow check`), and the last analysis whose source parsed — completion
 * keeps offering names while the text is broken mid-edit. Positions: LSP's 0-based line and UTF-16
 * character, converted through LineIndex.
 *
 * Latency (issue 21 item 2: 50 ms per request on a 2,000-line file, bench/lsp.ts): each part is
 * made on first use and kept for the version. A request that reads only names (definition,
 * references, outline, rename) needs the parse and the index, not the checker; formatting needs
 * the parse (its tokens and comments too) and lexes only its output; diagnostics, hover (which
 * shows the diagnostics under the cursor) and quick fixes finish the same parse into the compile
 * result (`compile(text, uri, parsed)`, equal to `compile(text, uri)`).
 */
import type { Position as LspPosition, Range as LspRange, TextEdit } from "vscode-languageserver";
import type { FlowFile, Range } from "../../lang/ast.js";
import { compile, parseSource, type CompileResult, type ParsedSource } from "../../lang/compile.js";
import { LineIndex } from "../../lang/positions.js";
import { parseAfterEdit } from "../../lang/reparse.js";
import { buildIndex, type SymbolIndex } from "../symbols.js";

export class Analysis {
  readonly lines: LineIndex;
  /** The text lexed and parsed; null for a text-only view, or when the parse met an internal fault (then `result` has FLOW999). */
  readonly parsed: ParsedSource | null;
  private compiled: CompileResult | undefined;
  private indexed: SymbolIndex | null | undefined;
  private formatted: TextEdit[] | null | undefined;

  constructor(
    readonly uri: string,
    readonly version: number,
    readonly text: string,
    /**
     * The newest earlier analysis whose text parsed: completion's names while this one does not
     * parse, and the parse an edit inside one declaration starts from (reparse.ts).
     */
    lastGood: Analysis | null,
    /** False for a text-only view (no parse): completion on a document changed since its last analysis. */
    parse = true,
  ) {
    this.lines = new LineIndex(text);
    let parsed: ParsedSource | null = null;
    if (parse) {
      try {
        // After an edit inside one declaration only that declaration is parsed again (reparse.ts;
        // the same tree and diagnostics as parsing the whole text).
        parsed = lastGood?.parsed ? parseAfterEdit(lastGood.parsed, lastGood.text, text, this.lines) : parseSource(text, this.lines);
      } catch {
        // An internal fault: `result` compiles again and reports it (FLOW999), with no tree.
        parsed = null;
      }
    } else {
      this.compiled = { diagnostics: [], workflow: null, ast: null };
    }
    this.parsed = parsed;
    // Kept only while this text does not parse: an analysis that parsed is its own fallback, and
    // holding the earlier one too would keep every version of the document alive, one per edit
    // (the heap, and with it the collector's share of each request, grew over the bench's edits).
    this.lastGood = this.ast !== null ? null : lastGood?.good ?? null;
  }

  /** The syntax tree (the parser's; the checker annotates it when `result` is first read); null when the text does not parse. */
  get ast(): FlowFile | null {
    return this.parsed?.ast ?? null;
  }

  /** What `slotflow check` reports for this text (compile.ts `compile`), finished from `parsed` on first use. */
  get result(): CompileResult {
    if (this.compiled === undefined) this.compiled = compile(this.text, this.uri, this.parsed ?? undefined);
    return this.compiled;
  }

  /** The newest earlier analysis whose text parsed, while this one does not parse; else null. */
  readonly lastGood: Analysis | null;

  /**
   * The index of this text's tree; null when it does not parse. Built on first use and kept, so
   * publishing diagnostics (which need none) does not pay for it, and every later request on the
   * same version reuses it (issue 21 item 2: 50 ms per request on a 2,000-line file).
   */
  get index(): SymbolIndex | null {
    if (this.indexed === undefined) this.indexed = this.ast !== null ? buildIndex(this.ast) : null;
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
    return this.ast !== null ? this : this.lastGood;
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
