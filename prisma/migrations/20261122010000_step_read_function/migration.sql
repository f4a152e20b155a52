-- The read of a step (src/engine/sql/step-read.ts): lock the run row, then read everything the
-- command needs, in one round trip. A plain statement cannot do both: in READ COMMITTED its
-- snapshot is taken before it waits for the lock, so after waiting it would read the slots and
-- links as they were before the step that held the lock committed. A VOLATILE PL/pgSQL function
-- takes a fresh snapshot for each statement it runs, so the reads below see every commit that
-- preceded the lock. Rows are returned whole (row_to_json), so added columns need no new version.
CREATE FUNCTION slotflow_step_read(p_run UUID, p_command TEXT, p_link UUID) RETURNS JSON
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
                        FROM slots s JOIN links l ON l.slot_id = s.id AND l.status = 'live'
                       WHERE s.run_id = p_run AND s.visit = v_visit),
        'link', (SELECT row_to_json(l) FROM links l WHERE l.id = p_link)
    );
END
$$;
