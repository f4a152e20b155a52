/**
 * The hot path's fixed statements, by name (issue 17 "Poolers").
 *
 * A statement registered here keeps a stable name (`slotflow_step_write`, …) for diagnostics and
 * the bench's statement counts, but it is sent to PostgreSQL **unnamed**: the driver sends Parse,
 * Bind, Execute and Sync for the unnamed statement in one round trip, so a deposit makes exactly as
 * many round trips as with named statements, and no statement outlives its message. That is what
 * lets `DATABASE_URL` point at a pooler in transaction mode (PgBouncer 1.18, Debian's), which hands
 * each transaction to whichever server connection is free: a named statement prepared on one
 * server connection is unknown on the next ("prepared statement … does not exist", 26000) or
 * already there under the same name from another client ("… already exists", 42P05).
 *
 * The planning these statements skip with a name is small (the step's write and read are calls of
 * PL/pgSQL functions, which keep their own plans per server connection; the token lookup is one
 * index join); docs/performance.md "Behind a pooler" has the measured cost. db.ts hands no
 * `statementNameGenerator` to the driver adapter, so every statement, Prisma's own included, is
 * unnamed.
 */

const byText = new Map<string, string>();

/**
 * Registers `text` under `name` (unique, `[a-z_]+`) and returns the text unchanged, to be sent with
 * `$queryRawUnsafe(text, …params)` / `$executeRawUnsafe`. Throws when the name is taken by another text.
 */
export function prepared(name: string, text: string): string {
  for (const [t, n] of byText) if (n === name && t !== text) throw new Error(`prepared statement name ${name} is taken`);
  byText.set(text, name);
  return text;
}

/** The registered name of `query.sql` (for diagnostics), or undefined for an unregistered statement. */
export function statementName(query: { sql: string }): string | undefined {
  return byText.get(query.sql);
}
