import type { Pool } from 'pg';

/**
 * Every row of every table, partition, materialized view and sequence of a
 * schema, as PostgreSQL writes each row out in text: what a data-only dump of
 * the schema holds, read over the connection (no client tools of the server's
 * version needed).
 */
export async function dumpSchemaData(pool: Pool, schema: string): Promise<string> {
  const { rows: relations } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'm', 'S') ORDER BY c.relname`,
    [schema],
  );
  expectSome(relations.length, schema);
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const parts: string[] = [];
  for (const { name } of relations) {
    const { rows } = await pool.query<{ row: string }>(`SELECT t::text AS row FROM ${quote(schema)}.${quote(name)} t`);
    parts.push(`-- ${name}`, ...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

function expectSome(count: number, schema: string): void {
  if (count === 0) throw new Error(`schema ${schema} has no tables to dump`);
}
