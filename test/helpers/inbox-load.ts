/**
 * Bulk inbox data for the inbox's scale test and bench (v0.4 "The inbox stays fast"): open slots
 * of running `InboxDemo` runs (test/fixtures/inbox.flow, deployed first) and their inbox entries,
 * written with `generate_series` straight into PostgreSQL — not through the engine — in the shape
 * the engine writes them: the fanned-out `sign` slot (10 elements per run), each element's value
 * `signer-<n>`, the run's tracked row `req`, one `user:<id>` entry per slot.
 *
 * Slots are dealt in a shuffled order m(n) = n·7919 mod total: `groups[0].principal` gets those
 * with m < groups[0].count, then the next group, …, and the rest go to
 * `user:other-<n % otherPrincipals>` — so a group's tasks are spread over the runs (one or two per
 * run, like anyone's). Listing times are spread over the last `total` seconds in another shuffled
 * order, so a principal's tasks interleave with the others'; a third of the slots have no deadline.
 */
import pg from "pg";

export interface InboxLoad {
  workflow: string;
  version: number;
  /** Principals with a known number of tasks (bare ids: the entries say `user:<id>`). */
  groups: { principal: string; count: number }[];
  /** Slots of other principals. */
  others: number;
  /** How many distinct other principals share them. */
  otherPrincipals: number;
  /** Distinguishes several loads into one database. */
  tag: string;
}

/** Loads the rows; returns the total number of slots written. */
export async function loadInbox(databaseUrl: string, load: InboxLoad): Promise<number> {
  const total = load.groups.reduce((n, g) => n + g.count, 0) + load.others;
  const runs = Math.ceil(total / 10);
  const ids = load.groups.map((g) => g.principal);
  const bounds: number[] = [];
  let acc = 0;
  for (const g of load.groups) bounds.push((acc += g.count));
  // principal of slot n: the first group whose cumulative bound exceeds n, else an "other"
  // slot n's place m in a shuffled order (n ↦ n·7919 mod total is one-to-one unless total is a multiple of
  // the prime 7919), so each group's slots are spread over the runs like everyone else's
  const m = "((n::bigint * 7919) % $5::int)";
  const principalOf = `coalesce((SELECT ($2::text[])[i] FROM generate_subscripts($3::int[], 1) AS i WHERE ${m} < ($3::int[])[i] ORDER BY i LIMIT 1),
                               'other-' || (n % $4::int))`;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO runs (id, workflow_name, version, state, status, visit, input, created_at, updated_at)
       SELECT md5('run-' || $1::text || '-' || g)::uuid, $2::text, $3::int, 'Open', 'running', 1, '{"signers": []}'::jsonb, now(), now()
         FROM generate_series(0, $4::int - 1) AS g`,
      [load.tag, load.workflow, load.version, runs],
    );
    await client.query(
      `INSERT INTO entity_rows (run_id, name, entity, data)
       SELECT md5('run-' || $1::text || '-' || g)::uuid, 'req', 'Req', jsonb_build_object('title', 'load ' || g, 'owner', 'nobody', 'shards', 1)
         FROM generate_series(0, $2::int - 1) AS g`,
      [load.tag, runs],
    );
    await client.query(
      `WITH ins AS (
         INSERT INTO slots (id, run_id, state, visit, alias, element, element_value, event, status, opened_at, deadline, candidate_users, candidate_roles)
         SELECT md5('slot-' || $1::text || '-' || n)::uuid, md5('run-' || $1::text || '-' || (n / 10))::uuid, 'Open', 1, 'sign', n % 10,
                to_jsonb('signer-' || n), 'Sign', 'open', now() - ((n::bigint * 7919) % $5::int) * interval '1 second',
                CASE WHEN n % 3 = 0 THEN NULL ELSE now() + (n % 5000) * interval '1 hour' END,
                ARRAY[${principalOf}], ARRAY[]::text[]
           FROM generate_series(0, $5::int - 1) AS n
         RETURNING run_id, id, candidate_users, opened_at, deadline)
       INSERT INTO inbox_entries (run_id, slot_id, principal, workflow_name, listed_at, deadline)
       SELECT ins.run_id, ins.id, 'user:' || ins.candidate_users[1], $6::text, ins.opened_at, ins.deadline FROM ins`,
      [load.tag, ids, bounds, load.otherPrincipals, total, load.workflow],
    );
    await client.query("COMMIT");
    await client.query("ANALYZE runs");
    await client.query("ANALYZE slots");
    await client.query("ANALYZE inbox_entries");
    await client.query("VACUUM inbox_entries");
  } finally {
    await client.end();
  }
  return total;
}
