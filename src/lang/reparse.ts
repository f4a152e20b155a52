/**
 * Re-parsing after an edit inside one top-level declaration (issue 21 item 2: the language server
 * answers within 50 ms for a 2,000-line file). When the text changed only strictly inside one
 * entity, event, state or `map event` of a file that parsed with no diagnostic, only that
 * declaration is lexed and parsed again; the declarations before it are kept as they are and
 * those after it are copied with their positions moved by the edit. The result is exactly what
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
const KIND_OF = { entities: "entity", events: "event", states: "state", maps: "map" } as const;

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

  // The declaration holding the edit strictly inside (first and last characters untouched).
  let kind: (typeof KINDS)[number] | null = null;
  let index = -1;
  for (const k of KINDS) {
    const at = file[k].findIndex((d) => d.range.start.offset < p && oldEditEnd < d.range.end.offset);
    if (at >= 0) {
      kind = k;
      index = at;
      break;
    }
  }
  if (kind === null) return null;
  const old: Decl = file[kind][index];
  const start = old.range.start.offset;
  const oldEnd = old.range.end.offset;
  const end = oldEnd + delta;
  const last = prevText[oldEnd - 1];
  if ((last !== "}" && last !== ")") || !startsLine(prevText, start) || !endsLine(prevText, oldEnd)) return null;

  const lexed = lex(text, lines, start, end);
  const lastTok = lexed.tokens.at(-1);
  if (!lastTok || lastTok.startOffset !== end - 1 || lastTok.image !== last) return null;
  const decl = parseDeclaration(lexed, lines);
  if (decl === null || decl.kind !== KIND_OF[kind]) return null;

  const lineDelta = lines.lineStarts.length - countLines(prevText);
  const moved = new Map<Position, Position>();
  const out: FlowFile = { ...file, range: lines.range(0, text.length) };
  try {
    for (const k of KINDS) {
      (out as unknown as Record<string, Decl[]>)[k] = file[k].map((d) =>
        d === old ? decl.decl : d.range.start.offset >= oldEnd ? (moveRanges(d, delta, lineDelta, moved, 0) as Decl) : d,
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

/** Lines as LineIndex counts them (`\n`, `\r\n` or a lone `\r` end one). */
function countLines(text: string): number {
  let n = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) n++;
    else if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      n++;
    }
  }
  return n;
}

/**
 * A copy of the tree `v` with every position (`{ line, column, offset }`) moved by `offsetDelta`
 * and `lineDelta` (columns stay: the node lies on lines after the edit). A position shared by two
 * ranges stays shared. Throws TooDeep past MAX_DEPTH.
 */
function moveRanges(v: unknown, offsetDelta: number, lineDelta: number, moved: Map<Position, Position>, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new TooDeep();
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map((x) => moveRanges(x, offsetDelta, lineDelta, moved, depth + 1));
  const o = v as Record<string, unknown>;
  if (isPosition(o)) {
    const p = o as unknown as Position;
    let m = moved.get(p);
    if (m === undefined) {
      m = { line: p.line + lineDelta, column: p.column, offset: p.offset + offsetDelta };
      moved.set(p, m);
    }
    return m;
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(o)) copy[key] = moveRanges(o[key], offsetDelta, lineDelta, moved, depth + 1);
  return copy;
}

function isPosition(o: Record<string, unknown>): boolean {
  return typeof o.line === "number" && typeof o.column === "number" && typeof o.offset === "number" && Object.keys(o).length === 3;
}
