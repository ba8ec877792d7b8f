import { parseArgs } from 'node:util';
import { billingMetrics, startBilling } from './billing/scheduler.js';
import { startCabinetPurge } from './cabinet/sessions.js';
import { startCheckoutExpirySweep } from './checkout/expiry.js';
import { bannerText } from './cli/banner.js';
import { keysRotateCommand } from './cli/key-commands.js';
import {
  clockCommand,
  describeBilling,
  NOTIFICATION_KEY_COMMANDS,
  notificationKeyCommand,
  rotateKeyCommand,
  shopUpdateCommand,
} from './cli/shop-commands.js';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import { type ShopShown, storeCommands } from './control/commands.js';
import { ControlError } from './control/protocol.js';
import { runStoreCommand } from './control/run.js';
import { holdDataDir } from './control/server.js';
import { MasterKeyError } from './crypto/keyring.js';
import { DataDirBusyError } from './db/data-dir-lock.js';
import { DataDirUnsafeError } from './db/data-dir-mode.js';
import { closeGatewayPools } from './gateway/http-client.js';
import { startFingerprintSweep } from './gateway/sweep.js';
import { startIdempotencyPurge } from './http/idempotency.js';
import { startMetricsListener } from './http/metrics.js';
import { mailMetrics, startMail } from './mail/scheduler.js';
import { closeNotificationAgents } from './notifications/post.js';
import { notificationMetrics, startDelivery } from './notifications/scheduler.js';
import { closeSigner } from './notifications/signer.js';
import { createLogger, startRuntime } from './server.js';
import { countShops } from './shops/repository.js';
import { type CreateShopInput, checkShopInput, ShopInputError } from './shops/service.js';

/** Exit status when DATA_DIR is held by another process that cannot run the command. */
const EXIT_STORE_BUSY = 3;

const USAGE = `Usage: kopek <command>

Commands:
  serve                      start the API, hosted pages and gateway (migrates first)
  migrate                    apply pending database migrations and exit
  shop create [--id N] [--secret HEX64] [--3ds] [--test] [--name NAME]
                             create a shop; prints its id, secret key and notification public key
  shop list                  list shops
  shop update N [--3ds on|off] [--email-notifications on|off] [--notification-email ADDRESS|none]
                [--return-url URL|none] [--time-zone ZONE] [--notification-auth basic|signature]
                             change a shop's settings; prints them
  shop rotate-key N          give a shop a new secret key (prints it once; the old one stops working)
  shop rotate-webhook-secret N
                             a new webhook signing secret; the old one signs beside it for 24 hours
  shop rotate-signing-key N  a new notification key pair, pending; prints its public key
  shop confirm-signing-key N sign notifications with the pending key pair from now on
  bill                       bill everything due now, once; prints what it did
  keys rotate [--batch-size N]
                             re-seal everything sealed with a previous master key under the current one,
                             while Kopek runs; prints what is left and when the previous key can go
  clock show --shop N        show a test shop's clock
  clock advance --shop N (--by DURATION | --to INSTANT)
                             move a test shop's clock forward (e.g. --by P1M, --to 2027-01-31T10:00:00Z),
                             billing in order everything due on the way; prints what ran

Configuration comes from environment variables; see the README.`;

const NO_SHOPS = `No shops yet. Create one (its secret key is printed once) with:
  kopek shop create --name 'My shop'          (add --test for a test shop)`;

function shopText(shop: ShopShown): string {
  const { secret } = shop;
  return [
    `Shop id:     ${shop.id}${shop.test ? ' (test)' : ''}${shop.threeDs ? ' (3-D Secure on)' : ''}`,
    `Secret key:  ${secret}   (shown once; keep it safe)`,
    'Notification public key (verifies Content-Signature):',
    shop.publicKey.trim(),
    '\nTry it:',
    `  curl -u ${shop.id}:${secret} -H 'Content-Type: application/json' ${shop.publicUrl}/customers -d '{"email":"jane@example.com","ip":"203.0.113.7"}'`,
  ].join('\n');
}

const printShop = (shop: ShopShown): void => console.log(shopText(shop));

