/**
 * `slotflow runs` prints `GET /api/runs` as a table (issue 23): one row per run, newest first,
 *
 *   ID                                    WORKFLOW        V  STATE      STATUS   CREATED               WAITING ON
 *   7d0c…                                 VendorApproval  1  Reviewing  running  2026-11-25 10:00:00Z  decision (open, link live, due 2026-11-26 10:00:00Z)
 *
 * `WAITING ON` lists each open or waiting slot: its alias (`alias[element]` when fanned out), its
 * status, its link's status (never a token) and its deadline. Times are UTC. When there are more
 * runs, the last line says how to see the next page (`--cursor …`).
 */
interface WaitingJson {
  alias: string;
  element: number | null;
  status: string;
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

/** The table's lines for an answer `{runs, nextCursor}`. */
export function runsTable(body: { runs: RunJson[]; nextCursor: string | null }): string[] {
  const header = ["ID", "WORKFLOW", "V", "STATE", "STATUS", "CREATED", "WAITING ON"];
  const rows = body.runs.map((r) => [r.id, r.workflow, String(r.version), r.state, r.status, utc(r.createdAt), waitingCell(r.waiting)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd();
  const out = [line(header), ...rows.map(line)];
  if (!body.runs.length) out.push("(no runs match)");
  if (body.nextCursor) out.push(`more runs: add --cursor ${body.nextCursor}`);
  return out;
}
