/**
 * Summarises a V8 `.cpuprofile` (node --cpu-prof) by where self time goes: by npm package (or
 * slotflow's own source folder, or Node's internals, or garbage collection / idle), as shares of
 * the busy samples.
 *
 *   node --import=tsx bench/lib/profile-summary.ts FILE.cpuprofile [top=12]
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount?: number;
  children?: number[];
}

export function bucketOf(node: Node): string {
  const { url, functionName } = node.callFrame;
  if (functionName === "(idle)") return "(idle)";
  if (functionName === "(garbage collector)") return "(garbage collector)";
  if (functionName === "(program)") return "(program: native, unattributed)";
  if (functionName === "(root)") return "(root)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const own = /\/(src\/[^/]+(?:\/[^/]+)?|workers)\//.exec(url);
  if (own) return `slotflow ${own[1]}`;
  if (url.startsWith("node:")) return "node internals";
  return url ? "other js" : "native / builtins";
}

export function summarise(file: string): { bucket: string; share: number }[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Native frames (JSON.parse, crypto, RegExp…) count for the nearest JavaScript caller's bucket.
  const bucketFor = new Map<number, string>();
  const resolve = (id: number): string => {
    const hit = bucketFor.get(id);
    if (hit) return hit;
    let b = bucketOf(byId.get(id)!);
    if (b === "native / builtins") {
      const up = parent.get(id);
      b = up === undefined ? b : resolve(up);
      if (b === "(program: native, unattributed)" || b === "(root)") b = "native / builtins";
    }
    bucketFor.set(id, b);
    return b;
  };
  const counts = new Map<string, number>();
  for (const id of profile.samples) {
    const b = resolve(id);
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  const busy = [...counts.entries()].filter(([b]) => b !== "(idle)").reduce((s, [, c]) => s + c, 0);
  return [...counts.entries()]
    .filter(([b]) => b !== "(idle)")
    .map(([bucket, c]) => ({ bucket, share: c / busy }))
    .sort((a, b) => b.share - a.share);
}

if (process.argv[1]?.endsWith("profile-summary.ts")) {
  const [file, top = "12"] = process.argv.slice(2);
  for (const { bucket, share } of summarise(file).slice(0, Number(top))) process.stdout.write(`${(share * 100).toFixed(1).padStart(5)}%  ${bucket}\n`);
}
