import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/db.js';
import type { Shop } from './shops/repository.js';

/** What every verb may use, whoever calls it: HTTP routes, pages, the scheduler or tests. */
export interface Services {
  db: Db;
  clock: Clock;
  config: Config;
  masterKey: Buffer;
  log: FastifyBaseLogger;
}

/** A verb's context: the services plus the shop it acts for. */
export interface Ctx extends Services {
  shop: Shop;
}
