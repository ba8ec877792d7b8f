import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Db } from './db.js';
import { createPgliteDb } from './pglite.js';
import { createPostgresDb } from './postgres.js';

export async function openDb(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<Db> {
  if (config.databaseUrl) return createPostgresDb(config.databaseUrl);
  return createPgliteDb(join(config.dataDir, 'pglite'));
}
