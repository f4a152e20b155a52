/**
 * Re-parsing after an edit inside one top-level declaration (issue 21 item 2: the language server
 * answers within 50 ms for a 2,000-line file). When the text changed only strictly inside one
 * entity, event, state or `map event` of a file that parsed with no diagnostic, only that
 * declaration is lexed and parsed again; the declarations before it are kept as they are and
 * those after it are copied with their positions moved by the edit. Blanks and line breaks added
 * or removed between two declarations (see blankGap) parse nothing again: the declarations after
 * them are moved. The result is exactly what
 * `parseSource(text)` gives (the tree, ranges included, and the diagnostics; test/lang/reparse.test.ts
 * compares both over random edits of every repository .flow) — otherwise `reparse` returns null
 * and the caller parses the whole text.
 *
 * Why one declaration alone reads the same as in the whole file (lexer.ts, parser.ts): it starts a
 * line (only blanks before it on its line) and ends one (only blanks after it) with `}` or `)`, and
 * the edit leaves its first and last characters alone. So the lexer starts the declaration in the
 * same state and no token crosses its ends; the newline pass sees the same tokens on both sides
 * of it, with no bracket open (the file parsed); and the parser reads a top-level declaration
 * from a separator to a separator, whose result depends on its own tokens only. The new
 * declaration must parse with no diagnostic and be of the same kind; the file's only other
 * diagnostics, FLOW009 (characters PostgreSQL cannot store), are found again over the new text.
 */
import type { FlowFile, Position } from "./ast.js";
import { parseSource, unstorableDiagnostics, type ParsedSource } from "./compile.js";
import { lex, type LexResult } from "./lexer.js";
import { parseDeclaration } from "./parser.js";
import type { LineIndex } from "./positions.js";

/** Deeper trees are not copied: the whole text is parsed instead (the walk stays within the stack). */
const MAX_DEPTH = 4096;

type Decl = FlowFile["entities"][number] | FlowFile["events"][number] | FlowFile["states"][number] | FlowFile["maps"][number];
const KINDS = ["entities", "events", "states", "maps"] as const;
const FILE_KEYS = new Set(["kind", "name", "params", "entities", "events", "states", "maps", "range"]);

/**
 * The parse of `text` (with `lines`, its line index) from `prev`, the parse of `prevText`, when
 * the edit between them lies inside one declaration (see above); null when it does not, or when
 * the new declaration does not parse cleanly — then call `parseSource(text, lines)`.
 * Never changes `prev`.
 */
export function reparse(prev: ParsedSource, prevText: string, text: string, lines: LineIndex): ParsedSource | null {
  const file = prev.ast;
  if (file === null || prev.diagnostics.length > 0) return null;
  // A part of the file this module does not know (syntax added later) might follow the edit unmoved.
  if (Object.keys(file).some((k) => !FILE_KEYS.has(k))) return null;
  // The changed span: [p, prevText.length - q) before, [p, text.length - q) after.
  const shortest = Math.min(prevText.length, text.length);
  let p = 0;
  while (p < shortest && prevText.charCodeAt(p) === text.charCodeAt(p)) p++;
  if (p === shortest && prevText.length === text.length) return null; // the same text: nothing to gain
  let q = 0;
  while (q < shortest - p && prevText.charCodeAt(prevText.length - 1 - q) === text.charCodeAt(text.length - 1 - q)) q++;
  const oldEditEnd = prevText.length - q;
  const delta = text.length - prevText.length;

  // The declaration holding the edit strictly inside (first and last characters untouched)…
  const decls = KINDS.flatMap((k) => file[k] as Decl[]);
  const old = decls.find((d) => d.range.start.offset < p && oldEditEnd < d.range.end.offset);
  let replacement: Decl | null = null;
  if (old !== undefined) {
    replacement = reparseDeclaration(old, prevText, text, lines, delta);
    if (replacement === null) return null;
  } else if (!blankGap(decls, prevText, text, p, oldEditEnd, text.length - q)) {
    // …or else blanks and line breaks added or removed between two declarations.
    return null;
  }

  const moved = new Map<object, unknown>();
  const out: FlowFile = { ...file, range: lines.range(0, text.length) };
  try {
    for (const k of KINDS) {
      (out as unknown as Record<string, Decl[]>)[k] = (file[k] as Decl[]).map((d) =>
        d === old ? replacement! : d.range.start.offset >= oldEditEnd ? (moveRanges(d, delta, lines, moved, 0) as Decl) : d,
      );
    }
  } catch (err) {
    if (err instanceof TooDeep) return null;
    throw err;
  }
  let full: LexResult | null = null;
  return {
    lines,
    ast: out,
    diagnostics: unstorableDiagnostics(text, lines),
    // The whole text's tokens (the formatter's input), lexed when first asked for.
    get lexed(): LexResult {
      full ??= lex(text, lines);
      return full;
    },
  };
}

