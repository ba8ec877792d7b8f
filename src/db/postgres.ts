import pg from 'pg';
import type { Db, Tx } from './db.js';

const INT8 = 20;
const NUMERIC = 1700;

/** PostgreSQL through a pg pool: the production store, selected by DATABASE_URL. */
export function createPostgresDb(connectionString: string, poolSize = 20): Db {
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
      // Amounts are bigint in minor units and always within 2^53, so numbers are exact.
      if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
      return pg.types.getTypeParser(oid, format);
    }) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({ connectionString, max: poolSize, types });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});

  return {
    kind: 'postgres',
    async query(sql, params) {
      const res = await pool.query(sql, params as unknown[] | undefined);
      return res.rows;
    },
    async tx(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const tx: Tx = {
          inTransaction: true,
          async query(sql, params) {
            const res = await client.query(sql, params as unknown[] | undefined);
            return res.rows;
          },
          async exec(sql) {
            await client.query(sql);
          },
        };
        const result = await fn(tx);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}
