-- send email gains optional replyTo and cc, one address each (issue 19 item 6). Stored like "to"
-- (Sealer.sealText); NULL when the statement does not give them. The step write function is not
-- changed: a step whose mail has either sets them with one UPDATE by key after it (step.ts).
ALTER TABLE outbox ADD COLUMN reply_to TEXT;
ALTER TABLE outbox ADD COLUMN cc TEXT;
