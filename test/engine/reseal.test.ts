/**
 * Keys that can change (issue 9 §6): SLOTFLOW_SEAL_KEY is a key ring (comma-separated, newest
 * first); `slotflow reseal` re-seals every stored value under the newest key; a link keeps working
 * across a rotation because only its hash is stored.
 *
 * Real PostgreSQL; the values are written by the testing kit under the first key, and `slotflow
 * reseal` runs as the operator would run it (a child process).
 */
import test from "ava";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createDb } from "../../src/db.js";
import { resealAll } from "../../src/engine/sealing/reseal.js";
import { Workflow } from "../../src/testing/index.js";
import { carriesLink, isSealed, Sealer, type Sealed } from "../../src/engine/sealing/seal.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";
import { ROOT } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

process.env.SLOTFLOW_SEAL_KEY = "old-key";
useKitDatabase(test, "reseal");

/** Every sealed value stored in any column that may hold one. */
async function storedSealed(): Promise<Sealed[]> {
  const rows = await sql<{ v: string }>(
    process.env.DATABASE_URL!,
    `SELECT input::text AS v FROM runs
     UNION ALL SELECT data::text FROM entity_rows
     UNION ALL SELECT element_value::text FROM slots WHERE element_value IS NOT NULL
     UNION ALL SELECT args::text FROM slots WHERE args IS NOT NULL
     UNION ALL SELECT data::text FROM history
     UNION ALL SELECT "to" FROM outbox
     UNION ALL SELECT subject FROM outbox
     UNION ALL SELECT body FROM outbox WHERE body IS NOT NULL`,
  );
  const found: Sealed[] = [];
  const walk = (v: unknown): void => {
    if (isSealed(v)) found.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  for (const row of rows) {
    try {
      walk(JSON.parse(row.v));
    } catch {
      // plain text: nothing sealed
    }
  }
  return found;
}

function reseal(sealKey: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...cliEntry(), "reseal"],
      { cwd: ROOT, env: { ...process.env, SLOTFLOW_SEAL_KEY: sealKey } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const SUBJECT_FLOW = `workflow LinkInSubject(job: Job)

entity Job {
  title: string
}

event Ok()

initial state Open {
  subscribe Ok() as ok

  enter {
    send email to "ops@example.test" { subject: "Answer at " + ok.CallbackUrl(), body: "The link is in the subject." }
  }
}

terminal state Done
`;

const texts = (values: Sealed[], sealer: Sealer) => values.map((v) => sealer.unseal(v)).sort();

test.serial("reseal moves every stored value to the newest key; the ring opens both meanwhile; a link outlives its key", async (t) => {
  const wf = await Workflow.deploy("test/fixtures/callback-lifetime.flow");
  const run = await wf.start({ job: { title: "rotate", contact: "a@example.test", events: 0 } });
  const replyUrl = String(run.entities.job.replyUrl);
  // A link in a mail's subject: outbox.subject is sealed too.
  const subjectWf = await Workflow.deploy(SUBJECT_FLOW);
  const withSubject = await subjectWf.start({ job: { title: "s" } });
  t.true(carriesLink((await withSubject.outbox())[0].subject));
  const before = await storedSealed();
  t.true(before.length >= 7, `sealed values found: ${before.length}`); // the row's two URLs, five mails, one subject
  const plain = texts(before, new Sealer("old-key"));
  t.throws(() => new Sealer("new-key").unseal(before[0]));

  // A ring opens what any of its keys sealed, and seals with the first.
  const ring = new Sealer("new-key, old-key");
  t.deepEqual(texts(before, ring), plain);
  t.notThrows(() => new Sealer("new-key").unseal(ring.seal("x")));

  const first = await reseal("new-key,old-key");
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout, new RegExp(`${before.length} values re-sealed under the newest key, 0 already under it, 0 unreadable`));
  const after = await storedSealed();
  t.is(after.length, before.length);
  t.deepEqual(texts(after, new Sealer("new-key")), plain, "every value opens with the new key alone, unchanged");

  // Again (in process, as the command does): nothing left to move.
  const db = createDb(process.env.DATABASE_URL!, 2);
  try {
    const again = await resealAll(db, new Sealer("new-key,old-key"));
    t.like(again, { resealed: 0, current: before.length, unreadable: 0 });
  } finally {
    await db.$disconnect();
  }

  // The old key can now leave the ring: the link minted under it still works.
  await Workflow.disconnect();
  process.env.SLOTFLOW_SEAL_KEY = "new-key";
  t.like(await Workflow.Redeem(replyUrl, { text: "after rotation" }), { status: "completed" });
  await run.refresh();
  t.is(run.entities.job.text, "after rotation");
});

/**
 * Issue 16 item 4: the failure also points the operator at the recovery section of
 * docs/operations.md (which names the development key), and that section exists.
 */
test.serial("reseal with a ring that opens nothing stored changes nothing, exits 1 and points at the recovery docs", async (t) => {
  const before = await sql(process.env.DATABASE_URL!, `SELECT (SELECT json_agg(data ORDER BY run_id, name) FROM entity_rows)::text AS e, (SELECT json_agg(body ORDER BY id) FROM outbox)::text AS o`);
  const r = await reseal("unrelated-key");
  t.is(r.code, 1);
  t.regex(r.stderr, /opened by no key of SLOTFLOW_SEAL_KEY/);
  t.regex(r.stderr, /dev-seal-key-change-me/, "names the development key, the usual missing one");
  const pointer = /docs\/operations\.md#([a-z0-9-]+)/.exec(r.stderr);
  t.truthy(pointer, r.stderr);
  const ops = readFileSync(join(ROOT, "docs", "operations.md"), "utf8");
  const slugs = [...ops.matchAll(/^#+ (.+)$/gm)].map((m) => m[1].toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-"));
  t.true(slugs.includes(pointer![1]), `docs/operations.md has a section #${pointer?.[1]}`);
  const section = ops.slice(ops.search(/^### When no key opens a sealed value/m));
  t.true(section.includes("dev-seal-key-change-me") && section.includes("slotflow reseal"), "the section explains the recovery with the development key");
  t.regex(r.stdout, /0 values re-sealed/);
  t.deepEqual(await sql(process.env.DATABASE_URL!, `SELECT (SELECT json_agg(data ORDER BY run_id, name) FROM entity_rows)::text AS e, (SELECT json_agg(body ORDER BY id) FROM outbox)::text AS o`), before);
});
