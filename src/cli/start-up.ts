/**
 * The parts of `kopek serve` that are not the process's own business (signals, listening): the
 * sandbox shop of a first start and the banner, so that tests run them on a store of their own.
 */
import type { Config } from '../config.js';
import { type ShopShown, type StoreDeps, storeCommands } from '../control/commands.js';
import type { Db } from '../db/db.js';
import { hasNoShops } from '../shops/index.js';
import { bannerText } from './banner.js';
import { cliCommand, processInvocation } from './invocation.js';
import { noShopsText, shopText } from './text.js';

export interface FirstStart {
  /** The store had no shop when the server started. */
  noShops: boolean;
  /** The test shop made on this start, with its key (shown once, in the banner). */
  sandbox?: ShopShown;
}

/**
 * The embedded store is a sandbox: its first start makes a test shop and shows its key. On
 * PostgreSQL shops are made on purpose (`kopek shop create`), and no key is ever printed here.
 */
export async function sandboxOnFirstStart(deps: StoreDeps): Promise<FirstStart> {
  const noShops = await hasNoShops(deps.db);
  if (!noShops || deps.db.kind !== 'pglite') return { noShops };
  const sandbox = await storeCommands['shop create'].run(deps, { name: 'Sandbox shop', test: true });
  return { noShops, sandbox };
}

/** What `kopek serve` prints once it listens, in one piece. */
export function startUpBanner(
  config: Pick<Config, 'dataDir' | 'publicUrl' | 'checkoutUrl' | 'gatewayUrl' | 'metricsHost' | 'cliCommand'>,
  store: Db['kind'],
  first: FirstStart,
  metricsPort?: number,
  cli: string = cliCommand(config, processInvocation()),
): string {
  const banner = [
    `\nKopek is running (${store === 'pglite' ? `embedded store in ${config.dataDir}` : 'PostgreSQL'})`,
    bannerText(config),
  ];
  if (metricsPort !== undefined) {
    const host = config.metricsHost.includes(':') ? `[${config.metricsHost}]` : config.metricsHost;
    banner.push(`  ${'Metrics:'.padEnd(15)}http://${host}:${metricsPort}/metrics`);
  }
  if (first.sandbox) banner.push('\nCreated a sandbox shop on this first start:', shopText(first.sandbox));
  else if (first.noShops) banner.push(`\n${noShopsText(cli)}`);
  return banner.join('\n');
}
