/**
 * The CLI's commands as one function: arguments in, text out through `io`, an exit status back. It
 * never exits the process, so tests run it in their own process, on a store of their own.
 */
import { format, parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { ControlError } from '../control/protocol.js';
import { runStoreCommand } from '../control/run.js';
import { MasterKeyError } from '../crypto/keyring.js';
import { DataDirBusyError } from '../db/data-dir-lock.js';
import { DataDirUnsafeError } from '../db/data-dir-mode.js';
import { SchemaBehindError } from '../db/migrate.js';
import { type CreateShopInput, checkShopInput, ShopInputError } from '../shops/index.js';
import type { CliContext, CliDeps, CliIo, StoreRunner } from './context.js';
import { cliCommand, processInvocation } from './invocation.js';
import { keysRotateCommand } from './key-commands.js';
import {
  clockCommand,
  describeBilling,
  NOTIFICATION_KEY_COMMANDS,
  notificationKeyCommand,
  rotateKeyCommand,
  shopUpdateCommand,
} from './shop-commands.js';
import { noShopsText, shopText, USAGE } from './text.js';

export type { CliDeps, CliIo } from './context.js';

/** Exit status when DATA_DIR is held by another process that cannot run the command. */
export const EXIT_STORE_BUSY = 3;

/**
 * Runs `kopek <argv>` and answers its exit status. Without `deps` the store is the one the
 * environment names (the embedded store, or a server holding it, or PostgreSQL); with `deps`, the
 * already-open store given. `serve` is the process's own business: src/cli.ts runs it.
 */
export async function runCli(argv: string[], io: CliIo, deps?: CliDeps): Promise<number> {
  let config: Config | undefined;
  const configOf = () => {
    config ??= deps?.config ?? loadConfig(io.env ?? process.env);
    return config;
  };
  const store: StoreRunner = (name, input, progress) =>
    runStoreCommand(configOf(), name, input, progress, deps);
  try {
    return await dispatch(argv, { io, store }, configOf);
  } catch (err) {
    return reportError(err, io);
  }
}

async function dispatch(argv: string[], ctx: CliContext, configOf: () => Config): Promise<number> {
  const { io, store } = ctx;
  const [command, sub] = argv;
  if (command === 'migrate') {
    const { applied, newer } = await store('migrate', {});
    io.out(applied.length ? `Applied: ${applied.join(', ')}` : 'Nothing to apply; the schema is up to date.');
    // A server of another release answers without it.
    if (newer?.length)
      io.out(
        `The schema also has migrations of a newer Kopek release: ${newer.join(', ')}. ` +
          'This Kopek runs on it as it is; upgrade it to that release.',
      );
    return 0;
  }
  if (command === 'shop' && sub === 'create') {
    io.out(shopText(await store('shop create', createInput(argv.slice(2)))));
    return 0;
  }
  if (command === 'shop' && sub === 'list') {
    const rows = await store('shop list', {});
    if (rows.length === 0)
      io.out(noShopsText(cliCommand(configOf(), { ...processInvocation(), env: io.env ?? process.env })));
    for (const r of rows) {
      const flags = [r.test && 'test', r.threeDs && '3ds'].filter(Boolean).join(', ');
      io.out(`${r.id}\t${r.name}${flags ? `\t(${flags})` : ''}\tcreated ${r.createdAt}`);
    }
    return 0;
  }
  if (command === 'shop' && sub === 'update') return shopUpdateCommand(ctx, argv.slice(2));
  if (command === 'shop' && sub === 'rotate-key') return rotateKeyCommand(ctx, argv.slice(2));
  const keySub = NOTIFICATION_KEY_COMMANDS.find((c) => c === sub);
  if (command === 'shop' && keySub !== undefined) return notificationKeyCommand(ctx, keySub, argv.slice(2));
  if (command === 'clock' && (sub === 'show' || sub === 'advance'))
    return clockCommand(ctx, sub, argv.slice(2));
  if (command === 'keys' && sub === 'rotate') return keysRotateCommand(ctx, argv.slice(2));
  if (command === 'bill' && sub === undefined) {
    const s = await store('bill', {});
    io.out(`Billed: ${describeBilling(s)}`);
    return 0;
  }
  if (command === undefined || command === 'help' || command === '--help') {
    io.out(USAGE);
    return 0;
  }
  // A mistyped command is an error: say which, on stderr, so scripts do not take usage for output.
  io.err(`Unknown command: ${argv.join(' ')}\n\n${USAGE}`);
  return 2;
}

/** `shop create`'s options, checked before the store is touched. */
function createInput(args: string[]): CreateShopInput {
  const { values } = parseArgs({
    args,
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
  return input;
}

/**
 * Tells what went wrong on `io.err` and answers the exit status: a mistake of the user's in one line
 * without a stack, anything else as a failure.
 */
export function reportError(err: unknown, io: Pick<CliIo, 'err'>): number {
  if (err instanceof DataDirBusyError) {
    io.err(err.message);
    return EXIT_STORE_BUSY;
  }
  if (
    err instanceof ConfigError ||
    err instanceof ShopInputError ||
    err instanceof DataDirUnsafeError ||
    err instanceof MasterKeyError ||
    err instanceof SchemaBehindError
  )
    io.err(err.message);
  else if (err instanceof ControlError && err.kind === 'input') io.err(err.message);
  else if (err instanceof ControlError) io.err(format('kopek failed:', err.message));
  else if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
    io.err(`${err.message}\n\n${USAGE}`);
  } else io.err(format('kopek failed:', err));
  return 1;
}
