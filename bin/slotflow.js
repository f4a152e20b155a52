#!/usr/bin/env node
// The `slotflow` command: runs the compiled CLI in dist/ (`npm run build`; `npm ci` builds it).
import { existsSync } from "node:fs";

const main = new URL("../dist/src/cli/main.js", import.meta.url);
if (!existsSync(main)) {
  process.stderr.write("slotflow is not built: run `npm run build` (npm ci builds it)\n");
  process.exit(1);
}
await import(main.href);
