-- Issue 18: named delivery endpoints (webhook, slack, teams) and the deliveries of
-- `send webhook` / `send message` (src/endpoints/, src/deliveries/).
-- Credentials are sealed at rest (Sealer.sealText form of a sealed envelope): the URL of every
-- endpoint, its signing secret and the previous secret during a rotation. Only the host is clear.
CREATE TABLE "endpoints" (
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT,
    "previous_secret" TEXT,
    "previous_secret_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "failing_since" TIMESTAMPTZ(3),
    "disabled_at" TIMESTAMPTZ(3),
    "disabled_reason" TEXT,
    CONSTRAINT "endpoints_pkey" PRIMARY KEY ("name")
);

-- One queued `send webhook` / `send message`. `payload` is the sealed JSON text of what is sent
-- ({type, data} or {text, link, label}); `link_sha256` the SHA-256 (hex) of each callback token it
-- carries (as links.token_sha256), so liveness is checked without opening it.
CREATE TABLE "deliveries" (
    "id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "endpoint" TEXT NOT NULL,
    "statement" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "payload" TEXT,
    "link_sha256" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "last_status_code" INTEGER,
    "last_latency_ms" INTEGER,
    "last_error" TEXT,
    "end_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),
    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "deliveries_run_id_idx" ON "deliveries"("run_id");
CREATE INDEX "deliveries_status_next_attempt_at_idx" ON "deliveries"("status", "next_attempt_at");
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every attempt of a delivery: what the outbox API shows (never a body).
CREATE TABLE "delivery_attempts" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "status_code" INTEGER,
    "latency_ms" INTEGER,
    "error" TEXT,
    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "delivery_attempts_delivery_id_idx" ON "delivery_attempts"("delivery_id", "id");
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;
