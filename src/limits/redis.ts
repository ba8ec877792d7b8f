import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AddOptions, Counter, LimitStore } from './store.js';

/**
 * Counters in Redis (REDIS_URL), shared by every instance that names the same Redis and prefix. A
 * counter is a hash `{h: hits, r: window end in ms}` under `prefix + key`, changed by one script so
 * that concurrent instances never lose a count. The window's end is the caller's clock, kept in the
 * hash; Redis's own expiry only clears a counter a little after its window has ended.
 */
const ADD = `
local now = tonumber(ARGV[1])
local untilMs = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local ceiling = tonumber(ARGV[4])
local cur = redis.call('HMGET', KEYS[1], 'h', 'r')
local hits = tonumber(cur[1])
local resets = tonumber(cur[2])
if hits == nil or resets == nil or resets <= now then
  hits = n
  resets = untilMs
else
  hits = math.min(hits + n, ceiling)
  if ARGV[5] == '1' then resets = untilMs end
end
redis.call('HSET', KEYS[1], 'h', hits, 'r', resets)
redis.call('PEXPIRE', KEYS[1], math.max(resets - now, 1) + 60000)
return {hits, resets}
`;

const TAKE_BACK = `
local hits = tonumber(redis.call('HGET', KEYS[1], 'h'))
if hits ~= nil then redis.call('HSET', KEYS[1], 'h', math.max(hits - tonumber(ARGV[1]), 0)) end
return 0
`;

const MAX_HITS = 2_147_483_647;

export interface RedisLimitOptions {
  /** Put before every key, so several deployments (or test runs) can share one Redis. */
  prefix: string;
}

export function redisLimitStore(url: string, { prefix }: RedisLimitOptions): LimitStore {
  // The client (and ioredis itself) is loaded with the first command: a process that never counts in
  // Redis does not carry it.
  let client: Promise<Redis> | undefined;
  const redis = () =>
    (client ??= import('ioredis').then(({ Redis }) => {
      const r = new Redis(url, {
        // A request waits for a lost Redis at most once around, rather than for minutes of reconnecting.
        maxRetriesPerRequest: 1,
        connectTimeout: 5_000,
        lazyConnect: true,
      });
      // Errors reach the caller of each command; the client's own event would otherwise crash the process.
      r.on('error', () => {});
      return r;
    }));
  const run = scriptRunner(redis);
  return {
    kind: 'redis',
    async add(key, n, now, until, opts: AddOptions = {}): Promise<Counter> {
      const ceiling = opts.cap === undefined ? MAX_HITS : Math.min(MAX_HITS, opts.cap + n);
      const [hits, resets] = (await run(ADD, prefix + key, [
        now.getTime(),
        until.getTime(),
        n,
        ceiling,
        opts.extend ? '1' : '0',
      ])) as [number, number];
      return { hits: Number(hits), resetsMs: Number(resets) };
    },
    async read(key, now) {
      const [h, r] = await (await redis()).hmget(prefix + key, 'h', 'r');
      const hits = Number(h);
      const resetsMs = Number(r);
      if (h === null || r === null || !(resetsMs > now.getTime()) || !(hits > 0)) return undefined;
      return { hits, resetsMs };
    },
    async takeBack(key, n = 1) {
      await run(TAKE_BACK, prefix + key, [n]);
    },
    async forget(key) {
      await (await redis()).del(prefix + key);
    },
    async close() {
      if (client === undefined) return;
      const r = await client;
      if (r.status === 'wait' || r.status === 'end') {
        r.disconnect();
        return;
      }
      await r.quit().catch(() => r.disconnect());
    },
  };
}

/** Runs a script by its digest, loading it once when Redis does not know it yet. */
function scriptRunner(client: () => Promise<Redis>) {
  const digests = new Map<string, string>();
  return async (script: string, key: string, args: (string | number)[]): Promise<unknown> => {
    let sha = digests.get(script);
    if (!sha) {
      sha = createHash('sha1').update(script).digest('hex');
      digests.set(script, sha);
    }
    const redis = await client();
    try {
      return await redis.evalsha(sha, 1, key, ...args);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return redis.eval(script, 1, key, ...args);
    }
  };
}
