import { createHmac, createVerify, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deliverDue } from '../../src/notifications/deliver.js';
import type { DueRow } from '../../src/notifications/queue.js';
import type { ShopRow } from '../../src/shops/repository.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { cardBody } from '../subscriptions/helpers.js';

/** A real HTTP receiver of notifications, as a shop runs one, whose answers a test decides. */

export interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as it arrived. */
  body: string;
  json: Record<string, unknown>;
}

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Do not answer at all (the sender times out). */
  hang?: boolean;
  /** Drop the connection without an answer. */
  reset?: boolean;
  /** Answer after this long. */
  delayMs?: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Decides the answer to the i-th request (from 0). */
  answer: (i: number, r: Received) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(answer: Receiver['answer'] = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  let receiver: Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body);
      } catch {
        // Kept as text: a test asserts on it.
      }
      const r = { url: req.url ?? '', headers: req.headers, body, json };
      const a = receiver.answer(received.length, r);
      received.push(r);
      if (a.reset) {
        req.socket.destroy();
        return;
      }
      if (a.hang) {
        hanging.add(res);
        return;
      }
      const send = () => {
        res.writeHead(a.status, a.headers ?? {});
        res.end(a.body ?? '');
      };
      if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** Whether `r` carries a valid Content-Signature of its raw body under `publicKey` (PEM). */
export function signatureValid(r: Received, publicKey: string): boolean {
  const signature = r.headers['content-signature'];
  if (typeof signature !== 'string') return false;
  return createVerify('RSA-SHA256').update(r.body).verify(publicKey, signature, 'base64');
}

/**
 * A receiver's check of Kopek-Signature, as the README shows it: `t` at most 5 minutes before `nowSeconds`,
 * and any of the v1 values an HMAC-SHA256 of `<t>.<raw body>` under `secret`.
 */
export function kopekSignatureValid(r: Received, secret: string, nowSeconds: number): boolean {
  const header = r.headers['kopek-signature'];
  if (typeof header !== 'string') return false;
  const parts = header.split(',').map((p) => p.split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  // Older than 5 minutes: a replay. (A test shop's clock may run ahead: a later t is its clock.)
  if (!Number.isInteger(t) || nowSeconds - t > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${r.body}`).digest();
  return parts
    .filter(([k]) => k === 'v1')
    .some(([, v]) => {
      const given = Buffer.from(v ?? '', 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

/** The v1 values of a Kopek-Signature header, in order. */
export const v1Values = (r: Received): string[] =>
  String(r.headers['kopek-signature'] ?? '')
    .split(',')
    .filter((p) => p.startsWith('v1='))
    .map((p) => p.slice(3));

/** A claimed notification of the shop of `row` to `url`, as the deliverer's claim answers it. */
export function dueRowOf(row: ShopRow, url: string, payload: Record<string, unknown> = { id: 'x' }): DueRow {
  return {
    id: 1,
    shop_id: row.id,
    event: 'created.subscription',
    payload,
    url,
    attempts: 1,
    series_from: 0,
    test: row.test,
    clock_offset_ms: row.clock_offset_ms,
    private_key_enc: row.private_key_enc,
    secret_enc: row.secret_enc,
    notification_auth: row.notification_auth,
    webhook_secret_enc: row.webhook_secret_enc,
    webhook_secret_prev_enc: row.webhook_secret_prev_enc,
    webhook_secret_prev_until: row.webhook_secret_prev_until,
  };
}

export interface NotifyShop {
  h: Harness;
  shop: TestShop;
  api: Client;
  /** Delivers this shop's due notifications now, in-process, as the loop of `kopek serve` does. */
  deliver: (opts?: Omit<Parameters<typeof deliverDue>[1], 'shopId'>) => ReturnType<typeof deliverDue>;
  /** Creates a monthly card subscription whose notifications go to `url`; answers its id. */
  subscribe: (url: string, extra?: Record<string, unknown>) => Promise<string>;
}

export async function notifyShop(input: Parameters<typeof newShop>[1] = {}): Promise<NotifyShop> {
  const h = await harness();
  const shop = await newShop(h, input);
  const api = client(h, shop);
  return {
    h,
    shop,
    api,
    deliver: (opts = {}) => deliverDue(h.app.services, { ...opts, shopId: shop.shop.id }),
    subscribe: async (url, extra = {}) => {
      const res = await api.post('/subscriptions', cardBody({ notification_url: url, ...extra }));
      if (res.status !== 201) throw new Error(`subscription not created: ${res.status} ${res.text}`);
      return res.body.id as string;
    },
  };
}
