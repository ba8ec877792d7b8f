import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

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
  /** Live shops' notifications may go to private, loopback and link-local addresses (NOTIFY_ALLOW_PRIVATE). */
  notifyAllowPrivate: boolean;
  /**
   * TRUST_PROXY: which proxies' X-Forwarded-* headers to believe (false, true, or the proxies'
   * addresses and ranges), so the cabinet sees https and the buyer's address behind a load balancer.
   */
  trustProxy: boolean | string[];
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
  const allowPrivateRaw = (value('NOTIFY_ALLOW_PRIVATE') ?? 'false').toLowerCase();
  if (allowPrivateRaw !== 'true' && allowPrivateRaw !== 'false')
    problems.push(`NOTIFY_ALLOW_PRIVATE must be true or false, got "${allowPrivateRaw}"`);

  const trustProxyRaw = value('TRUST_PROXY') ?? 'false';
  let trustProxy: boolean | string[] = false;
  if (trustProxyRaw === 'true' || trustProxyRaw === 'false') trustProxy = trustProxyRaw === 'true';
  else if (/^[0-9a-fA-F.:/,\s]+$/.test(trustProxyRaw))
    trustProxy = trustProxyRaw
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
  else
    problems.push(
      `TRUST_PROXY must be true, false, or the proxies' addresses such as 10.0.0.0/8,127.0.0.1, got "${trustProxyRaw}"`,
    );

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
    databasePoolSize,
    databasePrepare,
    dataDir,
    masterKey,
    masterKeyPrevious,
    logLevel,
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
    notifyAllowPrivate: allowPrivateRaw === 'true',
    trustProxy,
  };
}
