-- Issue 22: a start and a mail delivery in fewer round trips.
--
-- 1. slotflow_start_write(p): a run start applied as ONE statement (no BEGIN/COMMIT round trips:
--    a single statement is its own transaction). A new run has nothing to lock; a repeated start
--    of the same command id waits on an advisory lock for the first to commit, then returns its
--    recorded outcome instead of writing (the caller answers with it). Otherwise it writes the
--    step through slotflow_step_write (the run, its slots, minted links, tracked rows, outbox mail,
--    history and the outcome record), then the mail's reply_to/cc and the step's webhook/chat
--    deliveries — every row the start queued in the same statement, so all or none.
--    p: the StepWrite document (src/engine/sql/step-write.ts) plus
--       mailExtra: [{ id, reply_to, cc }], deliveries: [DeliveryWriteRow] (sql/deliveries-write.ts).
--    Returns the prior outcome (JSONB) or NULL when this call wrote the start. The reply_to/cc and
--    the deliveries go through slotflow_set_mail_extra and slotflow_write_deliveries, which a
--    step's write in its transaction calls too (src/engine/step.ts, sql/deliveries-write.ts).
--
-- 2. outbox.claimed_until: a mail delivery claims its row with one UPDATE (status pending, not
--    claimed or its claim lapsed) instead of holding a row lock through the send, and marks it with
--    one more: claim, send, mark (src/outbox/mailer.ts).
-- A step's webhook/chat deliveries (issue 18), inserted from the rows of sql/deliveries-write.ts:
-- the one statement both a step's write (in its transaction) and a start's use.
CREATE FUNCTION slotflow_write_deliveries(p_rows JSONB) RETURNS void
LANGUAGE sql VOLATILE AS $$
    INSERT INTO deliveries (id, run_id, endpoint, statement, webhook_id, payload, link_sha256, status, next_attempt_at, created_at)
    SELECT r.id, r.run_id, r.endpoint, r.statement, r.webhook_id, r.payload,
           ARRAY(SELECT jsonb_array_elements_text(r.link_sha256)), 'pending', r.created_at, r.created_at
      FROM jsonb_to_recordset(p_rows) AS r(id uuid, run_id uuid, endpoint text, statement text, webhook_id text,
                                           payload text, link_sha256 jsonb, created_at timestamptz);
$$;

-- `send email … { replyTo, cc }` (issue 19) on a step's mail rows, by (run_id, id): one partition
-- (issue 20 item 2). p_rows: [{ id, reply_to, cc }] of the mail that has them.
CREATE FUNCTION slotflow_set_mail_extra(p_run UUID, p_rows JSONB) RETURNS void
LANGUAGE sql VOLATILE AS $$
    UPDATE outbox o SET reply_to = x.reply_to, cc = x.cc
      FROM jsonb_to_recordset(p_rows) AS x(id uuid, reply_to text, cc text)
     WHERE o.run_id = p_run AND o.id = x.id;
$$;

CREATE FUNCTION slotflow_start_write(p JSONB) RETURNS JSONB
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_command TEXT := p->'applied'->>'id';
    v_prior JSONB;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('slotflow.start:' || v_command));
    SELECT outcome INTO v_prior FROM applied_commands WHERE id = v_command;
    IF FOUND THEN
        RETURN v_prior;
    END IF;
    PERFORM slotflow_step_write(p);
    IF jsonb_array_length(coalesce(p->'mailExtra', '[]'::jsonb)) > 0 THEN
        PERFORM slotflow_set_mail_extra((p->'run'->>'id')::uuid, p->'mailExtra');
    END IF;
    IF jsonb_array_length(coalesce(p->'deliveries', '[]'::jsonb)) > 0 THEN
        PERFORM slotflow_write_deliveries(p->'deliveries');
    END IF;
    RETURN NULL;
END $$;

ALTER TABLE "outbox" ADD COLUMN "claimed_until" TIMESTAMPTZ(3);
