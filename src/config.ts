import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { parseAllowList } from './net/address-rules.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export type LogFormat = 'json' | 'pretty';

export interface Config {
  host: string;
  port: number;
  publicUrl: string;
  checkoutUrl: string;
  gatewayUrl: string;
  /** True when GATEWAY_URL names another server: charges then go over HTTP instead of in-process. */
  gatewayRemote: boolean;
  /**
   * GATEWAY_TOKEN: the secret a deployment shares with its gateway. The HTTP gateway client derives
   * each shop's gateway credential from it, and a gateway accepts that credential on its card routes.
   */
  gatewayToken: string | undefined;
  databaseUrl: string | undefined;
  /**
   * DATABASE_DIRECT_URL: PostgreSQL itself, past a pooler in transaction mode, for the one session
   * on which an instance holds its key locks (session advisory locks, which such a pooler would hand
   * to other clients). Unset: DATABASE_URL.
   */
  databaseDirectUrl: string | undefined;
  /** PostgreSQL connections each instance keeps at most (DATABASE_POOL_SIZE). */
  databasePoolSize: number;
  /** Whether statements run prepared (DATABASE_PREPARE); off for poolers that cannot keep them. */
  databasePrepare: boolean;
  dataDir: string;
  masterKey: Buffer | undefined;
  /**
   * KOPEK_MASTER_KEY_PREVIOUS: master keys still accepted for opening (comma-separated) while
   * `kopek keys rotate` re-seals what they sealed under KOPEK_MASTER_KEY.
   */
  masterKeyPrevious: Buffer[];
  logLevel: LogLevel;
  /**
   * LOG_FORMAT: `json` (one JSON object a line, for a log collector) or `pretty` (one short line per
   * request, for a person); unset, pretty when stdout is a terminal and JSON otherwise.
   */
  logFormat: LogFormat | undefined;
  /**
   * KOPEK_CLI: how Kopek's messages spell the command that runs the CLI where the operator is (the
   * image and compose.yaml set it); unset, it follows how this process was started.
   */
  cliCommand: string | undefined;
  bodyLimit: number;
  proofMaxBytes: number;
  /** Whether `kopek serve` runs the billing engine (BILLING=off turns it off for an instance). */
  billing: boolean;
  /** How often the billing engine looks for due subscriptions (BILLING_INTERVAL_MS). */
  billingIntervalMs: number;
  /** SMTP_URL: the server e-mails are sent through; unset, e-mails are kept in the store, not sent. */
  smtpUrl: string | undefined;
  /** MAIL_FROM: the address e-mails come from; the shop's name is shown beside it. */
  mailFrom: string;
  /** How often e-mail looks for new events and for e-mails due to be sent (MAIL_INTERVAL_MS). */
  mailIntervalMs: number;
  /** Whether `kopek serve` delivers notifications (NOTIFICATIONS=off turns it off for an instance). */
  notifications: boolean;
  /** How often the deliverer looks for due notifications (NOTIFY_INTERVAL_MS). */
  notifyIntervalMs: number;
  /** Notifications on their way at once per instance (NOTIFY_CONCURRENCY), and per shop of it. */
  notifyConcurrency: number;
  notifyShopConcurrency: number;
  /**
   * Threads that sign notifications (NOTIFY_SIGNING_THREADS): by default one fewer than the
   * machine's cores, at most 4; 0 signs on the event loop.
   */
  notifySigningThreads: number;
  /**
   * KOPEK_OUTBOUND_ALLOW: ranges of the operator's own network (`address/prefix`) that every shop's
   * notifications may reach besides public addresses; link-local and cloud metadata never are.
   */
  outboundAllow: readonly string[];
  /**
   * TRUST_PROXY: the proxies whose X-Forwarded-* headers to believe (their addresses and ranges), so
   * the cabinet sees https and the visitor's address behind a load balancer; false believes none.
   */
  trustProxy: false | string[];
  /** METRICS_TOKEN: the bearer token /metrics asks for on the main port; unset, it is not served there. */
  metricsToken: string | undefined;
  /** METRICS_PORT: a separate listener that serves /metrics only (on METRICS_HOST). */
  metricsPort: number | undefined;
  metricsHost: string;
  /**
   * REDIS_URL: where the limits keep their counters (API budgets, sign-in attempts) when set; unset,
   * PostgreSQL keeps them, or this process's memory on the embedded store.
   */
  redisUrl: string | undefined;
  /** REDIS_KEY_PREFIX: put before every key Kopek writes to Redis. */
  redisKeyPrefix: string;
  /**
   * The API's budget per shop (API_RATE_LIMIT requests per API_RATE_WINDOW seconds), shared by every
   * instance; null when API_RATE_LIMIT=0 turns it off.
   */
  apiRateLimit: { limit: number; windowMs: number } | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Reads and validates the environment; every wrong value is reported at once, each with its own message. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v === '' ? undefined : v;
  };

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };

  const url = (name: string, fallback: string): string => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    try {
      const u = new URL(raw);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
      return trimSlash(u.toString());
    } catch {
      problems.push(`${name} must be an absolute http(s) URL such as https://pay.example.com, got "${raw}"`);
      return fallback;
    }
  };

  const port = int('PORT', 3000, 0, 65535);
  const host = value('HOST') ?? '0.0.0.0';
  const publicUrl = url('PUBLIC_URL', `http://localhost:${port}`);
  const checkoutUrl = url('CHECKOUT_URL', publicUrl);
  const gatewayUrl = url('GATEWAY_URL', publicUrl);

  const databaseUrl = value('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const databaseDirectUrl = value('DATABASE_DIRECT_URL');
  if (databaseDirectUrl !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(databaseDirectUrl))
      problems.push('DATABASE_DIRECT_URL must start with postgres:// or postgresql://');
    else if (databaseUrl === undefined)
      problems.push('DATABASE_DIRECT_URL needs DATABASE_URL: it is the same database, reached past a pooler');
  }

  const dataDirRaw = value('DATA_DIR') ?? './data';
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(process.cwd(), dataDirRaw);

  let masterKey: Buffer | undefined;
  const keyRaw = value('KOPEK_MASTER_KEY');
  if (keyRaw !== undefined) {
    if (/^[0-9a-fA-F]{64}$/.test(keyRaw)) masterKey = Buffer.from(keyRaw, 'hex');
    else
      problems.push(
        'KOPEK_MASTER_KEY must be 64 hexadecimal characters (32 bytes), e.g. from `openssl rand -hex 32`',
      );
  } else if (databaseUrl !== undefined) {
    problems.push(
      'KOPEK_MASTER_KEY is required with DATABASE_URL: every instance must share it (generate one with `openssl rand -hex 32`)',
    );
  }

  const masterKeyPrevious: Buffer[] = [];
  const previousRaw = value('KOPEK_MASTER_KEY_PREVIOUS');
  if (previousRaw !== undefined) {
    const parts = previousRaw.split(',').map((p) => p.trim());
    if (parts.some((p) => !/^[0-9a-fA-F]{64}$/.test(p)))
      problems.push(
        'KOPEK_MASTER_KEY_PREVIOUS must be one or more previous master keys, 64 hexadecimal characters each, separated by commas',
      );
    else if (keyRaw === undefined)
      problems.push('KOPEK_MASTER_KEY_PREVIOUS needs KOPEK_MASTER_KEY: the key that seals from now on');
    else if (parts.some((p) => p.toLowerCase() === keyRaw.toLowerCase()))
      problems.push('KOPEK_MASTER_KEY_PREVIOUS must not repeat KOPEK_MASTER_KEY');
    else masterKeyPrevious.push(...parts.map((p) => Buffer.from(p, 'hex')));
  }

  const gatewayToken = value('GATEWAY_TOKEN')?.toLowerCase();
  const gatewayRemote =
    value('GATEWAY_URL') !== undefined && new URL(gatewayUrl).origin !== new URL(publicUrl).origin;
  if (gatewayToken !== undefined && !/^[0-9a-f]{64}$/.test(gatewayToken)) {
    problems.push('GATEWAY_TOKEN must be 64 hexadecimal characters, e.g. from `openssl rand -hex 32`');
  } else if (gatewayToken === undefined && gatewayRemote) {
    problems.push(
      'GATEWAY_TOKEN is required when GATEWAY_URL names another server: set the same value there (generate one with `openssl rand -hex 32`)',
    );
  }

  const levelRaw = (value('LOG_LEVEL') ?? 'info').toLowerCase();
  let logLevel: LogLevel = 'info';
  if ((LOG_LEVELS as readonly string[]).includes(levelRaw)) logLevel = levelRaw as LogLevel;
  else problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${levelRaw}"`);

  const formatRaw = value('LOG_FORMAT')?.toLowerCase();
  if (formatRaw !== undefined && formatRaw !== 'json' && formatRaw !== 'pretty')
    problems.push(`LOG_FORMAT must be json or pretty, got "${formatRaw}"`);
  const logFormat = formatRaw === 'json' || formatRaw === 'pretty' ? formatRaw : undefined;
  const cliCommand = value('KOPEK_CLI');
  if (cliCommand !== undefined && !/^[\x20-\x7e]{1,200}$/.test(cliCommand))
    problems.push(
      'KOPEK_CLI must be one line of at most 200 printable characters, such as `docker compose run --rm kopek`',
    );

  const bodyLimit = int('BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024);
  const databasePoolSize = int('DATABASE_POOL_SIZE', 10, 1, 1000);
  const prepareRaw = (value('DATABASE_PREPARE') ?? 'true').toLowerCase();
  if (prepareRaw !== 'true' && prepareRaw !== 'false')
    problems.push(`DATABASE_PREPARE must be true or false, got "${prepareRaw}"`);
  const databasePrepare = prepareRaw !== 'false';
  const proofMaxBytes = int('PROOF_MAX_BYTES', 10 * 1024 * 1024, 1024, 256 * 1024 * 1024);
  const billingRaw = (value('BILLING') ?? 'on').toLowerCase();
  if (billingRaw !== 'on' && billingRaw !== 'off')
    problems.push(`BILLING must be on or off, got "${billingRaw}"`);
  const billingIntervalMs = int('BILLING_INTERVAL_MS', 1000, 50, 3_600_000);
  const smtpUrl = value('SMTP_URL');
  // The value is not repeated: it may carry the SMTP password.
  if (smtpUrl !== undefined && !/^smtps?:\/\/[^/?#\s]+/i.test(smtpUrl))
    problems.push(
      'SMTP_URL must be an smtp:// or smtps:// URL such as smtp://user:pass@mail.example.com:587',
    );
  const mailFrom = value('MAIL_FROM') ?? `no-reply@${new URL(publicUrl).hostname}`;
  if (!/^[^\s@<>,;"]+@[^\s@<>,;"]+$/.test(mailFrom))
    problems.push(`MAIL_FROM must be one plain address such as billing@example.com, got "${mailFrom}"`);
  const mailIntervalMs = int('MAIL_INTERVAL_MS', 1000, 50, 3_600_000);
  const notificationsRaw = (value('NOTIFICATIONS') ?? 'on').toLowerCase();
  if (notificationsRaw !== 'on' && notificationsRaw !== 'off')
    problems.push(`NOTIFICATIONS must be on or off, got "${notificationsRaw}"`);
  const notifyIntervalMs = int('NOTIFY_INTERVAL_MS', 1000, 50, 3_600_000);
  const notifyConcurrency = int('NOTIFY_CONCURRENCY', 64, 1, 1000);
  const notifyShopConcurrency = int('NOTIFY_SHOP_CONCURRENCY', 4, 1, 1000);
  const notifySigningThreads = int(
    'NOTIFY_SIGNING_THREADS',
    Math.min(4, Math.max(0, availableParallelism() - 1)),
    0,
    16,
  );
  const outbound = parseAllowList(value('KOPEK_OUTBOUND_ALLOW') ?? '');
  problems.push(...outbound.problems);
  // Replaced: it let live shops reach every address, cloud metadata included.
  const allowPrivateRaw = value('NOTIFY_ALLOW_PRIVATE');
  if (allowPrivateRaw !== undefined && allowPrivateRaw.toLowerCase() !== 'false')
    problems.push(
      'NOTIFY_ALLOW_PRIVATE is no longer read: list the ranges of your network notifications may reach in KOPEK_OUTBOUND_ALLOW instead, e.g. KOPEK_OUTBOUND_ALLOW=10.0.0.0/8,127.0.0.1/32',
    );

  const trustProxy = trustedProxies(value('TRUST_PROXY'), problems);

  const metricsToken = value('METRICS_TOKEN');
  if (metricsToken !== undefined && !/^[\x21-\x7e]{32,256}$/.test(metricsToken))
    problems.push(
      'METRICS_TOKEN must be 32 to 256 printable characters without spaces, e.g. from `openssl rand -hex 32`',
    );
  const metricsPort = value('METRICS_PORT') === undefined ? undefined : int('METRICS_PORT', 0, 0, 65535);
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port)
    problems.push(`METRICS_PORT must differ from PORT (${port}): it is a listener of its own`);
  const metricsHost = value('METRICS_HOST') ?? '127.0.0.1';
  if (value('METRICS_HOST') !== undefined && metricsPort === undefined)
    problems.push('METRICS_HOST needs METRICS_PORT: it is the address of the separate /metrics listener');

  const redisUrl = value('REDIS_URL');
  // The value is not repeated: it may carry the Redis password.
  if (redisUrl !== undefined && !/^rediss?:\/\/[^\s]*$/i.test(redisUrl))
    problems.push('REDIS_URL must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379');
  const redisKeyPrefix = value('REDIS_KEY_PREFIX') ?? 'kopek:limits:';
  if (!/^[\x21-\x7e]{1,100}$/.test(redisKeyPrefix))
    problems.push(
      `REDIS_KEY_PREFIX must be 1 to 100 printable characters without spaces, got "${redisKeyPrefix}"`,
    );
  const apiLimit = int('API_RATE_LIMIT', 600_000, 0, 1_000_000_000);
  const apiWindowSec = int('API_RATE_WINDOW', 60, 1, 86_400);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host,
    port,
    publicUrl,
    checkoutUrl,
    gatewayUrl,
    gatewayRemote,
    gatewayToken,
    databaseUrl,
    databaseDirectUrl,
    databasePoolSize,
    databasePrepare,
    dataDir,
    masterKey,
    masterKeyPrevious,
    logLevel,
    logFormat,
    cliCommand,
    bodyLimit,
    proofMaxBytes,
    billing: billingRaw !== 'off',
    billingIntervalMs,
    smtpUrl,
    mailFrom,
    mailIntervalMs,
    notifications: notificationsRaw !== 'off',
    notifyIntervalMs,
    notifyConcurrency,
    notifyShopConcurrency,
    notifySigningThreads,
    outboundAllow: outbound.ranges,
    trustProxy,
    metricsToken,
    metricsPort,
    metricsHost,
    redisUrl,
    redisKeyPrefix,
    apiRateLimit: apiLimit === 0 ? null : { limit: apiLimit, windowMs: apiWindowSec * 1000 },
  };
}

