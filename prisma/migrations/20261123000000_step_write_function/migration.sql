-- The write of a step (src/engine/sql/step-write.ts): every change one applied command makes, in
-- one round trip, from one JSON document. Replaces a statement of data-modifying CTEs that the
-- engine built per step: that text (about 3 KB) was sent, parsed and planned on every deposit, and
-- the planner, which guesses 100 rows for every jsonb_to_recordset, joined the 1–3 changed slots
-- and links by hashing a sequential scan of the whole slots and links tables whenever those were
-- small enough (up to some thousands of rows) — most of PostgreSQL's CPU per deposit (bench
-- `deposits`, docs/performance.md). Here each statement's plan is cached once per connection, and
-- every changed row is reached by its primary key.
--
-- p: { now, newRun, run, slotsNew[], slotsChanged[], linksEnded[], linksMinted[], entities[],
--      outbox[], history[], applied: { id, kind, outcome } } — see StepWrite in step-write.ts.
-- Every row is named by its key: no write that cannot match; the rows one part touches are never
-- touched by another (the burned link is among linksEnded; minted links carry their final status).
CREATE FUNCTION slotflow_step_write(p JSONB) RETURNS VOID
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_now TIMESTAMPTZ := (p->>'now')::timestamptz;
    v_run UUID := (p->'run'->>'id')::uuid;
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
        INSERT INTO slots (id, run_id, state, visit, alias, element, element_value, event, status, opened_at, deadline, closed_at, args)
        SELECT x.id, x.run_id, x.state, x.visit, x.alias, x.element, x.element_value, x.event, x.status, x.opened_at, x.deadline, x.closed_at, x.args
          FROM jsonb_to_recordset(p->'slotsNew') AS x(id uuid, run_id uuid, state text, visit int, alias text, element int, element_value jsonb,
                                                      event text, status text, opened_at timestamptz, deadline timestamptz, closed_at timestamptz, args jsonb);
    END IF;

    FOR r IN SELECT * FROM jsonb_to_recordset(p->'slotsChanged')
                 AS x(id uuid, status text, opened_at timestamptz, deadline timestamptz, closed_at timestamptz, args jsonb) LOOP
        UPDATE slots SET status = r.status, opened_at = r.opened_at, deadline = r.deadline, closed_at = r.closed_at, args = r.args
         WHERE id = r.id;
    END LOOP;

    FOR r IN SELECT * FROM jsonb_to_recordset(p->'linksEnded')
                 AS x(id uuid, status text, end_reason text, idempotency_key_sha256 text, idempotency_body_sha256 text) LOOP
        UPDATE links SET status = r.status, end_reason = r.end_reason, ended_at = v_now,
                         idempotency_key_sha256 = r.idempotency_key_sha256, idempotency_body_sha256 = r.idempotency_body_sha256
         WHERE id = r.id;
    END LOOP;

    IF jsonb_array_length(p->'linksMinted') > 0 THEN
        INSERT INTO links (id, token_sha256, run_id, slot_id, minted_version, status, end_reason, created_at, ended_at)
        SELECT x.id, x.token_sha256, v_run, x.slot_id, x.minted_version, x.status, x.end_reason, v_now,
               CASE WHEN x.status = 'live' THEN NULL ELSE v_now END
          FROM jsonb_to_recordset(p->'linksMinted') AS x(id uuid, token_sha256 text, slot_id uuid, minted_version int, status text, end_reason text);
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
