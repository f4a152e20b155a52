/**
 * `slotflow runs` prints `GET /api/runs` as a table (issue 23): one row per run, newest first,
 *
 *   ID                                    WORKFLOW        V  STATE   STATUS   CREATED               SINCE                 WAITING ON
 *   7d0c…                                 VendorApproval  1  Review  running  2026-11-25 10:00:00Z  2026-11-25 10:00:01Z  decision (open, link live, due 2026-12-02 10:00:01Z)
 *
 * `SINCE` answers "since when is this run waiting?" (issue 23, "Done when"): the earliest `openedAt`
 * of the open slots it waits on — only those of the alias given with `--waiting ALIAS`, so
 * `slotflow runs --waiting decision` says since when each run waits on `decision` — or `-` when it
 * waits on no open slot (a slot still `waiting` on `After` has not opened: its `openedAt` is null).
 * `WAITING ON` lists each open or waiting slot: its alias (`alias[element]` when fanned out), its
 * status, its link's status (never a token) and its deadline. Times are UTC. When there are more
 * runs, the last line says how to see the next page (`--cursor …`).
 */
interface WaitingJson {
  alias: string;
  element: number | null;
  status: string;
  openedAt: string | null;
  deadline: string | null;
  link: string;
}

interface RunJson {
  id: string;
  workflow: string;
  version: number;
  state: string;
  status: string;
  createdAt: string;
  waiting: WaitingJson[];
}

const utc = (iso: string) => iso.replace("T", " ").replace(/\.\d+Z$/, "Z");

function waitingCell(w: WaitingJson[]): string {
  if (!w.length) return "-";
  return w
    .map((s) => `${s.alias}${s.element === null ? "" : `[${s.element}]`} (${s.status}, link ${s.link}${s.deadline ? `, due ${utc(s.deadline)}` : ""})`)
    .join("; ");
}

/**
 * The `SINCE` cell (issue 23): the earliest `openedAt` among `w` (of alias `alias` when given), in
 * UTC, or `-` when none of them has opened.
 */
export function sinceCell(w: WaitingJson[], alias?: string): string {
  const opened = w
    .filter((s) => s.openedAt !== null && (alias === undefined || s.alias === alias))
    .map((s) => s.openedAt as string)
    .sort((a, b) => Date.parse(a) - Date.parse(b));
  return opened.length ? utc(opened[0]) : "-";
}

/**
 * The table's lines for an answer `{runs, nextCursor}`; `waiting` is the `--waiting` filter's alias
 * (it narrows `SINCE` to that alias's slots).
 */
export function runsTable(body: { runs: RunJson[]; nextCursor: string | null }, opts: { waiting?: string } = {}): string[] {
  const header = ["ID", "WORKFLOW", "V", "STATE", "STATUS", "CREATED", "SINCE", "WAITING ON"];
  const rows = body.runs.map((r) => [r.id, r.workflow, String(r.version), r.state, r.status, utc(r.createdAt), sinceCell(r.waiting, opts.waiting), waitingCell(r.waiting)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd();
  const out = [line(header), ...rows.map(line)];
  if (!body.runs.length) out.push("(no runs match)");
  if (body.nextCursor) out.push(`more runs: add --cursor ${body.nextCursor}`);
  return out;
}
