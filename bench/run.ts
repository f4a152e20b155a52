/**
 * `npm run bench -- <name> [args…]`: runs bench/<name>.ts in its own Node process with its
 * arguments. Names: compile, deposits, mint, delivery, scale, sweep, purge, soak, memory, parts, statements, lsp, inbox, receipts, console, calls.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const NAMES = ["compile", "deposits", "mint", "delivery", "scale", "sweep", "purge", "soak", "memory", "parts", "statements", "lsp", "inbox", "receipts", "console", "calls"];
const [name, ...args] = process.argv.slice(2);
if (!name || !NAMES.includes(name)) {
  process.stderr.write(`usage: npm run bench -- <${NAMES.join("|")}> [args…]\n`);
  process.exit(2);
}
const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
if (!existsSync(file)) {
  process.stderr.write(`bench/${name}.ts does not exist\n`);
  process.exit(2);
}
const r = spawnSync(process.execPath, ["--import=tsx", file, ...args], { stdio: "inherit" });
process.exit(r.status ?? 1);
