-- Idempotency-Key on the callback endpoint (docs/http-api.md "Idempotent retries"): the deposit
-- that burns a link records the SHA-256 of its request's key and of its body, so a retry with the
-- same key learns that its own request completed the slot. Never the key itself.
ALTER TABLE "links" ADD COLUMN "idempotency_key_sha256" CHAR(64);
ALTER TABLE "links" ADD COLUMN "idempotency_body_sha256" CHAR(64);