/** `old` (holding the edit) lexed and parsed again from `text`, when it can be alone (see above); else null. */
function reparseDeclaration(old: Decl, prevText: string, text: string, lines: LineIndex, delta: number): Decl | null {
  const start = old.range.start.offset;
  const oldEnd = old.range.end.offset;
  const end = oldEnd + delta;
  const last = prevText[oldEnd - 1];
  if ((last !== "}" && last !== ")") || !startsLine(prevText, start) || !endsLine(prevText, oldEnd)) return null;
  const lexed = lex(text, lines, start, end);
  const lastTok = lexed.tokens.at(-1);
  if (!lastTok || lastTok.startOffset !== end - 1 || lastTok.image !== last) return null;
  const decl = parseDeclaration(lexed, lines);
  return decl !== null && decl.kind === old.kind ? decl.decl : null;
}

/**
 * True when the edit ([p, oldEditEnd) before, [p, newEditEnd) after) lies between the end of one
 * declaration and the start of the next, and that gap holds only blanks and at least one line
 * break before and after: the lexer then gives the same tokens but for the number of newlines in
 * one run of separators, which the newline pass reduces to one (lexer.ts), so the tree is the
 * same, its later positions moved.
 */
function blankGap(decls: Decl[], prevText: string, text: string, p: number, oldEditEnd: number, newEditEnd: number): boolean {
  let before = -1;
  let after = Infinity;
  for (const d of decls) {
    if (d.range.end.offset <= p) before = Math.max(before, d.range.end.offset);
    if (d.range.start.offset >= oldEditEnd) after = Math.min(after, d.range.start.offset);
  }
  if (before < 0 || after === Infinity) return false;
  const gapBefore = prevText.slice(before, after);
  const gapAfter = text.slice(before, after + newEditEnd - oldEditEnd);
  return BLANKS_WITH_BREAK.test(gapBefore) && BLANKS_WITH_BREAK.test(gapAfter);
}

const BLANKS_WITH_BREAK = /^[ \t\r\n]*[\r\n][ \t\r\n]*$/;

/** `parseSource(text, lines)`, from `prev` (the parse of `prevText`) when `reparse` can. */
export function parseAfterEdit(prev: ParsedSource | null, prevText: string, text: string, lines: LineIndex): ParsedSource {
  return (prev && reparse(prev, prevText, text, lines)) ?? parseSource(text, lines);
}

class TooDeep extends Error {}

const BLANK = /[ \t\f\v\u00a0\ufeff]/;

/** Only blanks between the start of its line and `offset`. */
function startsLine(text: string, offset: number): boolean {
  let i = offset - 1;
  while (i >= 0 && BLANK.test(text[i])) i--;
  return i < 0 || text[i] === "\n" || text[i] === "\r";
}

/** Only blanks between `offset` and the end of its line. */
function endsLine(text: string, offset: number): boolean {
  let i = offset;
  while (i < text.length && BLANK.test(text[i])) i++;
  return i >= text.length || text[i] === "\n" || text[i] === "\r";
}

/**
 * A copy of the tree `v` (which lies after the edit) with every position moved by `offsetDelta`,
 * its line and column read again from `lines` (the new text's). An object reached twice (a
 * position shared by two ranges, a node held in two places) is copied once and stays shared.
 * Throws TooDeep past MAX_DEPTH.
 */
function moveRanges(v: unknown, offsetDelta: number, lines: LineIndex, moved: Map<object, unknown>, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new TooDeep();
  if (v === null || typeof v !== "object") return v;
  const done = moved.get(v);
  if (done !== undefined) return done;
  let copy: unknown;
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    moved.set(v, out);
    for (const x of v) out.push(moveRanges(x, offsetDelta, lines, moved, depth + 1));
    copy = out;
  } else {
    const o = v as Record<string, unknown>;
    if (isPosition(o)) {
      copy = lines.position((o as unknown as Position).offset + offsetDelta);
      moved.set(v, copy);
    } else {
      const out: Record<string, unknown> = {};
      moved.set(v, out);
      for (const key of Object.keys(o)) out[key] = moveRanges(o[key], offsetDelta, lines, moved, depth + 1);
      copy = out;
    }
  }
  return copy;
}

function isPosition(o: Record<string, unknown>): boolean {
  return typeof o.line === "number" && typeof o.column === "number" && typeof o.offset === "number" && Object.keys(o).length === 3;
}
