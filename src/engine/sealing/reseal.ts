/**
 * `slotflow reseal`: re-seals every stored sealed value under the newest key of the ring
 * (issue 9 §6 "Keys that can change"; seal.ts explains sealing).
 *
 * Where sealed values live: `runs.input`, `entity_rows.data`, `slots.element_value`, `slots.args`,
 * `history.data` (JSON columns, sealed strings anywhere inside) and `outbox.to`, `outbox.subject`,
 * `outbox.body` (each the JSON text of a string or of its sealed envelope: `Sealer.sealText`; the
 * body is dropped once delivered); `deliveries.payload` and `endpoints.url`, `.secret`,
 * `.previous_secret` (issue 18: the same text form, always sealed) and `.headers` (an http
 * endpoint's request headers, v0.5).
 *
 * One run at a time, in one transaction holding the run's row lock (`SELECT … FOR UPDATE`, as
 * every command does: apply.ts), so a step applied meanwhile is neither overwritten nor lost; the
 * run's outbox rows are locked too (the mailer takes them with SKIP LOCKED). Runs are
 * visited in id order, in pages. Safe to run while the service runs, and again: a value already
 * under the newest key is left as it is.
 *
 * Counts: `resealed` values moved to the newest key; `current` values already under it;
 * `unreadable` values no key of the ring opens — left untouched (put the key that sealed them back
 * in the ring and run again).
 */
import type { Db, Tx } from "../../db.js";
import { isSealed, type Sealer } from "./seal.js";
import { nextDepth } from "../../json/depth.js";

export interface ResealReport {
  runs: number;
  resealed: number;
  current: number;
  unreadable: number;
}

const PAGE = 100;

interface Walk {
  resealed: number;
  current: number;
  unreadable: number;
}

/** A deep copy of `value` with every sealed value under an older key sealed again under the newest. */
function resealValue(value: unknown, sealer: Sealer, counts: Walk, depth = 0): unknown {
  if (isSealed(value)) {
    const opened = sealer.open(value);
    if (!opened) {
      counts.unreadable++;
      return value;
    }
    if (opened.keyIndex === 0) {
      counts.current++;
      return value;
    }
    counts.resealed++;
    return sealer.seal(opened.text);
  }
  if (Array.isArray(value)) return value.map((v) => resealValue(v, sealer, counts, nextDepth(depth)));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = resealValue(v, sealer, counts, nextDepth(depth));
    return out;
  }
  return value;
}

/** Re-seals `value`; returns the new value when something changed, else undefined. */
function resealed(value: unknown, sealer: Sealer, report: ResealReport): unknown {
  if (value === null || value === undefined) return undefined;
  const counts: Walk = { resealed: 0, current: 0, unreadable: 0 };
  const out = resealValue(value, sealer, counts);
  report.resealed += counts.resealed;
  report.current += counts.current;
  report.unreadable += counts.unreadable;
  return counts.resealed > 0 ? out : undefined;
}

