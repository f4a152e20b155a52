-- Issue 18 item 4: "a message that carries a link stops being retried the moment that link is no
-- longer live". The step's read also says whether the run has pending webhook/chat deliveries
-- (one probe of deliveries_run_id_idx), so a step that ends a link ends, in its own transaction,
-- the pending deliveries left with no live link (src/outbox/deliveries.ts endDeliveriesOfDeadLinks)
-- — and a step of a run without pending deliveries (the hot path) sends nothing more.
-- The function is otherwise that of 20261122010000_step_read_function; code that does not read
-- the new key (a process of the previous release during a rolling upgrade) ignores it.
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
                        FROM slots s JOIN links l ON l.slot_id = s.id AND l.status = 'live'
                       WHERE s.run_id = p_run AND s.visit = v_visit),
        'link', (SELECT row_to_json(l) FROM links l WHERE l.id = p_link),
        'pendingDeliveries', EXISTS (SELECT 1 FROM deliveries d WHERE d.run_id = p_run AND d.status = 'pending')
    );
END
$$;
