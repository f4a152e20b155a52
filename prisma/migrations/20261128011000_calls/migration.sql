-- Calls (v0.5, issue 40): endpoints of kind "http" that `call http "name"` calls.

-- An http endpoint's extra request headers (credentials): the sealed JSON text of {name: value}
-- (engine/sealing/seal.ts), never shown again; `header_names` keeps their names in clear for
-- `GET /api/endpoints`. NULL / empty for other kinds.
ALTER TABLE endpoints ADD COLUMN headers text;
ALTER TABLE endpoints ADD COLUMN header_names text[] NOT NULL DEFAULT '{}';

-- One call of a call slot (`call http "name" as x`): written in the step that opens the slot, its
-- attempts made after that step commits by the calls worker (workers/calls.ts), its outcome applied
-- as a `call` command under the run lock (engine/commands/call.ts).
--   status: 'pending' (attempts to make) | 'answered' | 'failed' | 'cancelled' (the slot closed first)
--   request: the sealed JSON text of {path, input} (it may carry any run data, a link included)
--   attempts: attempts started (the worker's claim counts one before sending)
--   claimed_until: an attempt under way holds the row until then (a worker killed mid-attempt
--     loses it; the next job or the sweeper tries again, with the same Idempotency-Key)
-- Deleted with its run (ON DELETE CASCADE: the retention purge deletes runs).
CREATE TABLE calls (
  run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  id uuid NOT NULL,
  slot_id uuid NOT NULL,
  alias text NOT NULL,
  element int,
  type text NOT NULL,
  endpoint text,
  method text,
  request text NOT NULL,
  timeout_ms int NOT NULL,
  max_attempts int NOT NULL,
  deadline timestamptz(3),
  status text NOT NULL DEFAULT 'pending',
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz(3),
  claimed_until timestamptz(3),
  last_status int,
  last_error text,
  error text,
  created_at timestamptz(3) NOT NULL,
  ended_at timestamptz(3),
  CONSTRAINT calls_pkey PRIMARY KEY (run_id, id),
  CONSTRAINT calls_slot_fkey FOREIGN KEY (run_id, slot_id) REFERENCES slots(run_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX calls_run_id_slot_id_key ON calls (run_id, slot_id);
-- the sweeper's probe for attempts whose job was lost
CREATE INDEX calls_pending_next_attempt_idx ON calls (next_attempt_at) WHERE status = 'pending';
