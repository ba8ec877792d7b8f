import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import type { Db } from '../src/db/db.js';
import { createPgliteDb, type PgliteDb } from '../src/db/pglite.js';
import { createPostgresDb } from '../src/db/postgres.js';
import { databaseUrl } from './store-templates.js';

/**
 * Fresh stores for tests that need one of their own, made from what the run's set-up prepared
 * (test/store-templates.ts): an embedded store loaded from a data directory dumped once, a
 * PostgreSQL database copied from the migrated template. Each costs a fraction of a second.
 */
export interface FreshStore {
  db: Db;
  /** DATABASE_URL of its database, on PostgreSQL. */
  url: string | undefined;
  close(): Promise<void>;
}

export interface FreshOptions {
  /** false: a store that has never seen a migration (a test of migrating wants it so). */
  migrated?: boolean;
}

// Read once per worker; PGlite only reads a Blob, so one serves every store opened from it.
const snapshots = new Map<string, Blob>();

function snapshot(migrated: boolean): Blob {
  const path = inject('storeTemplates').pglite[migrated ? 'migrated' : 'blank'];
  let blob = snapshots.get(path);
  if (!blob) {
    blob = new Blob([new Uint8Array(readFileSync(path))]);
    snapshots.set(path, blob);
  }
  return blob;
}

/** An in-memory embedded store of its own, whatever store the run uses. */
export function freshPglite({ migrated = true }: FreshOptions = {}): Promise<PgliteDb> {
  return createPgliteDb(undefined, { loadDataDir: snapshot(migrated) });
}

/**
 * An embedded store's directory as `kopek serve` would have left it after its first start's migrations
 * (no shop yet), written from the migrated template: a first start there skips creating the cluster.
 */
export async function seedPgliteDir(dir: string): Promise<void> {
  const db = await createPgliteDb(dir, { loadDataDir: snapshot(true) });
  await db.close();
}

/**
 * A PostgreSQL database of its own (DATABASE_URL must be set): a copy of the run's migrated template,
 * or an empty one. The end of the run drops it.
 */
export async function freshPostgres(
  { migrated = true }: FreshOptions = {},
  poolSize = 6,
): Promise<FreshStore> {
  const base = process.env.DATABASE_URL;
  const pgTemplates = inject('storeTemplates').pg;
  if (!base || !pgTemplates) throw new Error('a PostgreSQL store needs DATABASE_URL');
  const name = `${pgTemplates.prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${migrated ? pgTemplates.template : 'template0'}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(base, name);
  const db = createPostgresDb(url, poolSize);
  return { db, url, close: () => db.close() };
}

/** A store of its own on the run's kind of store: PostgreSQL with DATABASE_URL, else embedded. */
export async function freshStore(options: FreshOptions = {}): Promise<FreshStore> {
  if (process.env.DATABASE_URL) return freshPostgres(options);
  const db = await freshPglite(options);
  return { db, url: undefined, close: () => db.close() };
}

/** DATABASE_URL of the store the run's test files share, on PostgreSQL. */
export function sharedStoreUrl(): string | undefined {
  return inject('storeTemplates').pg?.sharedUrl;
}
