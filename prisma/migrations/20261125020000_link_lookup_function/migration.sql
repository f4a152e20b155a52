-- The web process's token lookup as a PL/pgSQL function (issue 17, "Poolers"). Statements are sent
-- unnamed so that a pooler in transaction mode works; sent as a plain statement, this three-table
-- join was parsed and planned on every deposit (~0.15 ms of backend CPU, bench `statements`).
-- PL/pgSQL keeps the plan of its query per server connection, whichever client calls it.
CREATE FUNCTION slotflow_link_lookup(p_token_sha256 TEXT)
RETURNS TABLE (id UUID, run_id UUID, minted_version INTEGER, status TEXT, end_reason TEXT,
               idempotency_key_sha256 TEXT, idempotency_body_sha256 TEXT, state TEXT, alias TEXT, workflow_name TEXT)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT l.id, l.run_id, l.minted_version, l.status, l.end_reason,
               l.idempotency_key_sha256::text, l.idempotency_body_sha256::text, s.state, s.alias, r.workflow_name
          FROM links l JOIN slots s ON s.id = l.slot_id JOIN runs r ON r.id = l.run_id
         WHERE l.token_sha256 = p_token_sha256::bpchar;  -- the column is CHAR(64): a text comparison would skip the index
END
$$;
