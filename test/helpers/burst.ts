/**
 * A burst of deposits with a fault injected a third of the way in, and the checks that every
 * answer was a promise kept — the fault suite's method (test/faults/scenarios.ts, issue 8) as a
 * helper for the scenarios of issue 17 (test/faults/postgres-failover.ts):
 *
 *   1. `prepare` starts `deposits` runs of test/fixtures/faults.flow (one callback link each, read
 *      from the printed mail), retrying a start answered 503 under a new title;
 *   2. `runBurst` sends one deposit per link (its own Idempotency-Key), split across the web
 *      processes, plus control posts that must be refused (an invalid body to 1 link in 20); the
 *      fault starts when a third has been sent;
 *   3. once it is over and every web process is ready, every client that lost its answer, got 503
 *      or 202 retries with the same key and body until it gets a definite answer;
 *   4. checks: every 200/202 applied exactly once (the handler ran once, with that note), every
 *      retry learned "completed", every refusal changed nothing, no 5xx but 503, no process died
 *      that was not killed, no fatal log line; and the row of the suite's table.
 */
import type { ExecutionContext } from "ava";
import { randomBytes, randomUUID } from "node:crypto";
import { linkIn, parseEmails } from "./mail.js";
import { ADMIN_TOKEN, request, type Cluster, type ServerProcess } from "./server.js";

const CONTROL_EVERY = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BurstTarget {
  cluster: Cluster;
  /** Base URLs of the web processes deposits are spread over. */
  bases: string[];
  /** Processes the scenario killed on purpose (not counted as deaths). */
  killed: Set<ServerProcess>;
}

export type Answer = { status: number; code?: string; lost?: string };

export const BURST_HEADER = ["scenario", "deposits", "200", "202", "503", "lost", "retried", "→completed", "applied once", "refusals kept", "seconds"];

/** Renders rows (tab-separated cells) under BURST_HEADER. */
export function burstTable(lines: string[]): string {
  const cells = [BURST_HEADER, ...lines.map((l) => l.split("\t"))];
  const widths = BURST_HEADER.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join(" | ");
  return [fmt(BURST_HEADER), widths.map((w) => "-".repeat(w)).join("-|-"), ...cells.slice(1).map(fmt)].join("\n");
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** One POST to a link through `base`; a connection error or a 30 s silence is `lost`. */
export async function post(base: string, url: string, body: unknown, key?: string): Promise<Answer> {
  try {
    const res = await fetch(base + new URL(url).pathname, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let code: string | undefined;
    try {
      code = res.status === 200 || res.status === 202 ? JSON.parse(text).status : JSON.parse(text).code;
    } catch {
      code = undefined;
    }
    return { status: res.status, code };
  } catch (err) {
    return { status: 0, lost: err instanceof Error ? `${err.name}: ${(err.cause as Error | undefined)?.message ?? err.message}` : String(err) };
  }
}

/** Polls `fn` (errors count as "not yet") every `everyMs` until it gives a value, or throws after `ms` naming `what`. */
export async function until<T>(what: string, ms: number, fn: () => Promise<T | null | undefined | false>, everyMs = 250): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(everyMs);
  }
}

/** Waits until every web process answers /readyz 200, up to `ms`. */
export async function allReady(bases: string[], ms = 90_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const states = await Promise.all(bases.map((b) => request(b, "GET", "/readyz").then((r) => r.status, () => 0)));
    if (states.every((s) => s === 200)) return;
    if (Date.now() > until) throw new Error(`not ready after ${ms} ms: ${states.join(",")}`);
    await sleep(250);
  }
}

export interface Deposit {
  index: number;
  runId: string;
  url: string;
  control: boolean;
  key: string;
  body: { note: string };
  first?: Answer;
  /** When the first answer came (epoch ms). */
  firstAt?: number;
  final?: Answer;
  retries: number;
}

/** Starts `n` Faults runs and reads each one's link from the mail. */
export async function prepare(target: BurstTarget, label: string, n: number): Promise<Deposit[]> {
  const { bases, cluster } = target;
  const prefix = `${label}-${randomBytes(3).toString("hex")}`;
  const started = await pool(Array.from({ length: n }, (_, i) => i), 12, async (i) => {
    for (let attempt = 0; ; attempt++) {
      // A start answered 503 may still have been queued: the next attempt has its own title.
      const title = `${prefix}-${i}-a${attempt}`;
      const res = await request(bases[i % bases.length]!, "POST", "/api/workflows/Faults/runs", { token: ADMIN_TOKEN, json: { job: { title, contact: `${title}@example.test`, handled: 0 } } }).catch(() => null);
      if (res && (res.status === 201 || res.status === 202)) return { runId: res.body.id as string, title };
      if (res && res.status !== 503) throw new Error(`start answered ${res.status}: ${res.text}`);
      await sleep(500);
    }
  });
  const wanted = new Map(started.map((r, i) => [`answer ${r.title}`, i]));
  const urls: (string | undefined)[] = new Array(n);
  const until = Date.now() + 180_000;
  for (;;) {
    for (const mail of parseEmails(cluster.output())) {
      const i = wanted.get(mail.subject);
      if (i !== undefined) urls[i] = linkIn(mail);
    }
    const found = urls.filter(Boolean).length;
    if (found >= n) break;
    if (Date.now() > until) throw new Error(`only ${found} of ${n} links were mailed`);
    await sleep(500);
  }
  return started.map(({ runId }, i) => ({ index: i, runId, url: urls[i]!, control: i % CONTROL_EVERY === CONTROL_EVERY - 1, key: randomUUID(), body: { note: `n-${prefix}-${i}` }, retries: 0 }));
}

const needsRetry = (a: Answer | undefined) => !a || a.status === 0 || a.status === 503 || a.status === 202;

