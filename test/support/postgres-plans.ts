/**
 * The plans PostgreSQL executes inside kiln's functions, as auto_explain prints them: loaded in
 * the test's own session (`LOAD 'auto_explain'`, no server setting needed) and sent to the client
 * as NOTICEs, one per statement, nested statements included, with actual row counts.
 */
import type pg from 'pg';

/** Runs `sql` on `client`: its result rows, and the plans of every statement it executed. */
export async function nestedPlans<Row extends pg.QueryResultRow>(
  client: pg.Client,
  sql: string,
  params: unknown[] = [],
): Promise<{ rows: Row[]; plans: string[] }> {
  const notices: string[] = [];
  let rows: Row[] = [];
  const onNotice = (notice: { message?: string }): void => void notices.push(notice.message ?? '');
  client.on('notice', onNotice);
  try {
    await client.query("LOAD 'auto_explain'");
    await client.query('SET auto_explain.log_min_duration = 0');
    await client.query('SET auto_explain.log_analyze = on');
    await client.query('SET auto_explain.log_nested_statements = on');
    await client.query("SET auto_explain.log_level = 'notice'");
    await client.query("SET client_min_messages = 'notice'");
    rows = (await client.query<Row>(sql, params)).rows;
  } finally {
    await client.query('RESET auto_explain.log_min_duration');
    client.off('notice', onNotice);
  }
  return { rows, plans: notices };
}
