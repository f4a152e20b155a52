/**
 * Benchmark `statements` (issue 17 "Poolers"): what sending the hot path's statements unnamed
 * costs against named prepared statements, on one connection, in the PostgreSQL backend (CPU ms
 * from /proc) and on the wall clock. Named: Parse once, then Bind/Execute per call. Unnamed (what
 * slotflow sends since issue 17, so that a pooler in transaction mode works): Parse, Bind, Execute
 * per call, in the same round trip. The statements are the token lookup, the start's outcome
 * probe and the step read (on ids that match no row: the parse and plan cost is the same).
 * Blocks of 500 calls alternate named/unnamed so machine load hits both alike.
 *
 *   npm run bench -- statements [n=5000]
 *
 * Writes bench/results/statements-*.json.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { LINK_LOOKUP_JOIN_SQL, LINK_LOOKUP_SQL } from "../src/engine/sql/link-lookup.js";
import { PRIOR_OUTCOME_SQL } from "../src/engine/sql/applied.js";
import { STEP_READ_SQL } from "../src/engine/sql/step-read.js";
import { dropDatabase, freshDatabase } from "../test/helpers/db.js";
import { cpuMs, loadNote, machineCpu } from "./lib/proc.js";
import { fmt, writeResult } from "./lib/report.js";

const n = Number(process.argv[2] ?? 5000);
const BLOCK = 500;

const STATEMENTS: { name: string; text: string; values: () => unknown[] }[] = [
  { name: "link_lookup_join", text: LINK_LOOKUP_JOIN_SQL, values: () => ["0".repeat(64)] },
  { name: "link_lookup", text: LINK_LOOKUP_SQL, values: () => ["0".repeat(64)] },
  { name: "prior_outcome", text: PRIOR_OUTCOME_SQL, values: () => [randomUUID()] },
  { name: "step_read", text: STEP_READ_SQL, values: () => [randomUUID(), randomUUID(), null] },
];

async function main() {
  const load0 = machineCpu();
  const url = await freshDatabase("bstatements");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const results: Record<string, { named: { backendUs: number; wallUs: number }; unnamed: { backendUs: number; wallUs: number } }> = {};
  try {
    const backend = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    for (const s of STATEMENTS) {
      const total = { named: { cpu: 0, wall: 0, calls: 0 }, unnamed: { cpu: 0, wall: 0, calls: 0 } };
      const run = async (kind: "named" | "unnamed", calls: number, measure: boolean) => {
        const c0 = cpuMs(backend)!;
        const t0 = performance.now();
        for (let i = 0; i < calls; i++) {
          await client.query(kind === "named" ? { name: `bench_${s.name}`, text: s.text, values: s.values() } : { text: s.text, values: s.values() });
        }
        if (!measure) return;
        total[kind].cpu += cpuMs(backend)! - c0;
        total[kind].wall += performance.now() - t0;
        total[kind].calls += calls;
      };
      await run("named", BLOCK, false);
      await run("unnamed", BLOCK, false);
      for (let done = 0; done < n; done += BLOCK) {
        await run("named", BLOCK, true);
        await run("unnamed", BLOCK, true);
      }
      const per = (k: "named" | "unnamed") => ({ backendUs: (1000 * total[k].cpu) / total[k].calls, wallUs: (1000 * total[k].wall) / total[k].calls });
      results[s.name] = { named: per("named"), unnamed: per("unnamed") };
      const r = results[s.name]!;
      process.stdout.write(
        `${s.name}: named ${fmt(r.named.backendUs)} µs backend CPU, ${fmt(r.named.wallUs)} µs wall · unnamed ${fmt(r.unnamed.backendUs)} µs backend CPU, ${fmt(r.unnamed.wallUs)} µs wall\n`,
      );
    }
  } finally {
    await client.end();
    await dropDatabase(url);
  }
  const note = loadNote(load0);
  process.stdout.write(`${note}\n`);
  process.stdout.write(`wrote ${writeResult("statements", { note, n, results })}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
