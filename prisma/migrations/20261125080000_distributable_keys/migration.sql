-- Issue 20 item 2, "A schema that can be distributed": every table of a run carries run_id in its
-- primary key and in every unique key, every foreign key between run tables includes run_id, and
-- a token resolves through a table of its own keyed by the token's hash (link_tokens). So the
-- schema meets the rules of a distributed PostgreSQL (Citus): runs and the tables of a run are
-- co-located by run_id (runs by id), link_tokens and applied_commands are distributed by their own
-- key, workflows / workflow_versions / endpoints are reference tables (docs/scaling.md).
-- Brings an existing database forward with its data, in the migrator's one transaction. It
-- rebuilds the run tables' primary keys and indexes under an exclusive lock: on a large database,
-- expect the tables to be locked for as long as that takes (minutes per tens of millions of rows).
-- Processes of the previous release keep working on the result (the functions keep their
-- signatures; the trigger below fills delivery_attempts.run_id for them); their token lookup
-- through Prisma and their delivery's link check read links by token_sha256, which is no longer
-- indexed alone: correct, but a scan, until they are replaced.

-- The token table: one row per minted link, keyed by the SHA-256 (hex) of its token. A deposit
-- reads it first (one key probe), then everything else by run_id. No foreign key to links: it is
-- not co-located with them (distributed by its own key); the purge deletes its rows by key
-- (src/engine/retention.ts).
CREATE TABLE "link_tokens" (
    "token_sha256" CHAR(64) NOT NULL,
    "run_id"       UUID     NOT NULL,
    "link_id"      UUID     NOT NULL,
    CONSTRAINT "link_tokens_pkey" PRIMARY KEY ("token_sha256")
);
INSERT INTO "link_tokens" ("token_sha256", "run_id", "link_id") SELECT "token_sha256", "run_id", "id" FROM "links";

-- Foreign keys between run tables become composite: drop the single-column ones first.
ALTER TABLE "links" DROP CONSTRAINT "links_slot_id_fkey";
ALTER TABLE "delivery_attempts" DROP CONSTRAINT "delivery_attempts_delivery_id_fkey";

-- delivery_attempts gets its run, from its delivery.
ALTER TABLE "delivery_attempts" ADD COLUMN "run_id" UUID;
UPDATE "delivery_attempts" a SET "run_id" = d."run_id" FROM "deliveries" d WHERE d."id" = a."delivery_id";
ALTER TABLE "delivery_attempts" ALTER COLUMN "run_id" SET NOT NULL;
-- Rolling upgrades (docs/deployment.md): a delivery worker of the previous release records an
-- attempt without run_id; this trigger fills it in from the delivery. This release always writes
-- it; a later release drops the trigger once no such worker runs.
CREATE FUNCTION slotflow_delivery_attempt_run_id() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.run_id IS NULL THEN
        SELECT d.run_id INTO NEW.run_id FROM deliveries d WHERE d.id = NEW.delivery_id;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER "delivery_attempts_run_id" BEFORE INSERT ON "delivery_attempts"
    FOR EACH ROW EXECUTE FUNCTION slotflow_delivery_attempt_run_id();

-- Primary keys (run_id, id).
ALTER TABLE "slots" DROP CONSTRAINT "slots_pkey", ADD CONSTRAINT "slots_pkey" PRIMARY KEY ("run_id", "id");
ALTER TABLE "links" DROP CONSTRAINT "links_pkey", ADD CONSTRAINT "links_pkey" PRIMARY KEY ("run_id", "id");
ALTER TABLE "history" DROP CONSTRAINT "history_pkey", ADD CONSTRAINT "history_pkey" PRIMARY KEY ("run_id", "id");
ALTER TABLE "incidents" DROP CONSTRAINT "incidents_pkey", ADD CONSTRAINT "incidents_pkey" PRIMARY KEY ("run_id", "id");
ALTER TABLE "outbox" DROP CONSTRAINT "outbox_pkey", ADD CONSTRAINT "outbox_pkey" PRIMARY KEY ("run_id", "id");
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_pkey", ADD CONSTRAINT "deliveries_pkey" PRIMARY KEY ("run_id", "id");
ALTER TABLE "delivery_attempts" DROP CONSTRAINT "delivery_attempts_pkey", ADD CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("run_id", "id");

-- Unique keys include run_id: the token's uniqueness moves to link_tokens; links keep the hash
-- (a delivery checks the links it carries by (run_id, token_sha256), src/outbox/deliveries.ts).
DROP INDEX "links_token_sha256_key";
CREATE INDEX "links_run_id_token_sha256_idx" ON "links"("run_id", "token_sha256");
-- (slots_run_id_visit_alias_element_key and entity_rows_pkey already lead with run_id.)

