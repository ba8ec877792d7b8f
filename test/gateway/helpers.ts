import { randomUUID } from 'node:crypto';
import type { ChargeRequest } from '../../src/gateway/client.js';
import type { CreateShopInput } from '../../src/shops/service.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';

/** A valid card as the platform's clients send it (the clock starts in January 2026). */
export const card = (number = '4200000000000000', extra: Record<string, unknown> = {}) => ({
  number,
  verification_value: '123',
  holder: 'John Doe',
  exp_month: '01',
  exp_year: '2030',
  ...extra,
});

export const charge = (extra: Record<string, unknown> = {}) => ({
  amount: 1999,
  currency: 'EUR',
  description: 'Test order',
  tracking_id: `order-${randomUUID()}`,
  credit_card: card(),
  ...extra,
});

export interface GatewayShop {
  h: Harness;
  shop: TestShop;
  api: Client;
  /** POSTs `{"request": request}` to a gateway path. */
  send: (path: string, request: unknown) => ReturnType<Client['post']>;
  pay: (extra?: Record<string, unknown>) => ReturnType<Client['post']>;
  authorize: (extra?: Record<string, unknown>) => ReturnType<Client['post']>;
}

export async function gatewayShop(input: CreateShopInput = {}): Promise<GatewayShop> {
  const h = await harness();
  const shop = await newShop(h, input);
  const api = client(h, shop);
  const send = (path: string, request: unknown) => api.post(path, { request });
  return {
    h,
    shop,
    api,
    send,
    pay: (extra = {}) => send('/transactions/payments', charge(extra)),
    authorize: (extra = {}) => send('/transactions/authorizations', charge(extra)),
  };
}

/** A payment as a GatewayClient is asked for one (the HTTP client tests). */
export const order = (extra: Partial<ChargeRequest> = {}): ChargeRequest => ({
  amount: 1500,
  currency: 'EUR',
  description: 'Remote order',
  tracking_id: `remote-${randomUUID()}`,
  credit_card: card(),
  ...extra,
});

/** What `promise` rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
