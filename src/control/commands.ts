import { type BillingSummary, billDue } from '../billing/index.js';
import { MasterKeyError } from '../crypto/keyring.js';
import { migrate, schemaState } from '../db/migrate.js';
import {
  type CreateShopInput,
  checkShopInput,
  createShop,
  listShopRows,
  ShopInputError,
} from '../shops/index.js';
import { keyCommands } from './key-commands.js';
import { shopCommands } from './shop-commands.js';
import type { StoreCommand } from './store-command.js';

export type { StoreCommand, StoreDeps } from './store-command.js';

export interface ShopShown {
  id: number;
  test: boolean;
  threeDs: boolean;
  publicKey: string;
  /** Shown once; only its hash is stored. */
  secret: string;
  publicUrl: string;
}

export interface ShopListed {
  id: number;
  name: string;
  test: boolean;
  threeDs: boolean;
  createdAt: string;
}

const command = <I, R>(c: StoreCommand<I, R>) => c;

/** Every CLI command that needs the store; a new one is a new entry (and its printing in the CLI). */
export const storeCommands = {
  migrate: command({
    parse: () => ({}),
    run: async ({ db }) => {
      const { newer } = await schemaState(db);
      return { applied: await migrate(db), newer };
    },
  }),
  'shop create': command({
    parse: parseCreateShopInput,
    run: async (deps, input: CreateShopInput): Promise<ShopShown> => {
      const { shop, secret } = await createShop(deps, input);
      const { id, test, threeDs, publicKey } = shop;
      return { id, test, threeDs, publicKey, secret, publicUrl: deps.publicUrl };
    },
  }),
  /** Bills everything due now, once, and tells what it did. */
  bill: command({
    parse: () => ({}),
    run: async (deps): Promise<BillingSummary> => billDue(deps),
  }),
  'shop list': command({
    parse: () => ({}),
    run: async ({ db }): Promise<ShopListed[]> =>
      (await listShopRows(db)).map((r) => ({
        id: r.id,
        name: r.name,
        test: r.test,
        threeDs: r.three_ds,
        createdAt: r.created_at.toISOString(),
      })),
  }),
  ...shopCommands,
  ...keyCommands,
};

export type StoreCommandName = keyof typeof storeCommands;
export type StoreInput<N extends StoreCommandName> = Parameters<(typeof storeCommands)[N]['run']>[1];
export type StoreResult<N extends StoreCommandName> = Awaited<ReturnType<(typeof storeCommands)[N]['run']>>;

export function isStoreCommand(name: string): name is StoreCommandName {
  return Object.hasOwn(storeCommands, name);
}

/** Errors that mean "your input is wrong", told to the user as they are, without a stack. */
export function isInputError(err: unknown): err is Error {
  // Master keys that do not open the store: told as they are, like a wrong option.
  return err instanceof ShopInputError || err instanceof MasterKeyError;
}

function parseCreateShopInput(raw: unknown): CreateShopInput {
  if (typeof raw !== 'object' || raw === null) throw new ShopInputError('shop create takes an object');
  const r = raw as Record<string, unknown>;
  const input: CreateShopInput = {};
  const take = <K extends 'id' | 'secret' | 'name' | 'threeDs' | 'test'>(key: K, type: string) => {
    if (r[key] === undefined) return;
    if (typeof r[key] !== type) throw new ShopInputError(`shop create: ${key} must be a ${type}`);
    input[key] = r[key] as CreateShopInput[K];
  };
  take('id', 'number');
  take('secret', 'string');
  take('name', 'string');
  take('threeDs', 'boolean');
  take('test', 'boolean');
  checkShopInput(input);
  return input;
}