-- Indexes that the new primary keys make redundant, or that now lead with run_id.
DROP INDEX "links_run_id_idx";
DROP INDEX "history_run_id_id_idx";
DROP INDEX "incidents_run_id_id_idx";
DROP INDEX "outbox_run_id_idx";
DROP INDEX "deliveries_run_id_idx";
DROP INDEX "links_slot_id_status_idx";
CREATE INDEX "links_run_id_slot_id_status_idx" ON "links"("run_id", "slot_id", "status");
DROP INDEX "delivery_attempts_delivery_id_idx";
CREATE INDEX "delivery_attempts_run_id_delivery_id_id_idx" ON "delivery_attempts"("run_id", "delivery_id", "id");

-- The mailer's and the delivery worker's jobs name their row by id only (the job carries no run
-- id): plain, non-unique indexes keep that lookup one index probe (a multi-shard read once
-- distributed; docs/scaling.md).
CREATE INDEX "outbox_id_idx" ON "outbox"("id");
CREATE INDEX "deliveries_id_idx" ON "deliveries"("id");

-- Composite foreign keys between run tables (the ones to runs keep ON DELETE CASCADE: retention).
ALTER TABLE "links" ADD CONSTRAINT "links_run_id_slot_id_fkey" FOREIGN KEY ("run_id", "slot_id")
    REFERENCES "slots"("run_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_run_id_delivery_id_fkey" FOREIGN KEY ("run_id", "delivery_id")
    REFERENCES "deliveries"("run_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The token lookup: one probe of link_tokens by its key, then the link, its slot and its run by
-- run_id (each a single-shard read once distributed). Same result columns as 20261125020000.
CREATE OR REPLACE FUNCTION slotflow_link_lookup(p_token_sha256 TEXT)
RETURNS TABLE (id UUID, run_id UUID, minted_version INTEGER, status TEXT, end_reason TEXT,
               idempotency_key_sha256 TEXT, idempotency_body_sha256 TEXT, state TEXT, alias TEXT, workflow_name TEXT)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_run UUID;
    v_link UUID;
BEGIN
    SELECT t.run_id, t.link_id INTO v_run, v_link
      FROM link_tokens t WHERE t.token_sha256 = p_token_sha256::bpchar;  -- CHAR(64): a text comparison would skip the index
    IF v_run IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT l.id, l.run_id, l.minted_version, l.status, l.end_reason,
               l.idempotency_key_sha256::text, l.idempotency_body_sha256::text, s.state, s.alias, r.workflow_name
          FROM links l JOIN slots s ON s.run_id = l.run_id AND s.id = l.slot_id JOIN runs r ON r.id = l.run_id
         WHERE l.run_id = v_run AND l.id = v_link;
END
$$;

-- The step's read (20261125070000) with every run table reached by run_id.
CREATE OR REPLACE FUNCTION slotflow_step_read(p_run UUID, p_command TEXT, p_link UUID) RETURNS JSON
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_visit INTEGER;
BEGIN
    SELECT visit INTO v_visit FROM runs WHERE id = p_run FOR UPDATE;
    RETURN json_build_object(
        'prior', (SELECT outcome FROM applied_commands WHERE id = p_command),
        'run', (SELECT row_to_json(r) FROM runs r WHERE r.id = p_run),
        'slots', (SELECT coalesce(json_agg(s ORDER BY s.alias, s.element), '[]'::json)
                    FROM slots s WHERE s.run_id = p_run AND s.visit = v_visit),
        'entities', (SELECT coalesce(json_agg(e), '[]'::json) FROM entity_rows e WHERE e.run_id = p_run),
        'liveLinks', (SELECT coalesce(json_agg(json_build_object('id', l.id, 'slot_id', l.slot_id)), '[]'::json)
                        FROM slots s JOIN links l ON l.run_id = s.run_id AND l.slot_id = s.id AND l.status = 'live'
                       WHERE s.run_id = p_run AND s.visit = v_visit),
        'link', (SELECT row_to_json(l) FROM links l WHERE l.run_id = p_run AND l.id = p_link),
        'pendingDeliveries', EXISTS (SELECT 1 FROM deliveries d WHERE d.run_id = p_run AND d.status = 'pending')
    );
END
$$;

-- The step's write (20261123000000) with every changed row named by (run_id, id), and each minted
-- link's token row written beside it (same transaction).
CREATE OR REPLACE FUNCTION slotflow_step_write(p jsonb) RETURNS void
LANGUAGE plpgsql AS $$
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
         WHERE run_id = v_run AND id = r.id;
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
