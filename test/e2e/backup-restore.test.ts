/**
 * Backup and restore (issue 17 §6; docs/deployment.md "Backup and restore"): a `pg_dump` of a live
 * installation restored into a fresh database, served with the same seal key ring, answers a link
 * minted before the dump. What the restore does to what happened after the dump is the documented
 * behaviour: a deposit applied after the dump is undone (its link is live again and answers a new
 * deposit), and a link minted after the dump does not exist (404).
 */
import test from "ava";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { deployFixture, showRun } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

const run = promisify(execFile);

async function startFaultsRun(c: Cluster, title: string): Promise<{ id: string; url: string }> {
  const res = await request(c.baseUrl, "POST", "/api/workflows/Faults/runs", { token: ADMIN_TOKEN, json: { job: { title, contact: `${title}@example.test`, handled: 0 } } });
  if (res.status !== 201) throw new Error(`start answered ${res.status}: ${res.text}`);
  const mail = await waitForEmail(() => c.output(), `answer ${title}`);
  return { id: res.body.id as string, url: linkIn(mail) };
}

const deposit = (c: Cluster, url: string, note: string) => request(c.baseUrl, "POST", new URL(url).pathname, { json: { note } });

test("a pg_dump restored into a fresh database answers a link minted before the dump", async (t) => {
  t.timeout(240_000);
  const dir = mkdtempSync(join(tmpdir(), "slotflow-backup-"));
  let original: Cluster | undefined;
  let restored: Cluster | undefined;
  let restoredUrl: string | undefined;
  try {
    original = await startCluster("backup");
    await deployFixture(original.baseUrl, "faults.flow");
    const before = await startFaultsRun(original, `before-${randomBytes(4).toString("hex")}`);

    // The backup: a custom-format dump of the whole database (migrations table included).
    const dump = join(dir, "slotflow.dump");
    await run("pg_dump", ["--format=custom", "--no-owner", "--file", dump, original.databaseUrl]);

    // After the dump: the link is answered, and another run mints a link.
    t.is((await deposit(original, before.url, "after the dump")).status, 200);
    const after = await startFaultsRun(original, `after-${randomBytes(4).toString("hex")}`);
    await original.stop();

    // The restore, into a fresh database, served with the same seal key ring (startCluster's).
    const name = `${new URL(original.databaseUrl).pathname.slice(1)}_restored`;
    restoredUrl = new URL(`/${name}`, original.databaseUrl).toString();
    await sql(new URL("/postgres", original.databaseUrl).toString(), `CREATE DATABASE "${name}"`);
    await run("pg_restore", ["--no-owner", "--exit-on-error", "--dbname", restoredUrl, dump]);
    restored = await startCluster("restored", { roles: [], env: { DATABASE_URL: restoredUrl } });
    await restored.spawn("serve");

    // The link minted before the dump: live again (the deposit after the dump is undone), and answered.
    const answered = await deposit(restored, before.url, "answered after the restore");
    t.is(answered.status, 200, answered.text);
    t.is(answered.body.status, "completed");
    const view = await showRun(restored.baseUrl, before.id);
    t.is(view.entities.job.handled, 1);
    t.is(view.entities.job.note, "answered after the restore");
    // A second deposit on it is refused: it was burned by the one above.
    t.is((await deposit(restored, before.url, "again")).status, 410);
    // The link minted after the dump does not exist in the restored database.
    t.is((await deposit(restored, after.url, "x")).status, 404);
  } finally {
    await original?.stop();
    await restored?.stop();
    if (original) await dropDatabase(original.databaseUrl).catch(() => undefined);
    if (restored) await dropDatabase(restored.databaseUrl).catch(() => undefined);
    if (restoredUrl) await dropDatabase(restoredUrl).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});
