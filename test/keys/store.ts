import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { StoreDeps } from '../../src/control/commands.js';
import type { Keyring } from '../../src/crypto/keyring.js';
import { deriveKey, seal } from '../../src/crypto/secretbox.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgliteDb } from '../../src/db/pglite.js';
import { createPostgresDb } from '../../src/db/postgres.js';

/**
 * A store of its own for the rotation tests: a rotation walks every sealed value of the store, and
 * the shared test store holds values of other test workers, sealed under their own master keys.
 */
export interface FreshStore {
  db: Db;
  /** DATABASE_URL of its schema, on PostgreSQL. */
  url: string | undefined;
  close(): Promise<void>;
}

/** A store of its own: migrated, unless `migrated` is false (a test of `kopek migrate` wants it bare). */
export async function freshStore({ migrated = true } = {}): Promise<FreshStore> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const db = await createPgliteDb(undefined);
    if (migrated) await migrate(db);
    return { db, url: undefined, close: () => db.close() };
  }
  const schema = `kopek_keys_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  await admin(`CREATE SCHEMA ${schema}`);
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const db = createPostgresDb(u.toString(), 6);
  if (migrated) await migrate(db);
  return {
    db,
    url: u.toString(),
    async close() {
      await db.close();
      await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  };
}

export const silentLog = pino({ level: 'silent' }) as FastifyBaseLogger;

/** Configuration of an instance with these master keys. */
export const keysConfig = (current: Buffer, previous: Buffer[] = []) =>
  loadConfig({
    PUBLIC_URL: 'http://kopek.test',
    KOPEK_MASTER_KEY: current.toString('hex'),
    ...(previous.length > 0
      ? { KOPEK_MASTER_KEY_PREVIOUS: previous.map((k) => k.toString('hex')).join(',') }
      : {}),
    LOG_LEVEL: 'silent',
  });

/** What `kopek keys rotate` gets when it runs with `ring`. */
export function rotateDeps(db: Db, clock: Clock, ring: Keyring): StoreDeps {
  const config = keysConfig(ring.currentKey, ring.previousKeys);
  return { db, clock, masterKey: ring, publicUrl: config.publicUrl, config, log: silentLog };
}

/** A value sealed as Kopek sealed it before master key ids: bare base64, no key id. */
export const sealedBeforeKeyIds = (master: Buffer, purpose: string, text: string, aad = '') =>
  seal(deriveKey(master, purpose), text, aad);
