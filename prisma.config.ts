import path from "node:path";
import { defineConfig } from "prisma/config";

// The Prisma CLI wants a native schema engine it would download; generate and
// validate never run it, so any existing file satisfies the check offline.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.resolve("scripts/prisma-no-engine");

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://webhooks@127.0.0.1:5432/webhooks" },
});