async function resealRun(tx: Tx, runId: string, sealer: Sealer, report: ResealReport): Promise<void> {
  const locked = await tx.$queryRaw<{ input: unknown }[]>`SELECT input FROM runs WHERE id = ${runId}::uuid FOR UPDATE`;
  if (locked.length === 0) return;
  report.runs++;
  const input = resealed(locked[0].input, sealer, report);
  if (input !== undefined) await tx.run.update({ where: { id: runId }, data: { input: input as object } });

  for (const row of await tx.entityRow.findMany({ where: { runId }, select: { name: true, data: true } })) {
    const data = resealed(row.data, sealer, report);
    if (data !== undefined) await tx.entityRow.update({ where: { runId_name: { runId, name: row.name } }, data: { data: data as object } });
  }
  for (const row of await tx.slot.findMany({ where: { runId }, select: { id: true, elementValue: true, args: true } })) {
    const elementValue = resealed(row.elementValue, sealer, report);
    const args = resealed(row.args, sealer, report);
    if (elementValue !== undefined || args !== undefined) {
      await tx.slot.update({
        where: { runId_id: { runId, id: row.id } },
        data: { ...(elementValue !== undefined ? { elementValue: elementValue as object } : {}), ...(args !== undefined ? { args: args as object } : {}) },
      });
    }
  }
  for (const row of await tx.historyEntry.findMany({ where: { runId }, select: { id: true, data: true } })) {
    const data = resealed(row.data, sealer, report);
    if (data !== undefined) await tx.historyEntry.update({ where: { runId_id: { runId, id: row.id } }, data: { data: data as object } });
  }
  const outbox = await tx.$queryRaw<{ id: string; to: string; subject: string; body: string | null }[]>`
    SELECT id, "to", subject, body FROM outbox WHERE run_id = ${runId}::uuid FOR UPDATE`;
  for (const row of outbox) {
    const data: { to?: string; subject?: string; body?: string } = {};
    for (const column of ["to", "subject", "body"] as const) {
      const stored = row[column];
      if (stored === null) continue;
      const text = resealedText(stored, sealer, report);
      if (text !== undefined) data[column] = text;
    }
    if (Object.keys(data).length > 0) await tx.outboxMessage.update({ where: { runId_id: { runId, id: row.id } }, data });
  }
  // deliveries of send webhook / send message (issue 18; the delivery worker takes them with SKIP LOCKED)
  const deliveries = await tx.$queryRaw<{ id: string; payload: string | null }[]>`
    SELECT id, payload FROM deliveries WHERE run_id = ${runId}::uuid AND payload IS NOT NULL FOR UPDATE`;
  for (const row of deliveries) {
    const payload = resealedText(row.payload!, sealer, report);
    if (payload !== undefined) await tx.delivery.update({ where: { runId_id: { runId, id: row.id } }, data: { payload } });
  }
}

/** Endpoints' sealed URL and secrets (issue 18), each row under its lock. */
async function resealEndpoints(db: Db, sealer: Sealer, report: ResealReport): Promise<void> {
  const names = await db.endpoint.findMany({ select: { name: true }, orderBy: { name: "asc" } });
  for (const { name } of names) {
    await db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ url: string; secret: string | null; previous_secret: string | null; headers: string | null }[]>`
        SELECT url, secret, previous_secret, headers FROM endpoints WHERE name = ${name} FOR UPDATE`;
      if (rows.length === 0) return;
      const [url, secret, previousSecret, headers] = [rows[0].url, rows[0].secret, rows[0].previous_secret, rows[0].headers].map((v) =>
        v === null ? undefined : resealedText(v, sealer, report),
      );
      if (url === undefined && secret === undefined && previousSecret === undefined && headers === undefined) return;
      await tx.endpoint.update({
        where: { name },
        data: { ...(url !== undefined ? { url } : {}), ...(secret !== undefined ? { secret } : {}), ...(previousSecret !== undefined ? { previousSecret } : {}), ...(headers !== undefined ? { headers } : {}) },
      });
    });
  }
}

/** A text column in `Sealer.sealText` form, re-sealed; undefined when nothing changed. */
function resealedText(stored: string, sealer: Sealer, report: ResealReport): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return undefined; // plain text: nothing sealed in it
  }
  const out = resealed(value, sealer, report);
  return out === undefined ? undefined : JSON.stringify(out);
}

/** Re-seals every stored value under the newest key of `sealer`'s ring; see the module header. */
export async function resealAll(db: Db, sealer: Sealer): Promise<ResealReport> {
  const report: ResealReport = { runs: 0, resealed: 0, current: 0, unreadable: 0 };
  let after: string | undefined;
  for (;;) {
    const page = await db.run.findMany({
      where: after ? { id: { gt: after } } : {},
      select: { id: true },
      orderBy: { id: "asc" },
      take: PAGE,
    });
    for (const { id } of page) {
      await db.$transaction((tx) => resealRun(tx, id, sealer, report), { maxWait: 10_000, timeout: 60_000 });
    }
    if (page.length < PAGE) {
      await resealEndpoints(db, sealer, report);
      return report;
    }
    after = page[page.length - 1].id;
  }
}
