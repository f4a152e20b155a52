/**
 * The SQL ceiling's pgbench script: the exact statements a deposit's apply sends (BEGIN, the
 * step read, the step write, COMMIT), captured from the engine applying one real deposit, with
 * the run's ids replaced by pgbench's `:n` so every transaction applies the same deposit to a
 * random one of `SCRIPT_RUNS` seeded runs (ids `…-<n>` with n of 12 digits), and a fresh command id.
 */
import { randomUUID } from "node:crypto";
import { createDb } from "../../src/db.js";
import { applyCommand } from "../../src/engine/commands/apply.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import type { BenchCluster } from "./cluster.js";

export const SCRIPT_RUNS = 20_000;
const FIRST = 100_000_000_000; // 12 digits, so ":n" needs no padding
let captured: { read: string; write: string } | null = null;

/** Seeds SCRIPT_RUNS VendorApproval runs and captures one deposit's statements. */
export async function seedForScript(bench: BenchCluster): Promise<void> {
  await bench.seedRuns("VendorApproval", { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 }, SCRIPT_RUNS, "pgbench", { from: FIRST, returnUrls: false });
  const db = createDb(bench.cluster.databaseUrl, 2);
  const tail = String(FIRST);
  const runId = `aaaaaaaa-0000-4000-8000-${tail}`;
  const linkId = `dddddddd-0000-4000-8000-${tail}`;
  const commandId = randomUUID();
  let write = "";
  const recording = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== "$transaction") return Reflect.get(target, prop, receiver);
      return (fn: (tx: unknown) => Promise<unknown>, opts: unknown) =>
        target.$transaction(
          (tx) =>
            fn(
              new Proxy(tx, {
                get(t, p, r) {
                  if (p !== "$executeRawUnsafe") return Reflect.get(t, p, r);
                  return (text: string, json: string) => {
                    write = `${text.replace(/\s*\n\s*/g, " ")};`.replace("$1::jsonb", `'${json.replaceAll("'", "''")}'::jsonb`);
                    return t.$executeRawUnsafe(text, json);
                  };
                },
              }),
            ),
          opts as never,
        );
    },
  });
  const applied = await applyCommand({ db: recording as typeof db, sealer: new Sealer(bench.cluster.env.SLOTFLOW_SEAL_KEY!), baseUrl: bench.cluster.baseUrl }, { kind: "deposit", commandId, runId, linkId, args: { ok: true, note: "bench" } });
  await db.$disconnect();
  if (!applied.outcome.ok || !write) throw new Error(`could not capture a deposit's write: ${JSON.stringify(applied.outcome)}`);
  captured = {
    read: `SELECT slotflow_step_read('aaaaaaaa-0000-4000-8000-:n'::uuid, 'pgbench-:client_id-:r', 'dddddddd-0000-4000-8000-:n'::uuid);`,
    write: write.replaceAll(`-${tail}`, "-:n").replaceAll(commandId, "pgbench-:client_id-:r"),
  };
}

/** The pgbench script (after `seedForScript`). */
export function applyScript(): string {
  if (!captured) throw new Error("seedForScript first");
  return [
    `\\set n random(${FIRST}, ${FIRST + SCRIPT_RUNS - 1})`,
    `\\set r random(1, 1000000000000)`,
    "BEGIN;",
    captured.read,
    captured.write,
    "COMMIT;",
    "",
  ].join("\n");
}
