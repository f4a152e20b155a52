-- CreateTable
CREATE TABLE "workflows" (
    "name" TEXT NOT NULL,
    "current_version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflows_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "workflow_versions" (
    "workflow_name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "source" TEXT NOT NULL,
    "source_sha256" TEXT NOT NULL,
    "compiled" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflow_versions_pkey" PRIMARY KEY ("workflow_name","version")
);

-- CreateTable
CREATE TABLE "runs" (
    "id" UUID NOT NULL,
    "workflow_name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "visit" INTEGER NOT NULL DEFAULT 1,
    "input" JSONB NOT NULL,
    "milestones" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "slots" (
    "id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "state" TEXT NOT NULL,
    "visit" INTEGER NOT NULL,
    "alias" TEXT NOT NULL,
    "element" INTEGER,
    "element_value" JSONB,
    "event" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "opened_at" TIMESTAMPTZ(3),
    "deadline" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(3),
    "args" JSONB,

    CONSTRAINT "slots_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "links" (
    "id" UUID NOT NULL,
    "token_sha256" CHAR(64) NOT NULL,
    "run_id" UUID NOT NULL,
    "slot_id" UUID NOT NULL,
    "minted_version" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "end_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(3),

    CONSTRAINT "links_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "entity_rows" (
    "run_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "entity" TEXT NOT NULL,
    "data" JSONB NOT NULL,

    CONSTRAINT "entity_rows_pkey" PRIMARY KEY ("run_id","name")
);

-- CreateTable
CREATE TABLE "history" (
    "id" BIGSERIAL NOT NULL,
    "run_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "data" JSONB NOT NULL,

    CONSTRAINT "history_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "incidents" (
    "id" BIGSERIAL NOT NULL,
    "run_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "command" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "message" TEXT NOT NULL,

    CONSTRAINT "incidents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox" (
    "id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "to" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "body" TEXT,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "message_id" TEXT,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "applied_commands" (
    "id" TEXT NOT NULL,
    "run_id" UUID,
    "kind" TEXT NOT NULL,
    "outcome" JSONB NOT NULL,
    "applied_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "applied_commands_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "runs_workflow_name_status_idx" ON "runs"("workflow_name", "status");

-- CreateIndex
CREATE INDEX "slots_status_deadline_idx" ON "slots"("status", "deadline");

-- CreateIndex
CREATE UNIQUE INDEX "slots_run_id_visit_alias_element_key" ON "slots"("run_id", "visit", "alias", "element");

-- CreateIndex
CREATE UNIQUE INDEX "links_token_sha256_key" ON "links"("token_sha256");

-- CreateIndex
CREATE INDEX "links_slot_id_status_idx" ON "links"("slot_id", "status");

-- CreateIndex
CREATE INDEX "history_run_id_id_idx" ON "history"("run_id", "id");

-- CreateIndex
CREATE INDEX "incidents_run_id_id_idx" ON "incidents"("run_id", "id");

-- CreateIndex
CREATE INDEX "outbox_status_created_at_idx" ON "outbox"("status", "created_at");

-- CreateIndex
CREATE INDEX "outbox_run_id_idx" ON "outbox"("run_id");

-- CreateIndex
CREATE INDEX "applied_commands_applied_at_idx" ON "applied_commands"("applied_at");

-- AddForeignKey
ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_workflow_name_fkey" FOREIGN KEY ("workflow_name") REFERENCES "workflows"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "slots" ADD CONSTRAINT "slots_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "links" ADD CONSTRAINT "links_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "links" ADD CONSTRAINT "links_slot_id_fkey" FOREIGN KEY ("slot_id") REFERENCES "slots"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "entity_rows" ADD CONSTRAINT "entity_rows_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "history" ADD CONSTRAINT "history_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "incidents" ADD CONSTRAINT "incidents_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "outbox" ADD CONSTRAINT "outbox_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
