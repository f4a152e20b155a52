-- v0.4 "Receipts": the development signing key of receipts (docs/receipts.md). Used only when
-- SLOTFLOW_RECEIPT_KEYS is unset outside production: the first process that needs a key generates
-- one EC P-256 key and keeps it here, so every process and every restart signs with the same key.
-- `private_jwk` is the private key as a JWK, sealed with SLOTFLOW_SEAL_KEY (never in clear);
-- `public_jwk` is what GET /.well-known/jwks.json publishes. `purpose` is unique, so two processes
-- starting at once keep one key (INSERT … ON CONFLICT DO NOTHING, then read).
CREATE TABLE "receipt_keys" (
    "kid" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "private_jwk" JSONB NOT NULL,
    "public_jwk" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "receipt_keys_pkey" PRIMARY KEY ("kid")
);
CREATE UNIQUE INDEX "receipt_keys_purpose_key" ON "receipt_keys" ("purpose");