/**
 * The burst on `deposits` with `fault` started a third of the way in; then the retries and every
 * check (module header). Returns the table row. `paceDuringFaultMs` spreads the burst over a long
 * fault (a rolling upgrade): while the fault runs, each of the 16 senders waits that long between
 * deposits (or until it is over); then the rest go at full speed.
 */
export async function runBurst(t: ExecutionContext, target: BurstTarget, name: string, deposits: Deposit[], fault: () => Promise<void>, opts: { paceDuringFaultMs?: number } = {}): Promise<string> {
  const { bases, cluster, killed } = target;
  const via = (i: number) => bases[i % bases.length]!;
  const started = Date.now();
  let sent = 0;
  let faultDone: Promise<void> | null = null;
  let faultRunning = false;
  await pool(deposits, 16, async (d) => {
    if (++sent === Math.ceil(deposits.length / 3)) {
      faultRunning = true;
      faultDone = fault().finally(() => (faultRunning = false));
    }
    if (d.control) {
      d.first = await post(via(d.index), d.url, { wrong: true }, d.key);
      d.firstAt = Date.now();
      return;
    }
    d.first = await post(via(d.index), d.url, d.body, d.key);
    d.firstAt = Date.now();
    if (faultRunning && opts.paceDuringFaultMs) await Promise.race([sleep(opts.paceDuringFaultMs), faultDone]);
    else await sleep(20);
  });
  await faultDone;
  await allReady(bases);
  const unknown = await post(bases[0]!, deposits[0]!.url.replace(/[^/]{43}$/, "A".repeat(43)), { note: "x" });

  await pool(deposits.filter((d) => !d.control), 16, async (d) => {
    let answer = d.first;
    const until = Date.now() + 180_000;
    while (needsRetry(answer) && Date.now() < until) {
      if (d.retries > 0 || answer?.status !== 202) await sleep(answer?.status === 202 ? 250 : 500);
      d.retries++;
      answer = await post(via(d.index + d.retries), d.url, d.body, d.key);
    }
    d.final = answer;
  });
  for (const d of deposits.filter((x) => x.control)) d.final = await post(bases[0]!, d.url, { wrong: true }, d.key);

  const views = await pool(deposits, 16, async (d) => {
    const r = await request(via(d.index), "GET", `/api/runs/${d.runId}`, { token: ADMIN_TOKEN });
    return r.body as { entities: { job: { handled: number; note: string | null } }; slots: { alias: string; status: string }[]; history: { kind: string; data: { alias?: string } }[] };
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);

  const valid = deposits.filter((d) => !d.control);
  const firstAnswers = valid.map((d) => d.first!);
  const count = (pred: (a: Answer) => boolean) => firstAnswers.filter(pred).length;
  const once = (d: Deposit) => {
    const v = views[d.index]!;
    return v.entities.job.handled === 1 && v.entities.job.note === d.body.note && v.history.filter((h) => h.kind === "event" && h.data?.alias === "answer").length === 1;
  };
  const appliedOnce = valid.filter(once).length;
  const notOnce = valid.filter((d) => !once(d)).map((d) => ({ first: d.first, final: d.final, job: views[d.index]?.entities.job, slots: views[d.index]?.slots }));
  const controls = deposits.filter((d) => d.control);
  const kept = controls.filter((d) => {
    const v = views[d.index]!;
    return v.entities.job.handled === 0 && v.entities.job.note === null && v.slots.find((s) => s.alias === "answer")?.status === "open";
  }).length;
  const retried = valid.filter((d) => d.retries > 0);
  const learned = retried.filter((d) => d.final?.status === 200 && d.final.code === "completed").length;
  const row = [name, String(deposits.length), String(count((a) => a.status === 200)), String(count((a) => a.status === 202)), String(count((a) => a.status === 503)), String(count((a) => a.status === 0)), String(retried.length), String(learned), `${appliedOnce}/${valid.length}`, `${kept}/${controls.length}`, seconds].join("\t");
  t.log(`\n${burstTable([row])}`);

  const bad5xx = [...firstAnswers, ...valid.map((d) => d.final!), ...controls.map((d) => d.first!)].filter((a) => a.status >= 500 && a.status !== 503);
  const errorLines = () => cluster.processes.filter((p) => p.role === "web").flatMap((p) => p.output.filter((l) => /"level":50/.test(l))).slice(-5).join("\n");
  t.deepEqual(bad5xx, [], `no 5xx but 503; web errors:\n${bad5xx.length ? errorLines() : ""}`);
  t.deepEqual(notOnce, [], "every deposit applied exactly once, with its own body");
  t.deepEqual(
    valid.filter((d) => !(d.final?.status === 200 && d.final.code === "completed")).map((d) => ({ first: d.first, final: d.final, retries: d.retries })),
    [],
    "every client learned its outcome: completed",
  );
  t.is(kept, controls.length, "every refused deposit changed nothing");
  t.true(controls.every((d) => d.first?.status === 422 || d.first?.status === 503 || d.first?.status === 0), JSON.stringify(controls.map((d) => d.first)));
  t.true(controls.every((d) => d.final?.status === 422), JSON.stringify(controls.map((d) => d.final)));
  t.is(unknown.status, 404, "an unknown token is refused");
  const died = cluster.processes.filter((p) => !killed.has(p) && (p.child.exitCode !== null || p.child.signalCode !== null));
  t.deepEqual(died.map((p) => `${p.role} exited ${p.child.exitCode ?? p.child.signalCode}`), [], "no process died that was not killed");
  const fatal = cluster.output().filter((l) => /"level":60|uncaught exception/.test(l));
  t.deepEqual(fatal, [], "no fatal log line");
  return row;
}
