/**
 * Times as the console shows them: instants in UTC (`2026-11-25 10:00:00 UTC`), ages, times ago
 * and countdowns in the two largest units (`3 d 4 h`, `2 d 3 h ago`, `5 min 2 s`), offsets from a
 * run's start (`+1.25 s`). Pure functions; `now` is passed in.
 */

/** `2026-11-25 10:00:00 UTC`. */
export function utc(d: Date): string {
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** A span in its two largest units: `3 d 4 h`, `2 h 5 min`, `5 min 2 s`, `12 s`. */
export function span(ms: number): string {
  const s = Math.floor(Math.abs(ms) / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (d) return `${d} d ${h} h`;
  if (h) return `${h} h ${m} min`;
  if (m) return `${m} min ${sec} s`;
  return `${sec} s`;
}

/** `in 6 d 23 h`, or `passed 2 min 3 s ago`. */
export function countdown(deadline: Date, now: Date): string {
  const ms = deadline.getTime() - now.getTime();
  return ms >= 0 ? `in ${span(ms)}` : `passed ${span(ms)} ago`;
}

/** How long ago an instant was: `2 d 3 h ago` — since when a slot waits (issue 23). */
export function ago(then: Date, now: Date): string {
  return `${span(Math.max(0, now.getTime() - then.getTime()))} ago`;
}

/** An offset from the start: `+0 ms`, `+850 ms`, `+1.25 s`, `+3 min 2 s`. */
export function offset(ms: number): string {
  if (ms < 1000) return `+${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `+${(ms / 1000).toFixed(2)} s`;
  return `+${span(ms)}`;
}
