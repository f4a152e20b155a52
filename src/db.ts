/**
 * The Prisma client, through the PostgreSQL driver adapter (no native query engine).
 * `Tx` is the client handed to a function inside `prisma.$transaction(async (tx) => …)`.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client.js";

export { PrismaClient };
export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

/**
 * Creates a client for `databaseUrl`; `poolSize` is the maximum number of connections. Every
 * statement is sent unnamed (no named prepared statement, no session state), so `databaseUrl` may
 * point at PostgreSQL, or at a pooler in session or transaction mode (engine/sql/prepared.ts,
 * issue 17).
 */
export function createDb(databaseUrl: string, poolSize = 10): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolSize });
  return new PrismaClient({ adapter });
}
