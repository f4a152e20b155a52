/**
 * Fuzz suite: a hostile callee (issue 40 item 6; `npm run test:fuzz`). One real slotflow cluster
 * (a web process, two workers, a sweeper; SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1 so the endpoint may
 * be on loopback) calls a raw TCP callee that answers each request as its run's plan says: a huge
 * body (1.5 MiB, with and without Content-Length), JSON nested 10,000 deep, an answer later than
 * the call's `Timeout`, non-JSON, text that is not UTF-8, a JSON array, a 302/307 redirect to
 * 169.254.169.254 or to a trap server on another loopback port, a `Content-Length` that declares
 * more than is sent (the connection then left open) or less, a body cut short, a connection reset
 * before or after the headers, an endless chunked stream — or a valid answer.
 *
 * Plans (the mode of attempt 1, 2, 3 of one run; later attempts get a valid answer) are generated
 * by fast-check with a fixed seed (`FUZZ_SEED`, default 20261122), every mode at least once;
 * SLOTFLOW_FUZZ_CALL_RUNS runs (default 150) go at once, after four warm-up runs. Checks:
 *   - every run ends: routed on a valid answer, or on `credit.failed`;
 *   - every attempt's history entry names the cause of the mode it met (`error`; a huge body may
 *     instead outlast the 5 s Timeout on a loaded machine), every attempt
 *     but the last was a retried kind, a `Failed` run's `credit.error` is its last attempt's error,
 *     and a routed run's last attempt met a valid answer;
 *   - no redirect was followed (the trap server saw nothing);
 *   - no slotflow process died or printed a process warning or a fatal line;
 *   - afterwards a valid answer still routes a new run.
 */
import test from "ava";
import fc from "fast-check";
import { createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import { createServer } from "node:http";
import { pool, until } from "../helpers/burst.js";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.SLOTFLOW_FUZZ_CALL_RUNS || 150);
const MIB = 1024 * 1024;

const SOURCE = `workflow Hostile(tag: string, c: Case)
entity Case {
  note: string?
}
event Scored(score: int, band: string)
initial state Checking {
  call http "hostile" as credit returns Scored {
    Method: POST
    Input { tag: tag }
    Timeout: 5s
    Attempts: 3
  }
  on credit(score, band) {
    c.note = band
    default -> Routed
  }
  on credit.failed {
    c.note = credit.error
    default -> Failed
  }
}
terminal state Routed
terminal state Failed
`;

/** Each mode: what the callee does, and the attempt errors it may cause (null: a valid answer). */
const MODES = {
  valid: { retried: false, error: null },
  // a bulk transfer may also outlast the Timeout on a loaded machine (then it is retried)
  huge: { retried: false, error: /^(invalid-response: larger than 1048576 bytes|timeout after 5s)$/ },
  hugeChunked: { retried: false, error: /^(invalid-response: larger than 1048576 bytes|timeout after 5s)$/ },
  deep: { retried: false, error: /^invalid-response: nested deeper than \d+ levels$/ },
  slow: { retried: true, error: /^timeout after 5s$/ },
  nonJson: { retried: false, error: /^invalid-response: not JSON$/ },
  notUtf8: { retried: false, error: /^invalid-response: not UTF-8 text$/ },
  array: { retried: false, error: /^invalid-response: not a JSON object$/ },
  redirectMetadata: { retried: false, error: /^HTTP 302 from hostile \(redirects are not followed\)$/ },
  redirectLoopback: { retried: false, error: /^HTTP 307 from hostile \(redirects are not followed\)$/ },
  lengthMore: { retried: true, error: /^(timeout after 5s|connection error: \w+( \w+)?)$/ },
  lengthLess: { retried: false, error: /^(invalid-response: not JSON|connection error: \w+( \w+)?)$/ },
  truncated: { retried: true, error: /^connection error: \w+( \w+)?$/ },
  resetEarly: { retried: true, error: /^connection error: \w+( \w+)?$/ },
  resetLate: { retried: true, error: /^connection error: \w+( \w+)?$/ },
  endless: { retried: false, error: /^(invalid-response: larger than 1048576 bytes|timeout after 5s)$/ },
} as const;
type Mode = keyof typeof MODES;
const MODE_NAMES = Object.keys(MODES) as Mode[];

