/**
 * Test helpers for the flow compiler. Sources are written with markers around the text a
 * diagnostic must point at: `⟦…⟧`. `expectDiagnostics` strips the markers, compiles, and asserts
 * that the diagnostics are exactly the expected codes at exactly the marked ranges (line, column,
 * end line, end column), in source order. Messages are never asserted.
 */
import type { ExecutionContext } from "ava";
import { compile, type CompileResult } from "../../src/lang/compile.js";
import { Codes } from "../../src/lang/codes.js";
import type { Diagnostic } from "../../src/lang/diagnostics.js";

const OPEN = "⟦";
const CLOSE = "⟧";

export interface Marked {
  source: string;
  /** Marked ranges in source order: [line, column, endLine, endColumn], 1-based, end exclusive. */
  ranges: [number, number, number, number][];
}

/** Position (1-based line and column) of `offset` in `s`, counted independently of the compiler. */
export function lineCol(s: string, offset: number): [number, number] {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (s[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return [line, offset - lineStart + 1];
}

/** Removes the `⟦…⟧` markers and returns the plain source and the marked ranges. */
export function unmark(marked: string): Marked {
  let source = "";
  const starts: number[] = [];
  const spans: [number, number][] = [];
  for (const ch of marked) {
    if (ch === OPEN) starts.push(source.length);
    else if (ch === CLOSE) spans.push([starts.pop()!, source.length]);
    else source += ch;
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const ranges = spans.map(([s, e]) => [...lineCol(source, s), ...lineCol(source, e)] as [number, number, number, number]);
  return { source, ranges };
}

function shape(d: Diagnostic): string {
  const { start, end } = d.range;
  return `${d.code} ${start.line}:${start.column}-${end.line}:${end.column}`;
}

/**
 * Asserts the diagnostics of `marked` are exactly `codes` at the marked ranges (in source order).
 * The unreachable-state warning is ignored unless FLOW111 is among `codes`.
 */
export function expectDiagnostics(t: ExecutionContext, marked: string, codes: string[]): CompileResult {
  const { source, ranges } = unmark(marked);
  t.is(ranges.length, codes.length, "the test must mark one range per expected code");
  const result = compile(source, "test.flow");
  const keep = codes.includes(Codes.UnreachableState)
    ? result.diagnostics
    : result.diagnostics.filter((d) => d.code !== Codes.UnreachableState);
  const actual = keep.map(shape);
  const expected = codes.map((c, i) => `${c} ${ranges[i][0]}:${ranges[i][1]}-${ranges[i][2]}:${ranges[i][3]}`);
  t.deepEqual(actual, expected, keep.map((d) => `${shape(d)} ${d.message}`).join("\n"));
  return result;
}

/** Asserts `source` compiles with no error (warnings allowed) and returns the result. */
export function expectClean(t: ExecutionContext, source: string): CompileResult {
  const result = compile(source, "test.flow");
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  t.deepEqual(errors.map((d) => `${shape(d)} ${d.message}`), []);
  t.truthy(result.workflow);
  return result;
}

/**
 * A workflow around the members of its initial state S, reachable terminal state T:
 * parameters `v: V, n: int, r: decimal, at: datetime, names: list<string>`, entity V,
 * events E(a: int, b: string) and G(), plus `decls` (more top-level declarations).
 */
export function inState(members: string, decls = ""): string {
  return `workflow W(v: V, n: int, r: decimal, at: datetime, names: list<string>)
entity V { s: string; o: string?; i: int; d: decimal? }
event E(a: int, b: string)
event G()
${decls}
initial state S {
${members}
}
terminal state T
`;
}

/** `inState` with `body` as the statements of S's `enter` block. */
export function inEnter(body: string, members = "", decls = ""): string {
  return inState(`  enter {\n${body}\n  }\n${members}`, decls);
}