// proxy-addr's names for the ranges of a proxy on this machine or network.
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: false, or the proxies' addresses, ranges (CIDR) and named ranges. Anything that
 * believes every sender (true, a /0 range) is refused: any client could then claim any address, and
 * the cabinet's sign-in limits count by address.
 */
function trustedProxies(raw: string | undefined, problems: string[]): false | string[] {
  if (raw === undefined || raw.toLowerCase() === 'false') return false;
  const everyone =
    "TRUST_PROXY=true would believe X-Forwarded-For from anyone, so any client could choose the address Kopek sees (and spread its sign-in attempts over made-up addresses); set TRUST_PROXY to your load balancers' addresses or ranges instead, e.g. TRUST_PROXY=10.0.0.0/8 or TRUST_PROXY=loopback";
  if (raw.toLowerCase() === 'true') {
    problems.push(everyone);
    return false;
  }
  const parts = raw.split(',').map((part) => part.trim());
  for (const part of parts) {
    if (NAMED_RANGES.includes(part)) continue;
    const cidr = part.includes('/');
    const valid = cidr
      ? ipaddr.IPv4.isValidCIDRFourPartDecimal(part) || ipaddr.IPv6.isValidCIDR(part)
      : ipaddr.IPv4.isValidFourPartDecimal(part) || ipaddr.IPv6.isValid(part);
    if (!valid) {
      problems.push(
        `TRUST_PROXY must list the proxies' addresses or ranges, separated by commas (such as 10.0.0.0/8,192.0.2.7 or loopback), got "${part}" in "${raw}"`,
      );
    } else if (cidr && ipaddr.parseCIDR(part)[1] === 0) {
      problems.push(
        `TRUST_PROXY range ${part} takes in every address: ${everyone.slice(everyone.indexOf('set '))}`,
      );
    }
  }
  return parts;
}