const plans = new Map<string, Mode[]>();
const served = new Map<string, Mode[]>();
const sockets = new Set<Socket>();
let trapHits = 0;
const trap = createServer((_req, res) => {
  trapHits++;
  res.end("{}");
});

const VALID = JSON.stringify({ score: 720, band: "A" });
const head = (status: string, headers: Record<string, string | number>) =>
  `HTTP/1.1 ${status}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}connection: close\r\n\r\n`;

/** Serves one request on `s` as `mode` says. */
function answer(s: Socket, mode: Mode, trapPort: number): void {
  const full = (status: string, body: Buffer | string, type = "application/json") => {
    const b = typeof body === "string" ? Buffer.from(body) : body;
    s.write(head(status, { "content-type": type, "content-length": b.length }));
    s.end(b);
  };
  switch (mode) {
    case "valid":
      return full("200 OK", VALID);
    case "huge":
      return full("200 OK", JSON.stringify({ score: 1, band: "x".repeat(1.5 * MIB) }));
    case "hugeChunked": {
      s.write(head("200 OK", { "content-type": "application/json", "transfer-encoding": "chunked" }));
      const body = Buffer.from(JSON.stringify({ score: 1, band: "y".repeat(1.5 * MIB) }));
      for (let i = 0; i < body.length; i += 64 * 1024) {
        const part = body.subarray(i, i + 64 * 1024);
        s.write(`${part.length.toString(16)}\r\n`);
        s.write(part);
        s.write("\r\n");
      }
      s.end("0\r\n\r\n");
      return;
    }
    case "deep":
      return full("200 OK", `{"score":1,"band":"d","x":${"[".repeat(10_000)}${"]".repeat(10_000)}}`);
    case "slow":
      setTimeout(() => !s.destroyed && full("200 OK", VALID), 7000);
      return;
    case "nonJson":
      return full("200 OK", "<html><body>Service Unavailable</body></html>", "text/html");
    case "notUtf8":
      return full("200 OK", Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    case "array":
      return full("200 OK", "[1,2,3]");
    case "redirectMetadata":
      s.write(head("302 Found", { location: "http://169.254.169.254/latest/meta-data/iam/security-credentials/", "content-length": 0 }));
      s.end();
      return;
    case "redirectLoopback":
      s.write(head("307 Temporary Redirect", { location: `http://127.0.0.1:${trapPort}/steal`, "content-length": 0 }));
      s.end();
      return;
    case "lengthMore":
      // declares more than it sends, and keeps the connection open
      s.write(head("200 OK", { "content-type": "application/json", "content-length": VALID.length + 5000 }));
      s.write(VALID);
      return;
    case "lengthLess":
      // declares less than it sends
      s.write(head("200 OK", { "content-type": "application/json", "content-length": 10 }));
      s.end(VALID + VALID);
      return;
    case "truncated":
      s.write(head("200 OK", { "content-type": "application/json", "content-length": VALID.length }));
      s.write(VALID.slice(0, 8));
      s.destroy();
      return;
    case "resetEarly":
      s.resetAndDestroy();
      return;
    case "resetLate":
      s.write(head("200 OK", { "content-type": "application/json", "content-length": VALID.length }));
      setTimeout(() => !s.destroyed && s.resetAndDestroy(), 20);
      return;
    case "endless": {
      s.write(head("200 OK", { "content-type": "application/json", "transfer-encoding": "chunked" }));
      s.write(`1\r\n[\r\n`);
      const part = Buffer.alloc(32 * 1024, 0x20);
      const tick = setInterval(() => {
        if (s.destroyed || !s.writable) return clearInterval(tick);
        s.write(`${part.length.toString(16)}\r\n`);
        s.write(part);
        s.write("\r\n");
      }, 2);
      s.on("close", () => clearInterval(tick));
      return;
    }
  }
}

let trapPort = 0;
/** A raw HTTP/1.1 callee: reads one request (headers, then Content-Length bytes), answers it as its run's plan says. */
const callee = createTcpServer((s) => {
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
  s.on("error", () => undefined);
  let buf = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) return;
    const headers = buf.subarray(0, end).toString("latin1");
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(headers)?.[1] ?? 0);
    if (buf.length < end + 4 + length) return;
    s.off("data", onData);
    let tag = "?";
    try {
      tag = String((JSON.parse(buf.subarray(end + 4, end + 4 + length).toString("utf8")) as { tag?: unknown }).tag);
    } catch {
      tag = "?";
    }
    const list = served.get(tag) ?? [];
    served.set(tag, list);
    const mode: Mode = plans.get(tag)?.[list.length] ?? "valid";
    list.push(mode);
    answer(s, mode, trapPort);
  };
  s.on("data", onData);
});

