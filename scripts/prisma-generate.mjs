// Runs `prisma generate` without network access. The Prisma CLI wants a native schema engine for
// every command, and cannot download one on an offline machine; `generate` never runs it, so any
// existing file satisfies the check (PRISMA_SCHEMA_ENGINE_BINARY). The client itself needs no
// native engine: it talks to PostgreSQL through the driver adapter @prisma/adapter-pg.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
// Nothing to generate in an installed package (its dist/ carries the compiled client) or in a
// production install without the CLI.
if (!existsSync(`${root}/src`) || !existsSync(`${root}/node_modules/prisma`)) process.exit(0);
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const result = spawnSync(process.execPath, [`${root}/node_modules/prisma/build/index.js`, "generate"], {
  cwd: root,
  env,
  stdio: "inherit",
});
process.exit(result.status ?? 1);
