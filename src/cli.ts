import { parseArgs } from 'node:util';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import { resolveMasterKey } from './crypto/master-key.js';
import { migrate } from './db/migrate.js';
import { openDb } from './db/open.js';
import { closeGatewayPools } from './gateway/http-client.js';
import { startFingerprintSweep } from './gateway/sweep.js';
import { startRuntime } from './server.js';
import { countShops, listShopRows } from './shops/repository.js';
import {
  type CreatedShop,
  type CreateShopInput,
  checkShopInput,
  createShop,
  ShopInputError,
} from './shops/service.js';

const USAGE = `Usage: kopek <command>

Commands:
  serve                      start the API, hosted pages and gateway (migrates first)
  migrate                    apply pending database migrations and exit
  shop create [--id N] [--secret HEX64] [--3ds] [--test] [--name NAME]
                             create a shop; prints its id, secret key and notification public key
  shop list                  list shops

Configuration comes from environment variables; see the README.`;

function printShop(created: CreatedShop, publicUrl: string): void {
  const { shop, secret } = created;
  console.log(
    `Shop id:     ${shop.id}${shop.test ? ' (test)' : ''}${shop.threeDs ? ' (3-D Secure on)' : ''}`,
  );
  console.log(`Secret key:  ${secret}   (shown once; keep it safe)`);
  console.log('Notification public key (verifies Content-Signature):');
  console.log(shop.publicKey.trim());
  console.log('\nTry it:');
  console.log(
    `  curl -u ${shop.id}:${secret} -H 'Content-Type: application/json' ${publicUrl}/customers -d '{"email":"jane@example.com","ip":"203.0.113.7"}'`,
  );
}

async function serve(): Promise<void> {
  const config = loadConfig();
  const runtime = await startRuntime(config);
  const { app, db, masterKey, log } = runtime;
  let sandbox: CreatedShop | undefined;
  if ((await countShops(db)) === 0) {
    sandbox = await createShop({ db, clock: systemClock, masterKey }, { name: 'Sandbox shop', test: true });
  }
  await app.listen({ port: config.port, host: config.host });
  const stopSweep = startFingerprintSweep({ db, clock: systemClock, log });
  console.log(
    `\nKopek is running (${db.kind === 'pglite' ? `embedded store in ${config.dataDir}` : 'PostgreSQL'})`,
  );
  console.log(`  API:      ${config.publicUrl}`);
  console.log(`  Docs:     ${config.publicUrl}/docs`);
  console.log(`  Checkout: ${config.checkoutUrl}`);
  console.log(`  Gateway:  ${config.gatewayUrl}`);
  console.log(`  Cabinet:  ${config.publicUrl}/cabinet`);
  if (sandbox) {
    console.log('\nCreated a sandbox shop on this first start:');
    printShop(sandbox, config.publicUrl);
  }
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    try {
      stopSweep();
      await app.close();
      await closeGatewayPools();
      await db.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function withDb<T>(fn: (deps: Awaited<ReturnType<typeof openDeps>>) => Promise<T>): Promise<T> {
  const deps = await openDeps();
  try {
    return await fn(deps);
  } finally {
    await deps.db.close();
  }
}

async function openDeps() {
  const config = loadConfig();
  const db = await openDb(config);
  return { config, db, masterKey: resolveMasterKey(config).key };
}

async function main(argv: string[]): Promise<number> {
  const [command, sub] = argv;
  if (command === 'serve') {
    await serve();
    return -1;
  }
  if (command === 'migrate') {
    return withDb(async ({ db }) => {
      const applied = await migrate(db);
      console.log(
        applied.length ? `Applied: ${applied.join(', ')}` : 'Nothing to apply; the schema is up to date.',
      );
      return 0;
    });
  }
  if (command === 'shop' && sub === 'create') {
    const { values } = parseArgs({
      args: argv.slice(2),
      options: {
        id: { type: 'string' },
        secret: { type: 'string' },
        name: { type: 'string' },
        '3ds': { type: 'boolean', default: false },
        test: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (values.id !== undefined && !/^\d+$/.test(values.id))
      throw new ShopInputError('--id must be a whole number');
    const input: CreateShopInput = {
      ...(values.id !== undefined ? { id: Number(values.id) } : {}),
      ...(values.secret !== undefined ? { secret: values.secret } : {}),
      ...(values.name !== undefined ? { name: values.name } : {}),
      threeDs: values['3ds'],
      test: values.test,
    };
    checkShopInput(input);
    return withDb(async ({ config, db, masterKey }) => {
      await migrate(db);
      const created = await createShop({ db, clock: systemClock, masterKey }, input);
      printShop(created, config.publicUrl);
      return 0;
    });
  }
  if (command === 'shop' && sub === 'list') {
    return withDb(async ({ db }) => {
      await migrate(db);
      const rows = await listShopRows(db);
      if (rows.length === 0) console.log('No shops yet. Create one with: kopek shop create');
      for (const r of rows) {
        const flags = [r.test && 'test', r.three_ds && '3ds'].filter(Boolean).join(', ');
        console.log(
          `${r.id}\t${r.name}${flags ? `\t(${flags})` : ''}\tcreated ${r.created_at.toISOString()}`,
        );
      }
      return 0;
    });
  }
  if (command === undefined || command === 'help' || command === '--help') {
    console.log(USAGE);
    return 0;
  }
  // A mistyped command is an error: say which, on stderr, so scripts do not take usage for output.
  console.error(`Unknown command: ${argv.join(' ')}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof ConfigError || err instanceof ShopInputError) console.error(err.message);
    else if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      console.error(`${err.message}\n\n${USAGE}`);
    } else console.error('kopek failed:', err);
    process.exit(1);
  },
);