let cluster: Cluster;
const api = (method: string, path: string, json?: unknown) => request(cluster.baseUrl, method, path, { token: ADMIN_TOKEN, json });

test.before(async () => {
  await new Promise<void>((r) => callee.listen(0, "127.0.0.1", () => r()));
  await new Promise<void>((r) => trap.listen(0, "127.0.0.1", () => r()));
  trapPort = (trap.address() as AddressInfo).port;
  cluster = await startCluster("hostile", { roles: ["web", "worker", "worker", "sweeper"], env: { SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1", SLOTFLOW_RATE_LIMIT_PER_MINUTE: "1000000" } });
  const put = await api("PUT", "/api/endpoints/hostile", { kind: "http", url: `http://127.0.0.1:${(callee.address() as AddressInfo).port}/score` });
  if (put.status !== 201) throw new Error(put.text);
  const deployed = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: SOURCE });
  if (deployed.status !== 201) throw new Error(deployed.text);
});

test.after.always(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => callee.close(() => r()));
  await new Promise<void>((r) => trap.close(() => r()));
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

type View = {
  status: string;
  state: string;
  entities: { c: { note: string | null } };
  history: { kind: string; data: { alias?: string; attempt?: number; status?: number | null; error?: string | null } }[];
};

async function runAll(tags: string[]): Promise<Map<string, View>> {
  const ids = await pool(tags, 8, async (tag) => {
    const res = await api("POST", "/api/workflows/Hostile/runs", { tag, c: {} });
    if (res.status !== 201) throw new Error(`start answered ${res.status}: ${res.text}`);
    return res.body.id as string;
  });
  const views = new Map<string, View>();
  await until("every run ended", 180_000, async () => {
    await pool(tags.filter((tag) => views.get(tag)?.status !== "finished"), 8, async (tag) => {
      const r = await api("GET", `/api/runs/${ids[tags.indexOf(tag)]}`);
      if (r.status === 200) views.set(tag, r.body as View);
    });
    return tags.every((tag) => views.get(tag)?.status === "finished");
  }, 500).catch(() => undefined);
  return views;
}

/** What is wrong with one run's ending, given the modes the callee served it. */
function judge(tag: string, v: View | undefined): string[] {
  const modes = served.get(tag) ?? [];
  if (!v || v.status !== "finished") return [`${tag}: not ended (${v?.status} in ${v?.state}), served ${modes.join(",")}`];
  const out: string[] = [];
  const attempts = v.history.filter((h) => h.kind === "call-attempt").map((h) => h.data);
  if (attempts.length !== modes.length || attempts.length < 1 || attempts.length > 3) out.push(`${attempts.length} attempts, callee served ${modes.join(",")}`);
  attempts.forEach((a, i) => {
    const mode = modes[i];
    if (!mode) return;
    const want = MODES[mode].error;
    if (want === null ? a.error !== null : !(typeof a.error === "string" && want.test(a.error))) out.push(`attempt ${i + 1} (${mode}): error ${JSON.stringify(a.error)}`);
    if (i < attempts.length - 1 && !(MODES[mode].retried || /^(timeout|connection error)/.test(a.error ?? ""))) out.push(`attempt ${i + 1} (${mode}) was retried`);
  });
  const last = attempts[attempts.length - 1];
  if (v.state === "Routed") {
    if (last?.error !== null || v.entities.c.note !== "A") out.push(`routed, but its last attempt's error is ${JSON.stringify(last?.error)}, note ${v.entities.c.note}`);
  } else if (v.state === "Failed") {
    if (!last?.error || !v.entities.c.note?.startsWith(last.error)) out.push(`failed with credit.error ${JSON.stringify(v.entities.c.note)}, its last attempt's error ${JSON.stringify(last?.error)}`);
  } else out.push(`ended in ${v.state}`);
  if (v.history.filter((h) => h.kind === "call-answered" || h.kind === "call-failed").length !== 1) out.push("not exactly one call outcome");
  return out.map((o) => `${tag} [${modes.join(",")}]: ${o}`);
}

test.serial("a hostile callee (huge, deep, slow, non-JSON, redirecting, lying Content-Length, reset, endless) never breaks a run or a worker", async (t) => {
  t.timeout(300_000);
  const generated = fc.sample(fc.array(fc.constantFrom(...MODE_NAMES), { minLength: 1, maxLength: 3 }), { seed: SEED, numRuns: RUNS });
  // every mode at least once as a first attempt, whatever the seed
  MODE_NAMES.forEach((m, i) => (generated[i % generated.length] = [m, ...generated[i % generated.length]!.slice(1)]));
  // warm up both workers (a cold process's first request can be slow on a loaded machine)
  await runAll(Array.from({ length: 4 }, (_, i) => `h${SEED}-warm-${i}`));
  const tags = generated.map((plan, i) => {
    const tag = `h${SEED}-${i}`;
    plans.set(tag, plan);
    return tag;
  });
  const views = await runAll(tags);
  const problems = tags.flatMap((tag) => judge(tag, views.get(tag)));
  const states = [...views.values()].reduce<Record<string, number>>((m, v) => ((m[v.state] = (m[v.state] ?? 0) + 1), m), {});
  const causes = new Map<string, Set<string>>();
  for (const tag of tags)
    (views.get(tag)?.history ?? []).filter((h) => h.kind === "call-attempt").forEach((h, i) => {
      const mode = served.get(tag)?.[i] ?? "?";
      causes.set(mode, (causes.get(mode) ?? new Set()).add(String(h.data.error)));
    });
  t.log([...causes].map(([m, e]) => `${m}: ${[...e].join(" / ")}`).join("\n"));
  t.log(`error log lines: ${cluster.output().filter((l) => /"level":50/.test(l)).length}`);
  t.log(`runs ${tags.length} | requests ${[...served.values()].reduce((n, l) => n + l.length, 0)} | ${JSON.stringify(states)}`);
  t.deepEqual(problems, [], "every run ended on its answer or on credit.failed naming the cause");
  t.is(trapHits, 0, "no redirect was followed");
  t.true((states.Routed ?? 0) > 0 && (states.Failed ?? 0) > 0);

  // afterwards a valid answer still routes a run
  const after = await runAll([`h${SEED}-after`]);
  t.deepEqual(judge(`h${SEED}-after`, after.get(`h${SEED}-after`)), []);
  t.is(after.get(`h${SEED}-after`)?.state, "Routed");

  const died = cluster.processes.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
  t.deepEqual(died.map((p) => `${p.role} exited ${p.child.exitCode ?? p.child.signalCode}`), [], "no process died");
  t.deepEqual(cluster.processes.flatMap((p) => p.warnings), [], "no process warning");
  t.deepEqual(cluster.output().filter((l) => /"level":60|uncaught exception/.test(l)), [], "no fatal log line");
});
