-- v0.5 "Security, round two" (issue 38 L4): sessions end when people sign out. A browser's
-- `slotflow_session` cookie carries a random session id (256 bits); this table holds its SHA-256
-- (hex) only, never the id itself, so a copy of the database opens no session. Every read of a
-- session looks its row up by that key and refuses it once `ended_at` is set or `expires_at` has
-- passed; `POST /auth/logout` sets `ended_at` at once. `issuer_sid` is the issuer's `sid` claim of
-- the sign-in (null for the development sign-in), kept for an issuer-initiated logout.
-- Distribution (docs/scaling.md "A schema that can be distributed"): a distributed table, not
-- co-located, distribution column `id_sha256` (like `link_tokens`): every read and logout is a
-- router statement on one shard; only the purge of expired rows and an issuer's logout by `sid`
-- or principal touch every shard.
CREATE TABLE "sessions" (
    "id_sha256" CHAR(64) NOT NULL,
    "principal_id" TEXT NOT NULL,
    "issuer_sid" TEXT,
    "development" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id_sha256")
);
CREATE INDEX "sessions_expires_at_idx" ON "sessions" ("expires_at");
CREATE INDEX "sessions_principal_id_idx" ON "sessions" ("principal_id");
