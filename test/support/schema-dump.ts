import type { Pool } from 'pg';

/**
 * Every row of every table, partition, materialized view and sequence of a
 * schema, as PostgreSQL writes each row out in text: what a data-only dump of
 * the schema holds, read over the connection (no client tools of the server's
 * version needed).
 */
export async function dumpSchemaData(pool: Pool, schema: string): Promise<string> {
  const { rows: relations } = await pool.query<{ name: string; kind: string }>(
    `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'm', 'S') ORDER BY c.relname`,
    [schema],
  );
  expectSome(relations.length, schema);
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const parts: string[] = [];
  for (const { name, kind } of relations) {
    const relation = `${quote(schema)}.${quote(name)}`;
    // A sequence has no row type; its state is what pg_dump writes of it (setval).
    const select =
      kind === 'S' ? `SELECT concat_ws(',', last_value, is_called) AS row FROM ${relation}` : `SELECT t::text AS row FROM ${relation} t`;
    const { rows } = await pool.query<{ row: string }>(select);
    parts.push(`-- ${name}`, ...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

function expectSome(count: number, schema: string): void {
  if (count === 0) throw new Error(`schema ${schema} has no tables to dump`);
}
