import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODE_ROOT } from '../code-root.js';
import { type Db, PgCode, pgErrorCode, type Queryable } from './db.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('db/migrations/', CODE_ROOT));
// Arbitrary constant: serialises migration runs of several instances starting at once.
const MIGRATION_LOCK = 727_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.replace(/\.sql$/, ''),
      sql: readFileSync(join(dir, file), 'utf8'),
    }));
}

/**
 * Applies pending migrations, each in its own transaction together with its record in
 * schema_migrations, so a failing one changes nothing and stops the run.
 */
export async function migrate(db: Db, migrations: Migration[] = loadMigrations()): Promise<string[]> {
  // Under the lock too: two instances running CREATE TABLE IF NOT EXISTS at once on a fresh
  // PostgreSQL both pass the "not exists" check and one fails on pg_type's unique index.
  await db.tx(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
  });
  const applied: string[] = [];
  for (const m of migrations) {
    const done = await db.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const rows = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (rows.length > 0) return false;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      return true;
    });
    if (done) applied.push(m.name);
  }
  return applied;
}

/** How the store's schema stands against this Kopek's migrations. */
export interface SchemaState {
  /** This Kopek's migrations the store has not applied. */
  pending: Migration[];
  /** Migrations the store has applied that this Kopek does not know: a newer release applied them. */
  newer: string[];
}

/** Reads how the store's schema stands against `migrations`, changing nothing. */
export async function schemaState(
  db: Queryable,
  migrations: Migration[] = loadMigrations(),
): Promise<SchemaState> {
  const [table] = await db.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  const rows = table?.t
    ? await db.query<{ version: number; name: string }>(
        'SELECT version, name FROM schema_migrations ORDER BY version',
      )
    : [];
  const applied = new Set(rows.map((r) => r.version));
  const known = new Set(migrations.map((m) => m.version));
  return {
    pending: migrations.filter((m) => !applied.has(m.version)),
    newer: rows.filter((r) => !known.has(r.version)).map((r) => r.name),
  };
}

/**
 * The store's schema is older than this Kopek and this process may not bring it up to date: it must
 * not serve (its statements would meet tables and columns that are not there yet).
 */
export class SchemaBehindError extends Error {
  override name = 'SchemaBehindError';
}

export interface PreparedSchema {
  /** The migrations applied on the way. */
  applied: string[];
  /** Migrations of a newer release the store has (see SchemaState.newer). */
  newer: string[];
}

/**
 * What a process does to the store before using it. With migrations pending, it applies them (as
 * `kopek migrate` does); with none, it changes nothing, so a process whose database role may not
 * change the schema runs on a store that `kopek migrate` brought up to date. A schema a newer release
 * migrated further is run on as it is: migrations only add, so an older instance keeps working while
 * a rolling upgrade replaces it (docs/operations.md, "Upgrades").
 */
export async function prepareSchema(
  db: Db,
  migrations: Migration[] = loadMigrations(),
): Promise<PreparedSchema> {
  const { pending, newer } = await schemaState(db, migrations);
  if (pending.length === 0) return { applied: [], newer };
  try {
    return { applied: await migrate(db, migrations), newer };
  } catch (err) {
    if (pgErrorCode(err) !== PgCode.insufficientPrivilege) throw err;
    // What is left: a role may have been allowed the first of several.
    const left = (await schemaState(db, migrations)).pending;
    throw new SchemaBehindError(
      `The database schema is older than this Kopek: ${left.map((m) => m.name).join(', ')} ` +
        `${left.length === 1 ? 'is' : 'are'} not applied, and this process may not apply ` +
        `${left.length === 1 ? 'it' : 'them'} (${(err as Error).message}). ` +
        'Run `kopek migrate` with a database role that may change the schema (its owner), then start again.',
    );
  }
}
