// Prisma CLI configuration. Prisma 7 does not read .env itself; the URL comes from the environment
// with slotflow's default (see src/config.ts).
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/slotflow" },
});
