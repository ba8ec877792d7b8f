import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import { redisLimitStore } from '../limits/redis.js';
import { type LimitStore, memoryLimitStore, postgresLimitStore } from '../limits/store.js';

/**
 * Where the limits' counters live, so that every instance counts against the same ones: Redis when
 * REDIS_URL is set, else the PostgreSQL database the instances share, else (the embedded store, one
 * process) this process's memory.
 */
export function openLimitStore(config: Pick<Config, 'redisUrl' | 'redisKeyPrefix'>, db: Db): LimitStore {
  if (config.redisUrl) return redisLimitStore(config.redisUrl, { prefix: config.redisKeyPrefix });
  if (db.kind === 'postgres') return postgresLimitStore(db);
  return memoryLimitStore();
}
