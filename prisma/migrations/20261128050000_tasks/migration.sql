-- Tasks (v0.5, issue 41 item 3): the lease of a `call task "type"` — the call's own row (calls)
-- keeps its status and attempts; this row says who may work on it now. Written with the call, in
-- the step that opens its slot; changed by the step that applies an attempt's outcome (a retry
-- offers it again; an answer, a failure or the slot closing ends it) and, outside the run lock, by
-- the task API of the web process: a poll claims it (`held`: the next attempt, a lease of the call's
-- Timeout, the SHA-256 of the lock token — never the token), a heartbeat extends the lease.
--   status: 'ready' (offered from available_at) | 'held' (until lock_expires_at) | 'done'
-- Keyed, like every table of a run, by (run_id, id): id is the call's id. Deleted with its call.
CREATE TABLE tasks (
  run_id uuid NOT NULL,
  id uuid NOT NULL,
  type text NOT NULL,
  status text NOT NULL DEFAULT 'ready',
  attempt int NOT NULL DEFAULT 0,
  timeout_ms int NOT NULL,
  available_at timestamptz(3),
  lock_sha256 text,
  claimed_at timestamptz(3),
  lock_expires_at timestamptz(3),
  created_at timestamptz(3) NOT NULL,
  CONSTRAINT tasks_pkey PRIMARY KEY (run_id, id),
  CONSTRAINT tasks_call_fkey FOREIGN KEY (run_id, id) REFERENCES calls(run_id, id) ON DELETE CASCADE
);
-- a poll's claim: the oldest ready tasks of its types
CREATE INDEX tasks_ready_idx ON tasks (type, available_at) WHERE status = 'ready';
-- the sweeper's probe for leases that ran out
CREATE INDEX tasks_held_idx ON tasks (lock_expires_at) WHERE status = 'held';
