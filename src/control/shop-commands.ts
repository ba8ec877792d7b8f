/**
 * Store commands about one existing shop: its test clock and its settings. Each calls the verb the
 * API calls (GET/POST /test_clock, PATCH /shop), so both answer alike.
 */
import {
  type AdvanceSummary,
  advanceTestClock,
  readTestClock,
  type TestClockView,
} from '../billing/index.js';
import { ApiError, type ErrorTree } from '../core/errors.js';
import {
  changeShopSettings,
  confirmSigningKey,
  MAX_SHOP_ID,
  rotateShopKey,
  rotateSigningKey,
  rotateWebhookSecret,
  ShopInputError,
  type ShopRow,
  type ShopSettingsView,
  settingsView,
} from '../shops/index.js';
import type { StoreCommand, StoreDeps } from './store-command.js';

const command = <I, R>(c: StoreCommand<I, R>) => c;

// The API's field names as the CLI's options spell them.
const OPTION: Record<string, string> = { three_d_secure: '3ds' };
// Fields that are not options, as a sentence names them.
const LABEL: Record<string, string> = { pending_public_key: 'A pending signing key ' };

/** An API error told in the CLI's words: `--time-zone is not an IANA time zone ...`. */
function cliMessage(errors: ErrorTree): string {
  const parts: string[] = [];
  for (const [field, value] of Object.entries(errors)) {
    const name = field === 'base' ? '' : (LABEL[field] ?? `--${OPTION[field] ?? field.replace(/_/g, '-')} `);
    if (Array.isArray(value)) parts.push(...value.map((m) => `${name}${m}`));
    else parts.push(cliMessage(value));
  }
  return parts.join('; ');
}

/** Runs a verb, turning its 4xx answers into input errors the CLI prints as they are. */
async function forShop<R>(missing: string, run: () => Promise<R>): Promise<R> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') throw new ShopInputError(missing);
    if (err instanceof ApiError && err.status < 500) throw new ShopInputError(cliMessage(err.errors));
    throw err;
  }
}

function shopIdOf(raw: Record<string, unknown>): number {
  const id = raw.shop;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1 || id > MAX_SHOP_ID)
    throw new ShopInputError(`--shop must be a shop id from 1 to ${MAX_SHOP_ID}`);
  return id;
}

function objectOf(raw: unknown, name: string): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ShopInputError(`${name} takes an object`);
  return raw as Record<string, unknown>;
}

const noTestShop = (id: number) =>
  `shop ${id} is not a test shop (or does not exist): only test shops have a test clock`;

export interface ClockInput {
  shop: number;
  to?: string;
  by?: string;
}

function parseClockInput(raw: unknown): ClockInput {
  const r = objectOf(raw, 'clock');
  const input: ClockInput = { shop: shopIdOf(r) };
  for (const key of ['to', 'by'] as const) {
    if (r[key] === undefined) continue;
    if (typeof r[key] !== 'string') throw new ShopInputError(`--${key} must be text`);
    input[key] = r[key];
  }
  return input;
}

export interface ShopUpdateInput {
  shop: number;
  /** The fields of PATCH /shop. */
  settings: Record<string, unknown>;
}

/** After a change to a shop's row: a server holding the store sees it on its next request. */
function changed(deps: StoreDeps, shopId: number): void {
  deps.forgetShop?.(shopId);
}

export interface RotatedKey {
  shop: number;
  /** Shown once; stored as a hash and sealed for the shop's notifications. */
  secret: string;
}

/** A command on a shop's notification keys (`shop rotate-webhook-secret N` and the like). */
const keyCommand = (name: string, verb: (deps: StoreDeps, shopId: number) => Promise<ShopRow>) =>
  command({
    parse: (raw: unknown): { shop: number } => ({ shop: shopIdOf(objectOf(raw, name)) }),
    run: async (deps, input: { shop: number }): Promise<ShopSettingsView> => {
      const view = await forShop(`no shop with id ${input.shop}`, async () =>
        settingsView(deps, await verb(deps, input.shop)),
      );
      changed(deps, input.shop);
      return view;
    },
  });

export const shopCommands = {
  /** A new webhook signing secret; the old one signs beside it for 24 hours. */
  'shop rotate-webhook-secret': keyCommand('shop rotate-webhook-secret', rotateWebhookSecret),
  /** A new RSA key pair, pending until confirmed. */
  'shop rotate-signing-key': keyCommand('shop rotate-signing-key', (deps, id) => rotateSigningKey(deps, id)),
  /** The pending key pair signs from now on. */
  'shop confirm-signing-key': keyCommand('shop confirm-signing-key', confirmSigningKey),
  /** A new secret key for a shop: the old one stops working at once. */
  'shop rotate-key': command({
    parse: (raw: unknown): { shop: number } => ({ shop: shopIdOf(objectOf(raw, 'shop rotate-key')) }),
    run: async (deps, input: { shop: number }): Promise<RotatedKey> => {
      const secret = await rotateShopKey(deps, input.shop);
      if (secret === undefined) throw new ShopInputError(`no shop with id ${input.shop}`);
      changed(deps, input.shop);
      return { shop: input.shop, secret };
    },
  }),
  'clock show': command({
    parse: parseClockInput,
    run: (deps, input: ClockInput): Promise<TestClockView> =>
      forShop(noTestShop(input.shop), () => readTestClock(deps, input.shop)),
  }),
  'clock advance': command({
    parse: parseClockInput,
    run: async (deps, input: ClockInput): Promise<AdvanceSummary> => {
      const { shop, ...body } = input;
      try {
        return await forShop(noTestShop(shop), () => advanceTestClock(deps, shop, body));
      } finally {
        changed(deps, shop);
      }
    },
  }),
  'shop update': command({
    parse: (raw: unknown): ShopUpdateInput => {
      const r = objectOf(raw, 'shop update');
      return { shop: shopIdOf(r), settings: objectOf(r.settings ?? {}, 'shop update settings') };
    },
    run: async (deps, input: ShopUpdateInput): Promise<ShopSettingsView> => {
      const view = await forShop(`no shop with id ${input.shop}`, () =>
        changeShopSettings(deps, input.shop, input.settings),
      );
      changed(deps, input.shop);
      return view;
    },
  }),
};
