#!/usr/bin/env node
/**
 * Prints the slowest test files of a CI run (issue 34 item 1): reads the JSON lines that
 * test/preload/durations.mjs appended (`{"file", "ms", "cpuMs"}`, one per test file's process) from each
 * file named on the command line, and prints the `--top N` (default 10) longest, with the suite
 * each ran in (the file's name without `.jsonl`), their wall time in seconds, and per suite the sum,
 * how many databases were made (copies of a migrated template), templates migrated and processes
 * started, and the time they took (test/helpers/costs.ts).
 *
 * Usage: node .ci/test-durations.mjs [--top N] suite-a.jsonl suite-b.jsonl …
 * A missing or empty file is skipped (a suite that failed before running a test).
 */
import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";

const args = process.argv.slice(2);
let top = 10;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--top") top = Number(args[++i]);
  else files.push(args[i]);
}
if (!Number.isInteger(top) || top < 1) {
  process.stderr.write("--top takes a whole number of at least 1\n");
  process.exit(2);
}
const rows = [];
const perSuite = new Map();
/** suite → {database: {n, ms}, template: {n, ms}, process: {n, ms}} (test/helpers/costs.ts) */
const costs = new Map();
for (const f of files) {
  if (!existsSync(f)) continue;
  const suite = basename(f).replace(/\.jsonl$/, "");
  for (const line of readFileSync(f, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line);
    if (entry.cost) {
      const c = costs.get(suite) ?? { database: { n: 0, ms: 0 }, template: { n: 0, ms: 0 }, process: { n: 0, ms: 0 } };
      if (!c[entry.cost]) continue; // a kind this script does not know
      c[entry.cost].n++;
      c[entry.cost].ms += entry.ms;
      costs.set(suite, c);
      continue;
    }
    const { file, ms, cpuMs = 0 } = entry;
    rows.push({ suite, file, ms, cpuMs });
    perSuite.set(suite, (perSuite.get(suite) ?? 0) + ms);
  }
}
rows.sort((a, b) => b.ms - a.ms);
const width = Math.max(0, ...rows.slice(0, top).map((r) => r.file.length));
process.stdout.write(`The ${Math.min(top, rows.length)} slowest test files (wall time of each file's process):\n`);
for (const r of rows.slice(0, top)) process.stdout.write(`  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.file.padEnd(width)}  (${r.suite})\n`);
const byCpu = [...rows].sort((a, b) => b.cpuMs - a.cpuMs);
process.stdout.write(`The ${Math.min(top, byCpu.length)} test files that cost most CPU (the file's process and the processes it started):\n`);
for (const r of byCpu.slice(0, top)) process.stdout.write(`  ${(r.cpuMs / 1000).toFixed(1).padStart(7)} s  ${r.file.padEnd(width)}  (${r.suite})\n`);
for (const [suite, ms] of perSuite) {
  const c = costs.get(suite);
  const made = c
    ? `; ${c.database.n} databases made (${(c.database.ms / 1000).toFixed(0)} s), ${c.template.n} migrated as templates (${(c.template.ms / 1000).toFixed(1)} s), ${c.process.n} slotflow processes started (${(c.process.ms / 1000).toFixed(0)} s until ready)`
    : "";
  const cpu = rows.filter((r) => r.suite === suite).reduce((sum, r) => sum + r.cpuMs, 0);
  process.stdout.write(`  ${suite}: ${rows.filter((r) => r.suite === suite).length} files, ${(ms / 1000).toFixed(0)} s of file time and ${(cpu / 1000).toFixed(0)} s of CPU in all${made}\n`);
}
