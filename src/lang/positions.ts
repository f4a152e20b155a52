/**
 * Offsets to line/column positions. A line ends at `\n`, `\r\n` or a lone `\r`; columns count
 * UTF-16 code units from 1, offsets count them from 0 (the conventions of ast.ts).
 */
import type { Position, Range } from "./ast.js";

export class LineIndex {
  /** Offset of the first character of each line. */
  readonly lineStarts: number[];

  constructor(readonly source: string) {
    const starts = [0];
    for (let i = 0; i < source.length; i++) {
      const c = source.charCodeAt(i);
      if (c === 10) starts.push(i + 1);
      else if (c === 13) {
        if (source.charCodeAt(i + 1) === 10) i++;
        starts.push(i + 1);
      }
    }
    this.lineStarts = starts;
  }

  /** The line (0-based) of the last `position` answer: callers mostly ask in order of offset. */
  private lastLine = 0;

  /** The position of `offset`, clamped into `[0, source.length]` (NaN counts as 0). */
  position(offset: number): Position {
    const o = this.clamp(offset);
    const starts = this.lineStarts;
    // The parser asks for token after token: the line of the last answer, or the next one, is
    // nearly always it (a binary search per position was a tenth of a parse).
    const last = this.lastLine;
    if (starts[last] <= o) {
      if (last + 1 >= starts.length || o < starts[last + 1]) return { line: last + 1, column: o - starts[last] + 1, offset: o };
      if (last + 2 >= starts.length || o < starts[last + 2]) {
        this.lastLine = last + 1;
        return { line: last + 2, column: o - starts[last + 1] + 1, offset: o };
      }
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= o) lo = mid;
      else hi = mid - 1;
    }
    this.lastLine = lo;
    return { line: lo + 1, column: o - starts[lo] + 1, offset: o };
  }

  /** The range `[start, end)` of offsets; `end` below `start` is raised to `start`. */
  range(start: number, end: number): Range {
    const s = this.clamp(start);
    const e = Math.max(s, this.clamp(end));
    return { start: this.position(s), end: this.position(e) };
  }

  /** The text of 1-based line `line`, without its terminator ("" when out of range). */
  lineText(line: number): string {
    if (line < 1 || line > this.lineStarts.length) return "";
    const start = this.lineStarts[line - 1];
    const next = line < this.lineStarts.length ? this.lineStarts[line] : this.source.length;
    return this.source.slice(start, next).replace(/\r?\n$|\r$/, "");
  }

  private clamp(offset: number): number {
    if (!Number.isFinite(offset) || offset < 0) return 0;
    return Math.min(Math.trunc(offset), this.source.length);
  }
}
