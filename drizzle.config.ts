import { defineConfig } from 'drizzle-kit';

// Tables live beside their module as *.tables.ts; migrations are generated here and applied in code at start.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/**/*.tables.ts',
  out: './src/platform/db/migrations',
});
