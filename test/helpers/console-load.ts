/**
 * Traffic beside a heavy console page (issue 28 items 2–3; issue 39 item 4), shared by
 * test/e2e/console-bounds.test.ts (which asserts liveness: counts and order, never a millisecond
 * figure) and bench/console.ts (which prints the timings).
 *
 * `renderWhileServing` requests a console page and, until it has answered, keeps the server busy
 * with its other work: `/healthz` probes one after another (100 ms apart) and callback deposits,
 * one after another, through `links` (each link answers one deposit). It records, for each probe
 * and deposit, its answer, its wall time and whether it completed while the page was still being
 * rendered (before the page's answer was read) — the fact a blocked event loop would make false.
 * Deposits left when the page answers are still made (and recorded as after the page).
 */
import { linkIn, waitForEmail } from "./mail.js";
import { startRun, uniqueTitle } from "./callback.js";
import { ADMIN_TOKEN, request, type Cluster } from "./server.js";

/** A one-slot workflow whose runs mail one callback link each (the deposits beside the page). */
export const PING_FLOW = `workflow Ping(job: Job)

entity Job {
  title: string
  contact: string
}

event Pong(ok: bool)

initial state Waiting {
  subscribe Pong(ok) as pong
  enter {
    send email to job.contact { subject: "ping " + job.title, body: "Answer: " + pong.CallbackUrl() }
  }
  on pong(ok) -> Done
}

terminal state Done
`;

/** Deploys `text` (admin token); throws unless 201. */
export async function deployText(base: string, text: string): Promise<void> {
  const res = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text });
  if (res.status !== 201) throw new Error(`deploy answered ${res.status}: ${res.text}`);
}

/** Starts `n` Ping runs and returns their callback links (each answers one deposit). */
export async function pingLinks(cluster: Cluster, n: number): Promise<string[]> {
  const links: string[] = [];
  for (let i = 0; i < n; i++) {
    const title = uniqueTitle("bounds");
    await startRun(cluster.baseUrl, "Ping", { job: { title, contact: "x@example.test" } });
    links.push(linkIn(await waitForEmail(() => cluster.output(), `ping ${title}`)));
  }
  return links;
}

/** One probe or deposit made beside the page. */
export interface SideCall {
  /** HTTP status; 0 when the request failed. */
  status: number;
  text: string;
  /** Wall time of the call, ms (for the bench; the test asserts no figure). */
  ms: number;
  /** True when it completed before the page's answer had been read. */
  duringRender: boolean;
}

/** The page and what else was served meanwhile. */
export interface Rendered {
  status: number;
  text: string;
  /** The page's wall time, ms (for the bench). */
  ms: number;
  probes: SideCall[];
  deposits: SideCall[];
}

const timed = async (fn: () => Promise<{ status: number; text: string }>, rendering: () => boolean): Promise<SideCall> => {
  const t0 = performance.now();
  const r = await fn().catch((err: Error) => ({ status: 0, text: `no answer: ${err.message}` }));
  return { ...r, ms: performance.now() - t0, duringRender: rendering() };
};

/** Requests `path` with `headers` and serves probes and deposits beside it (see the module's comment). */
export async function renderWhileServing(base: string, path: string, headers: Record<string, string>, links: string[]): Promise<Rendered> {
  let rendering = true;
  const t0 = performance.now();
  const page = (async () => {
    try {
      const res = await fetch(new URL(path, base), { headers });
      return { status: res.status, text: await res.text() };
    } finally {
      rendering = false;
    }
  })();
  const probes: SideCall[] = [];
  const probing = (async () => {
    do {
      const p = await timed(async () => {
        const r = await fetch(new URL("/healthz", base));
        return { status: r.status, text: await r.text() };
      }, () => rendering);
      probes.push(p);
      if (p.status !== 200) break;
      if (rendering) await new Promise((r) => setTimeout(r, 100)); // pacing, not a bound
    } while (rendering);
  })();
  const deposits: SideCall[] = [];
  const depositing = (async () => {
    for (const url of links) {
      deposits.push(
        await timed(async () => {
          const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ok: true }) });
          return { status: r.status, text: await r.text() };
        }, () => rendering),
      );
    }
  })();
  const answered = await page;
  const ms = performance.now() - t0;
  await Promise.all([probing, depositing]);
  return { ...answered, ms, probes, deposits };
}
