-- v0.4, "everyone who answers gets a door of their own": per slot, who may answer it (its
-- Candidates, evaluated when the slot is created), who answered it, its receipt, how often its
-- link was forwarded; and the inbox's index of open slots by candidate principal.
--
-- slots.candidate_users / candidate_roles: the ids named by `user(…)` and the roles named by
--   `role(…)` in the slot's Candidates (NULL: the slot has no Candidates and is listed in no inbox).
-- slots.answered_by: how the completing answer came: {"via":"link"} | {"via":"principal","id","email"}
--   | {"via":"slack","id","email"} (NULL until completed).
-- slots.receipt: the compact JWS given to the completing deposit (a signature, not a secret).
-- slots.forwards: how many times the slot's link was forwarded (at most 5).
ALTER TABLE "slots"
    ADD COLUMN "candidate_users" TEXT[],
    ADD COLUMN "candidate_roles" TEXT[],
    ADD COLUMN "answered_by" JSONB,
    ADD COLUMN "receipt" TEXT,
    ADD COLUMN "forwards" INTEGER NOT NULL DEFAULT 0;

-- One row per (open or waiting slot, candidate principal): principal is 'user:<id>' or
-- 'role:<name>'. Written and removed by slotflow_step_write in the step that opens or closes the
-- slot, so the inbox is an index range scan per principal, never a scan of every open slot.
-- Keyed by run_id first like every run table (distributable, docs/scaling.md).
CREATE TABLE "inbox_entries" (
    "run_id" UUID NOT NULL,
    "slot_id" UUID NOT NULL,
    "principal" TEXT NOT NULL,
    "workflow_name" TEXT NOT NULL,
    "listed_at" TIMESTAMPTZ(3) NOT NULL,
    "deadline" TIMESTAMPTZ(3),
    CONSTRAINT "inbox_entries_pkey" PRIMARY KEY ("run_id", "slot_id", "principal")
);
ALTER TABLE "inbox_entries" ADD CONSTRAINT "inbox_entries_run_id_slot_id_fkey"
    FOREIGN KEY ("run_id", "slot_id") REFERENCES "slots"("run_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "inbox_entries_newest_idx" ON "inbox_entries" ("principal", "listed_at" DESC, "run_id", "slot_id");
CREATE INDEX "inbox_entries_workflow_newest_idx" ON "inbox_entries" ("principal", "workflow_name", "listed_at" DESC, "run_id", "slot_id");
CREATE INDEX "inbox_entries_deadline_idx" ON "inbox_entries" ("principal", "deadline", "run_id", "slot_id");

-- The step's write (20261125080000) writing the new slot columns and keeping inbox_entries.
-- In slotsChanged a missing (NULL) answered_by, receipt, forwards or candidate list keeps the
-- stored value; a slot with Candidates whose status leaves open/waiting loses its inbox rows (a
-- slot without them has none, and costs no statement).
CREATE OR REPLACE FUNCTION slotflow_step_write(p jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_now TIMESTAMPTZ := (p->>'now')::timestamptz;
    v_run UUID := (p->'run'->>'id')::uuid;
    v_workflow TEXT := p->'run'->>'workflow_name';
    r RECORD;
BEGIN
    IF (p->>'newRun')::boolean THEN
        INSERT INTO runs (id, workflow_name, version, state, status, visit, input, milestones, finished_at, created_at, updated_at)
        SELECT x.id, x.workflow_name, x.version, x.state, x.status, x.visit, x.input, x.milestones, x.finished_at, v_now, v_now
          FROM jsonb_to_record(p->'run') AS x(id uuid, workflow_name text, version int, state text, status text, visit int,
                                             input jsonb, milestones text[], finished_at timestamptz);
    ELSE
        UPDATE runs SET state = x.state, status = x.status, visit = x.visit, milestones = x.milestones,
                        finished_at = x.finished_at, version = x.version, updated_at = v_now
          FROM jsonb_to_record(p->'run') AS x(version int, state text, status text, visit int, milestones text[], finished_at timestamptz)
         WHERE runs.id = v_run;
    END IF;
    IF jsonb_array_length(p->'slotsNew') > 0 THEN
        INSERT INTO slots (id, run_id, state, visit, alias, element, element_value, event, status, opened_at, deadline, closed_at, args,
                           candidate_users, candidate_roles, answered_by, receipt, forwards)
        SELECT x.id, x.run_id, x.state, x.visit, x.alias, x.element, x.element_value, x.event, x.status, x.opened_at, x.deadline, x.closed_at, x.args,
               x.candidate_users, x.candidate_roles, x.answered_by, x.receipt, coalesce(x.forwards, 0)
          FROM jsonb_to_recordset(p->'slotsNew') AS x(id uuid, run_id uuid, state text, visit int, alias text, element int, element_value jsonb,
                                                      event text, status text, opened_at timestamptz, deadline timestamptz, closed_at timestamptz, args jsonb,
                                                      candidate_users text[], candidate_roles text[], answered_by jsonb, receipt text, forwards int);
        INSERT INTO inbox_entries (run_id, slot_id, principal, workflow_name, listed_at, deadline)
        SELECT v_run, x.id, c.principal, v_workflow, v_now, x.deadline
          FROM jsonb_to_recordset(p->'slotsNew') AS x(id uuid, status text, deadline timestamptz, candidate_users text[], candidate_roles text[])
         CROSS JOIN LATERAL (SELECT 'user:' || u FROM unnest(x.candidate_users) AS u
                             UNION SELECT 'role:' || g FROM unnest(x.candidate_roles) AS g) AS c(principal)
         WHERE x.status IN ('open', 'waiting');
    END IF;
    FOR r IN SELECT * FROM jsonb_to_recordset(p->'slotsChanged')
                 AS x(id uuid, status text, opened_at timestamptz, deadline timestamptz, closed_at timestamptz, args jsonb,
                      candidate_users text[], candidate_roles text[], answered_by jsonb, receipt text, forwards int) LOOP
        UPDATE slots SET status = r.status, opened_at = r.opened_at, deadline = r.deadline, closed_at = r.closed_at, args = r.args,
                         candidate_users = coalesce(r.candidate_users, candidate_users),
                         candidate_roles = coalesce(r.candidate_roles, candidate_roles),
                         answered_by = coalesce(r.answered_by, answered_by),
                         receipt = coalesce(r.receipt, receipt),
                         forwards = coalesce(r.forwards, forwards)
         WHERE run_id = v_run AND id = r.id;
        IF r.status IN ('open', 'waiting') THEN
            IF r.candidate_users IS NOT NULL OR r.candidate_roles IS NOT NULL THEN
                INSERT INTO inbox_entries (run_id, slot_id, principal, workflow_name, listed_at, deadline)
                SELECT v_run, r.id, c.principal, v_workflow, v_now, r.deadline
                  FROM (SELECT 'user:' || u FROM unnest(r.candidate_users) AS u
                        UNION SELECT 'role:' || g FROM unnest(r.candidate_roles) AS g) AS c(principal)
                ON CONFLICT (run_id, slot_id, principal) DO UPDATE SET deadline = excluded.deadline;
            ELSE
                UPDATE inbox_entries SET deadline = r.deadline WHERE run_id = v_run AND slot_id = r.id AND deadline IS DISTINCT FROM r.deadline;
            END IF;
        ELSIF r.candidate_users IS NOT NULL OR r.candidate_roles IS NOT NULL THEN
            -- only a slot with Candidates has inbox rows (the step sends its lists with every change)
            DELETE FROM inbox_entries WHERE run_id = v_run AND slot_id = r.id;
        END IF;
    END LOOP;
    FOR r IN SELECT * FROM jsonb_to_recordset(p->'linksEnded')
                 AS x(id uuid, status text, end_reason text, idempotency_key_sha256 text, idempotency_body_sha256 text) LOOP
        UPDATE links SET status = r.status, end_reason = r.end_reason, ended_at = v_now,
                         idempotency_key_sha256 = r.idempotency_key_sha256, idempotency_body_sha256 = r.idempotency_body_sha256
         WHERE run_id = v_run AND id = r.id;
    END LOOP;
    IF jsonb_array_length(p->'linksMinted') > 0 THEN
        INSERT INTO links (id, token_sha256, run_id, slot_id, minted_version, status, end_reason, created_at, ended_at)
        SELECT x.id, x.token_sha256, v_run, x.slot_id, x.minted_version, x.status, x.end_reason, v_now,
               CASE WHEN x.status = 'live' THEN NULL ELSE v_now END
          FROM jsonb_to_recordset(p->'linksMinted') AS x(id uuid, token_sha256 text, slot_id uuid, minted_version int, status text, end_reason text);
        INSERT INTO link_tokens (token_sha256, run_id, link_id)
        SELECT x.token_sha256, v_run, x.id
          FROM jsonb_to_recordset(p->'linksMinted') AS x(id uuid, token_sha256 text);
    END IF;
    IF (p->>'newRun')::boolean THEN
        INSERT INTO entity_rows (run_id, name, entity, data)
        SELECT v_run, x.name, x.entity, x.data FROM jsonb_to_recordset(p->'entities') AS x(name text, entity text, data jsonb);
    ELSE
        FOR r IN SELECT * FROM jsonb_to_recordset(p->'entities') AS x(name text, data jsonb) LOOP
            UPDATE entity_rows SET data = r.data WHERE run_id = v_run AND name = r.name;
        END LOOP;
    END IF;
    IF jsonb_array_length(p->'outbox') > 0 THEN
        INSERT INTO outbox (id, run_id, "to", subject, body, status, created_at)
        SELECT x.id, v_run, x."to", x.subject, x.body, 'pending', x.created_at
          FROM jsonb_to_recordset(p->'outbox') AS x(id uuid, "to" text, subject text, body text, created_at timestamptz);
    END IF;
    IF jsonb_array_length(p->'history') > 0 THEN
        INSERT INTO history (run_id, at, kind, data)
        SELECT v_run, v_now, x.kind, x.data
          FROM jsonb_array_elements(p->'history') WITH ORDINALITY AS h(v, n), jsonb_to_record(h.v) AS x(kind text, data jsonb)
         ORDER BY h.n;
    END IF;
    INSERT INTO applied_commands (id, run_id, kind, outcome, applied_at)
    VALUES (p->'applied'->>'id', v_run, p->'applied'->>'kind', p->'applied'->'outcome', v_now);
END
$$;
