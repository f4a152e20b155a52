/**
 * "Did you mean …": the names near a misspelled one, shared by the language server's quick fixes
 * (src/authoring/lsp/features.ts: unknown states and slot aliases) and the run-input check
 * (src/engine/values/input.ts: an unknown parameter or entity field; issue 30 item 10).
 *
 * Near means an edit distance (letter case ignored; a swap of two neighbouring letters counts 1)
 * of at most a third of the name's length, and at least 1.
 */

/**
 * Edit distance between `x` and `y`, letter case ignored: insertions, deletions, substitutions and
 * swaps of two neighbouring letters (`titel` → `title`) count 1 each (optimal string alignment);
 * capped at `max` + 1.
 */
function distance(x: string, y: string, max: number): number {
  if (Math.abs(x.length - y.length) > max) return max + 1;
  const a = x.toLowerCase();
  const b = y.toLowerCase();
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) cur[j] = Math.min(cur[j], before[j - 2] + 1);
    }
    before = prev;
    prev = cur;
  }
  return Math.min(prev[b.length], max + 1);
}

/** Names among `candidates` near `name` (never `name` itself), nearest first, at most 3. */
export function nearNames(name: string, candidates: readonly string[]): string[] {
  const max = Math.max(1, Math.floor(name.length / 3));
  return candidates
    .map((c) => ({ c, d: distance(name, c, max) }))
    .filter((x) => x.d <= max && x.c !== name)
    .sort((p, q) => p.d - q.d)
    .slice(0, 3)
    .map((x) => x.c);
}

/** `: did you mean \`x\`?` for the nearest of `candidates`, or "" when none is near. */
export function didYouMean(name: string, candidates: readonly string[]): string {
  const [near] = nearNames(name, candidates);
  return near === undefined ? "" : `: did you mean \`${near}\`?`;
}
