import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const KEY = 'ab'.repeat(32);

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has working defaults for an empty environment (embedded store)', () => {
    const c = loadConfig({});
    expect(c).toEqual({
      host: '0.0.0.0',
      port: 3000,
      publicUrl: 'http://localhost:3000',
      checkoutUrl: 'http://localhost:3000',
      gatewayUrl: 'http://localhost:3000',
      gatewayRemote: false,
      databaseUrl: undefined,
      databasePoolSize: 10,
      databasePrepare: true,
      dataDir: resolve(process.cwd(), 'data'),
      masterKey: undefined,
      masterKeyPrevious: [],
      logLevel: 'info',
      bodyLimit: 1024 * 1024,
      proofMaxBytes: 10 * 1024 * 1024,
      billing: true,
      billingIntervalMs: 1000,
      mailFrom: 'no-reply@localhost',
      mailIntervalMs: 1000,
      notifications: true,
      notifyIntervalMs: 1000,
      notifyConcurrency: 64,
      notifyShopConcurrency: 4,
      notifySigningThreads: Math.min(4, availableParallelism() - 1),
      outboundAllow: [],
      trustProxy: false,
      metricsToken: undefined,
      metricsPort: undefined,
      metricsHost: '127.0.0.1',
      redisUrl: undefined,
      redisKeyPrefix: 'kopek:limits:',
      apiRateLimit: { limit: 600_000, windowMs: 60_000 },
    });
  });

  it('believes forwarded headers only from the proxies TRUST_PROXY names', () => {
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1, ::1, fd00::/8, loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY must list/);
  });

  it('refuses a TRUST_PROXY that believes every sender, saying what to set instead', () => {
    for (const raw of ['true', 'TRUE']) {
      const [problem] = problemsOf({ TRUST_PROXY: raw });
      expect(problem).toContain('TRUST_PROXY=true would believe X-Forwarded-For from anyone');
      expect(problem).toContain("set TRUST_PROXY to your load balancers' addresses or ranges");
    }
    expect(problemsOf({ TRUST_PROXY: '10.0.0.1,0.0.0.0/0' })).toEqual([
      expect.stringMatching(/^TRUST_PROXY range 0\.0\.0\.0\/0 takes in every address: set TRUST_PROXY to/),
    ]);
    expect(problemsOf({ TRUST_PROXY: '::/0' })[0]).toContain('takes in every address');
  });

  it('refuses a TRUST_PROXY entry that is no address or range, each checked by itself', () => {
    for (const bad of [
      '10.0.0.300',
      '10.0.0.0/33',
      '0x7f.1',
      '127.1',
      'proxy.example',
      '10.0.0.1,',
      '::1/129',
    ])
      expect(problemsOf({ TRUST_PROXY: bad }), bad).toEqual([
        expect.stringContaining('TRUST_PROXY must list'),
      ]);
  });

  it('reads METRICS_TOKEN, METRICS_PORT and METRICS_HOST, and refuses wrong ones', () => {
    const token = 'cd'.repeat(16);
    const c = loadConfig({ METRICS_TOKEN: token, METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' });
    expect([c.metricsToken, c.metricsPort, c.metricsHost]).toEqual([token, 9464, '0.0.0.0']);
    expect(problemsOf({ METRICS_TOKEN: 'short' })).toEqual([
      expect.stringContaining('METRICS_TOKEN must be 32 to 256 printable characters'),
    ]);
    expect(problemsOf({ METRICS_TOKEN: `${token} x` })[0]).toContain('METRICS_TOKEN must be');
    expect(problemsOf({ METRICS_PORT: 'x' })[0]).toContain('METRICS_PORT must be a whole number');
    expect(problemsOf({ METRICS_PORT: '3000' })[0]).toContain('METRICS_PORT must differ from PORT (3000)');
    expect(problemsOf({ METRICS_HOST: '0.0.0.0' })[0]).toContain('METRICS_HOST needs METRICS_PORT');
  });

  it('treats blank values as unset', () => {
    const c = loadConfig({ PORT: '  ', LOG_LEVEL: '', PUBLIC_URL: ' ' });
    expect(c.port).toBe(3000);
    expect(c.logLevel).toBe('info');
    expect(c.publicUrl).toBe('http://localhost:3000');
  });

  it('reads every variable it knows', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      PUBLIC_URL: 'https://api.example.com/',
      CHECKOUT_URL: 'https://checkout.example.com',
      GATEWAY_URL: 'https://gateway.example.com',
      GATEWAY_TOKEN: 'CD'.repeat(32),
      DATABASE_URL: 'postgresql://kopek@db:5432/kopek',
      DATA_DIR: '/var/lib/kopek',
      KOPEK_MASTER_KEY: KEY,
      LOG_LEVEL: 'WARN',
      LOG_FORMAT: 'JSON',
      BODY_LIMIT: '2048',
      PROOF_MAX_BYTES: '4096',
      DATABASE_POOL_SIZE: '4',
      DATABASE_PREPARE: 'FALSE',
      DATABASE_DIRECT_URL: 'postgres://kopek@db-primary:5432/kopek',
    });
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      publicUrl: 'https://api.example.com',
      checkoutUrl: 'https://checkout.example.com',
      gatewayUrl: 'https://gateway.example.com',
      gatewayRemote: true,
      gatewayToken: 'cd'.repeat(32),
      databaseUrl: 'postgresql://kopek@db:5432/kopek',
      dataDir: '/var/lib/kopek',
      logLevel: 'warn',
      logFormat: 'json',
      bodyLimit: 2048,
      proofMaxBytes: 4096,
      databasePoolSize: 4,
      databasePrepare: false,
      databaseDirectUrl: 'postgres://kopek@db-primary:5432/kopek',
    });
    expect(c.masterKey?.toString('hex')).toBe(KEY);
  });

  it('takes DATABASE_DIRECT_URL only as a PostgreSQL URL beside DATABASE_URL', () => {
    const base = { PUBLIC_URL: 'http://a.example', KOPEK_MASTER_KEY: KEY };
    expect(loadConfig({ ...base, DATABASE_URL: 'postgres://db/kopek' }).databaseDirectUrl).toBeUndefined();
    expect(() =>
      loadConfig({ ...base, DATABASE_URL: 'postgres://db/kopek', DATABASE_DIRECT_URL: 'mysql://db/kopek' }),
    ).toThrow(/DATABASE_DIRECT_URL must start with postgres:\/\/ or postgresql:\/\//);
    expect(() => loadConfig({ ...base, DATABASE_DIRECT_URL: 'postgres://db/kopek' })).toThrow(
      /DATABASE_DIRECT_URL needs DATABASE_URL/,
    );
  });

  it('derives checkout and gateway addresses from PUBLIC_URL and keeps the gateway in-process then', () => {
    const c = loadConfig({ PUBLIC_URL: 'https://pay.example.com', GATEWAY_URL: 'https://pay.example.com/' });
    expect(c.checkoutUrl).toBe('https://pay.example.com');
    expect(c.gatewayUrl).toBe('https://pay.example.com');
    expect(c.gatewayRemote).toBe(false);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT', /PORT must be a whole number from 0 to 65535, got "abc"/],
    [{ PORT: '70000' }, 'PORT', /PORT must be a whole number from 0 to 65535, got "70000"/],
    [{ PORT: '-1' }, 'PORT', /PORT must be a whole number/],
    [{ PUBLIC_URL: 'ftp://x' }, 'PUBLIC_URL', /PUBLIC_URL must be an absolute http\(s\) URL.*"ftp:\/\/x"/],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL', /PUBLIC_URL must be an absolute http\(s\) URL.*"not a url"/],
    [{ CHECKOUT_URL: 'localhost:3000' }, 'CHECKOUT_URL', /CHECKOUT_URL must be an absolute http\(s\) URL/],
    [{ GATEWAY_URL: 'javascript:alert(1)' }, 'GATEWAY_URL', /GATEWAY_URL must be an absolute http\(s\) URL/],
    [
      { DATABASE_URL: 'mysql://root@localhost/kopek', KOPEK_MASTER_KEY: KEY },
      'DATABASE_URL',
      /DATABASE_URL must start with postgres:\/\/ or postgresql:\/\//,
    ],
    [{ KOPEK_MASTER_KEY: 'short' }, 'KOPEK_MASTER_KEY', /KOPEK_MASTER_KEY must be 64 hexadecimal characters/],
    [{ GATEWAY_TOKEN: 'secret' }, 'GATEWAY_TOKEN', /GATEWAY_TOKEN must be 64 hexadecimal characters/],
    [
      { PUBLIC_URL: 'https://api.example.com', GATEWAY_URL: 'https://gateway.example.com' },
      'GATEWAY_TOKEN',
      /GATEWAY_TOKEN is required when GATEWAY_URL names another server/,
    ],
    [{ KOPEK_MASTER_KEY: 'g'.repeat(64) }, 'KOPEK_MASTER_KEY', /KOPEK_MASTER_KEY must be 64 hexadecimal/],
    [{ LOG_FORMAT: 'colour' }, 'LOG_FORMAT', /LOG_FORMAT must be json or pretty, got "colour"/],
    [
      { LOG_LEVEL: 'loud' },
      'LOG_LEVEL',
      /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"/,
    ],
    [
      { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' },
      'KOPEK_MASTER_KEY',
      /KOPEK_MASTER_KEY is required with DATABASE_URL/,
    ],
    [{ BODY_LIMIT: '10' }, 'BODY_LIMIT', /BODY_LIMIT must be a whole number from 1024 to/],
    [
      { DATABASE_POOL_SIZE: '0' },
      'DATABASE_POOL_SIZE',
      /DATABASE_POOL_SIZE must be a whole number from 1 to/,
    ],
    [{ PROOF_MAX_BYTES: '1.5' }, 'PROOF_MAX_BYTES', /PROOF_MAX_BYTES must be a whole number/],
  ])('refuses %j, naming %s', (env, variable, message) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${variable} `));
    expect(problems[0]).toMatch(message);
  });

  it('reports every wrong value at once', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({
        PORT: 'abc',
        PUBLIC_URL: 'ftp://x',
        DATABASE_URL: 'mysql://root@localhost/kopek',
        KOPEK_MASTER_KEY: 'short',
        LOG_LEVEL: 'loud',
      });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const names = error?.problems.map((p) => p.split(' ')[0]);
    expect(names?.sort()).toEqual(['DATABASE_URL', 'KOPEK_MASTER_KEY', 'LOG_LEVEL', 'PORT', 'PUBLIC_URL']);
    // The message lists them too, one per line, for the operator reading the crash.
    for (const p of error?.problems ?? []) expect(error?.message).toContain(p);
    expect(error?.message.split('\n')).toHaveLength(6);
  });

  it('runs the billing engine unless BILLING=off, and checks the value and the interval', () => {
    expect(loadConfig({})).toMatchObject({ billing: true, billingIntervalMs: 1000 });
    expect(loadConfig({ BILLING: 'OFF', BILLING_INTERVAL_MS: '250' })).toMatchObject({
      billing: false,
      billingIntervalMs: 250,
    });
    expect(problemsOf({ BILLING: 'sometimes' })).toEqual(['BILLING must be on or off, got "sometimes"']);
    expect(problemsOf({ BILLING_INTERVAL_MS: '0' })[0]).toMatch(
      /^BILLING_INTERVAL_MS must be a whole number/,
    );
  });

  it('delivers notifications unless NOTIFICATIONS=off', () => {
    expect(
      loadConfig({
        NOTIFICATIONS: 'OFF',
        NOTIFY_INTERVAL_MS: '200',
        NOTIFY_CONCURRENCY: '128',
        NOTIFY_SHOP_CONCURRENCY: '2',
        NOTIFY_SIGNING_THREADS: '0',
      }),
    ).toMatchObject({
      notifications: false,
      notifyIntervalMs: 200,
      notifyConcurrency: 128,
      notifyShopConcurrency: 2,
      notifySigningThreads: 0,
    });
    expect(
      problemsOf({
        NOTIFICATIONS: 'maybe',
        NOTIFY_CONCURRENCY: '0',
        NOTIFY_SIGNING_THREADS: '17',
      }),
    ).toEqual([
      'NOTIFICATIONS must be on or off, got "maybe"',
      'NOTIFY_CONCURRENCY must be a whole number from 1 to 1000, got "0"',
      'NOTIFY_SIGNING_THREADS must be a whole number from 0 to 16, got "17"',
    ]);
  });

  it('reads the ranges of its own network the operator lets notifications reach (KOPEK_OUTBOUND_ALLOW)', () => {
    expect(
      loadConfig({ KOPEK_OUTBOUND_ALLOW: ' 127.0.0.1/32, 10.0.0.0/8,::1, fd00:0::/8 ,192.168.1.7' })
        .outboundAllow,
    ).toEqual(['127.0.0.1/32', '10.0.0.0/8', '::1/128', 'fd00::/8', '192.168.1.7/32']);
    expect(loadConfig({ KOPEK_OUTBOUND_ALLOW: '' }).outboundAllow).toEqual([]);
    // A range that contains link-local addresses is taken; they stay refused (test/net/address-rules).
    expect(loadConfig({ KOPEK_OUTBOUND_ALLOW: '0.0.0.0/0,::/0' }).outboundAllow).toEqual([
      '0.0.0.0/0',
      '::/0',
    ]);
    const hint = 'such as 10.0.0.0/8,fd00::/8';
    expect(
      problemsOf({
        KOPEK_OUTBOUND_ALLOW: 'localhost,10.0.0.0/33,0x7f000001/32,127.1,fe80::1%eth0,10.0.0.0/8',
      }),
    ).toEqual([
      `KOPEK_OUTBOUND_ALLOW must list address ranges ${hint}, got "localhost"`,
      `KOPEK_OUTBOUND_ALLOW must list address ranges ${hint}, got "10.0.0.0/33"`,
      `KOPEK_OUTBOUND_ALLOW must list address ranges ${hint}, got "0x7f000001/32"`,
      `KOPEK_OUTBOUND_ALLOW must list address ranges ${hint}, got "127.1"`,
      `KOPEK_OUTBOUND_ALLOW must list address ranges ${hint}, got "fe80::1%eth0"`,
    ]);
    expect(
      problemsOf({ KOPEK_OUTBOUND_ALLOW: '169.254.169.254/32,169.254.0.0/16,fe80::/64,fd00:ec2::254' }),
    ).toEqual([
      'KOPEK_OUTBOUND_ALLOW cannot allow "169.254.169.254/32": link-local and cloud metadata addresses are never reached',
      'KOPEK_OUTBOUND_ALLOW cannot allow "169.254.0.0/16": link-local and cloud metadata addresses are never reached',
      'KOPEK_OUTBOUND_ALLOW cannot allow "fe80::/64": link-local and cloud metadata addresses are never reached',
      'KOPEK_OUTBOUND_ALLOW cannot allow "fd00:ec2::254": link-local and cloud metadata addresses are never reached',
    ]);
    expect(problemsOf({ KOPEK_OUTBOUND_ALLOW: '::ffff:10.0.0.0/104,64:ff9b::a00:0/104' })).toEqual([
      'KOPEK_OUTBOUND_ALLOW: "::ffff:10.0.0.0/104" embeds IPv4 addresses, which are judged as IPv4: list the IPv4 range instead',
      'KOPEK_OUTBOUND_ALLOW: "64:ff9b::a00:0/104" embeds IPv4 addresses, which are judged as IPv4: list the IPv4 range instead',
    ]);
  });

  it('refuses NOTIFY_ALLOW_PRIVATE, replaced by KOPEK_OUTBOUND_ALLOW', () => {
    for (const v of ['true', 'TRUE', 'yes'])
      expect(problemsOf({ NOTIFY_ALLOW_PRIVATE: v })).toEqual([
        'NOTIFY_ALLOW_PRIVATE is no longer read: list the ranges of your network notifications may reach in KOPEK_OUTBOUND_ALLOW instead, e.g. KOPEK_OUTBOUND_ALLOW=10.0.0.0/8,127.0.0.1/32',
      ]);
    // `false` asked for what every shop now gets without it.
    expect(loadConfig({ NOTIFY_ALLOW_PRIVATE: 'false' }).outboundAllow).toEqual([]);
  });

  it('does not leak the master key into a problem message', () => {
    const wrong = `${'a'.repeat(63)}z`;
    const problems = problemsOf({ KOPEK_MASTER_KEY: wrong });
    expect(problems.join('\n')).not.toContain(wrong);
    expect(problemsOf({ GATEWAY_TOKEN: wrong }).join('\n')).not.toContain(wrong);
  });
});
