import { join } from 'node:path';
import type { Config } from '../config.js';
import { type DataDirLock, lockDataDir } from '../db/data-dir-lock.js';
import type { Db } from '../db/db.js';
import { createPostgresDb } from '../db/postgres.js';

/**
 * Opens PostgreSQL, or the embedded store under DATA_DIR. PGlite has no guard of its own: two
 * processes on one directory silently lose each other's writes. So the embedded store is opened only
 * under the DATA_DIR lock, taken here unless the caller already holds it; closing the store releases it.
 */
export async function openDb(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> &
    Partial<Pick<Config, 'databasePoolSize' | 'databasePrepare' | 'databaseDirectUrl'>>,
  heldLock?: DataDirLock,
): Promise<Db> {
  if (config.databaseUrl)
    return createPostgresDb(config.databaseUrl, config.databasePoolSize, {
      prepare: config.databasePrepare ?? true,
      ...(config.databaseDirectUrl ? { lockUrl: config.databaseDirectUrl } : {}),
    });
  const lock = heldLock ?? (await lockDataDir(config.dataDir, { command: commandLine() }));
  let db: Db;
  try {
    // Loaded only here: a process on PostgreSQL does not carry PGlite.
    const { createPgliteDb } = await import('../db/pglite.js');
    db = await createPgliteDb(join(config.dataDir, 'pglite'));
  } catch (err) {
    lock.release();
    throw err;
  }
  return {
    ...db,
    async close() {
      try {
        await db.close();
      } finally {
        lock.release();
      }
    },
  };
}

/** `kopek shop create`: the command words only, since options may carry a secret. */
function commandLine(): string {
  const words: string[] = [];
  for (const arg of process.argv.slice(2, 4)) {
    if (!/^[a-z]+$/.test(arg)) break;
    words.push(arg);
  }
  return ['kopek', ...words].join(' ');
}
