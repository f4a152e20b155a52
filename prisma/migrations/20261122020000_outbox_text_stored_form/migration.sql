-- outbox.to and outbox.subject take the stored form outbox.body already has: the JSON text of
-- the string, or of its sealed envelope {"$sealed": "v1...."} when it carries a callback link
-- (issue 8 item 7). Existing rows become the JSON text of their plain value.
UPDATE "outbox" SET "to" = to_json("to")::text, "subject" = to_json("subject")::text;
