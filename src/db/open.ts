import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Db } from './db.js';
import { createPgliteDb } from './pglite.js';
import { createPostgresDb } from './postgres.js';

export async function openDb(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> &
    Partial<Pick<Config, 'databasePoolSize' | 'databasePrepare'>>,
): Promise<Db> {
  if (config.databaseUrl)
    return createPostgresDb(config.databaseUrl, config.databasePoolSize, {
      prepare: config.databasePrepare ?? true,
    });
  return createPgliteDb(join(config.dataDir, 'pglite'));
}