async function serve(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config);
  // The embedded store is this process's alone; CLI commands reach it through the control socket.
  const held = config.databaseUrl ? undefined : await holdDataDir(config.dataDir, log);
  const { app, db, masterKey, wake } = await startRuntime(config, log, held?.lock);
  const deps = {
    db,
    clock: systemClock,
    masterKey,
    publicUrl: config.publicUrl,
    config,
    log,
    forgetShop: (id: number) => app.shopAuthenticator.forget(id),
  };
  // The embedded store is a sandbox: its first start makes a test shop and shows its key. On
  // PostgreSQL shops are made on purpose (`kopek shop create`), and no key is ever printed here.
  let sandbox: ShopShown | undefined;
  const noShops = (await countShops(db)) === 0;
  if (noShops && db.kind === 'pglite') {
    sandbox = await storeCommands['shop create'].run(deps, { name: 'Sandbox shop', test: true });
  }
  // Only now: a `kopek shop create` that arrives during the first start must not take the sandbox's place.
  held?.ready(deps);
  await app.listen({ port: config.port, host: config.host });
  const metrics = await startMetricsListener(app.metrics, config, log);
  const stopSweep = startFingerprintSweep({ db, clock: systemClock, log });
  const stopPurge = startIdempotencyPurge({ db, clock: systemClock, log });
  const stopExpiry = startCheckoutExpirySweep({ db, clock: systemClock, config, log });
  const stopCabinetPurge = startCabinetPurge({ db, clock: systemClock, log });
  const stopBilling = config.billing
    ? startBilling(deps, config.billingIntervalMs, billingMetrics(app.metrics, deps))
    : undefined;
  // Always on: without SMTP_URL it still turns events into the e-mails kept for shops to read.
  const stopMail = startMail(deps, config.mailIntervalMs, mailMetrics(app.metrics, deps));
  const stopDelivery = config.notifications
    ? startDelivery(deps, config.notifyIntervalMs, notificationMetrics(app.metrics, deps), wake)
    : undefined;
  // Before the banner: whoever waits for it (a supervisor, a test) may stop the server right away.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    try {
      stopSweep();
      stopPurge();
      stopExpiry();
      stopCabinetPurge();
      // Together: deliveries on their way may take up to their timeout to finish.
      await Promise.all([stopBilling?.(), stopDelivery?.(), stopMail()]);
      await held?.close();
      await metrics?.close();
      await app.close();
      await closeGatewayPools();
      await closeNotificationAgents();
      await closeSigner();
      await db.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // Started through npm (`npx kopek serve`), this process sits under a shell that npm's forwarded
  // SIGTERM kills without passing it on: the server goes when that parent does, instead of living on
  // as an orphan that still holds the store.
  if (process.env.npm_lifecycle_event) {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) void shutdown('parent exited');
    }, 500).unref();
  }
  // One write: whoever reads the banner (a supervisor, a test) never sees half of it.
  const banner = [
    `\nKopek is running (${db.kind === 'pglite' ? `embedded store in ${config.dataDir}` : 'PostgreSQL'})`,
    bannerText(config),
  ];
  if (metrics) {
    const host = config.metricsHost.includes(':') ? `[${config.metricsHost}]` : config.metricsHost;
    banner.push(`  ${'Metrics:'.padEnd(15)}http://${host}:${metrics.port}/metrics`);
  }
  if (sandbox) banner.push('\nCreated a sandbox shop on this first start:', shopText(sandbox));
  else if (noShops) banner.push(`\n${NO_SHOPS}`);
  console.log(banner.join('\n'));
}

async function main(argv: string[]): Promise<number> {
  const [command, sub] = argv;
  if (command === 'serve') {
    await serve();
    return -1;
  }
  if (command === 'migrate') {
    const { applied } = await runStoreCommand(loadConfig(), 'migrate', {});
    console.log(
      applied.length ? `Applied: ${applied.join(', ')}` : 'Nothing to apply; the schema is up to date.',
    );
    return 0;
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
    printShop(await runStoreCommand(loadConfig(), 'shop create', input));
    return 0;
  }
  if (command === 'shop' && sub === 'list') {
    const rows = await runStoreCommand(loadConfig(), 'shop list', {});
    if (rows.length === 0) console.log(NO_SHOPS);
    for (const r of rows) {
      const flags = [r.test && 'test', r.threeDs && '3ds'].filter(Boolean).join(', ');
      console.log(`${r.id}\t${r.name}${flags ? `\t(${flags})` : ''}\tcreated ${r.createdAt}`);
    }
    return 0;
  }
  if (command === 'shop' && sub === 'update') return shopUpdateCommand(argv.slice(2));
  if (command === 'shop' && sub === 'rotate-key') return rotateKeyCommand(argv.slice(2));
  const keySub = NOTIFICATION_KEY_COMMANDS.find((c) => c === sub);
  if (command === 'shop' && keySub !== undefined) return notificationKeyCommand(keySub, argv.slice(2));
  if (command === 'clock' && (sub === 'show' || sub === 'advance')) return clockCommand(sub, argv.slice(2));
  if (command === 'keys' && sub === 'rotate') return keysRotateCommand(argv.slice(2));
  if (command === 'bill' && sub === undefined) {
    const s = await runStoreCommand(loadConfig(), 'bill', {});
    console.log(`Billed: ${describeBilling(s)}`);
    return 0;
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
    if (err instanceof DataDirBusyError) {
      console.error(err.message);
      process.exit(EXIT_STORE_BUSY);
    }
    if (
      err instanceof ConfigError ||
      err instanceof ShopInputError ||
      err instanceof DataDirUnsafeError ||
      err instanceof MasterKeyError
    )
      console.error(err.message);
    else if (err instanceof ControlError && err.kind === 'input') console.error(err.message);
    else if (err instanceof ControlError) console.error('kopek failed:', err.message);
    else if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      console.error(`${err.message}\n\n${USAGE}`);
    } else console.error('kopek failed:', err);
    process.exit(1);
  },
);
