/**
 * The webhook benchmark's receiver: a node:http server on 127.0.0.1 that reads each POST's body and
 * answers 200 at once with an empty body, as a shop's receiver that queues the notification for later
 * should. It keeps, by event id (the Kopek-Event-Id header), when the notification's body had fully
 * arrived, so that the benchmark finds duplicates, losses and order per resource afterwards. Requests
 * without an event id (the baseline's) are only counted. Every `checkEvery`-th notification has its
 * Content-Signature checked against its shop's public key (named by the Authorization header).
 */
import { createPublicKey, createVerify, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  url: string;
  /** When each event's notification arrived, in ms on the wall clock (sub-ms precision), by id. */
  receivedAt: Map<number, number>;
  /** Event ids that arrived more than once, once per extra arrival. */
  duplicates: number[];
  /** Requests without an event id: the baseline's. */
  others: number;
  /** Requests in all. */
  requests: number;
  signatures: { checked: number; bad: number; unknownShop: number };
  /** The shops' public keys (PEM) by shop id, for the signatures checked. */
  trust(publicKeys: Map<number, string>): void;
  /** Resolves once `n` distinct events have arrived (counting those already in). */
  whenReceived(n: number): Promise<void>;
  close(): Promise<void>;
}

const EVENT_ID = /^evt_(\d+)$/;

export async function startReceiver(checkEvery = 100): Promise<Receiver> {
  // Wall-clock milliseconds, monotonic and finer than Date.now(): comparable with PostgreSQL's stamps.
  const origin = Date.now() - performance.now();
  const keys = new Map<number, KeyObject>();
  let wanted: { n: number; resolve: () => void } | undefined;
  const receiver: Receiver = {
    url: '',
    receivedAt: new Map(),
    duplicates: [],
    others: 0,
    requests: 0,
    signatures: { checked: 0, bad: 0, unknownShop: 0 },
    trust(publicKeys) {
      for (const [shop, pem] of publicKeys) keys.set(shop, createPublicKey(pem));
    },
    whenReceived(n) {
      if (receiver.receivedAt.size >= n) return Promise.resolve();
      return new Promise((resolve) => {
        wanted = { n, resolve };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  // Notifications to http:// carry no credentials to name their shop: the signature must verify
  // with one of the shops' keys.
  const check = (signature: string | undefined, body: Buffer) => {
    receiver.signatures.checked++;
    for (const key of keys.values()) {
      if (
        createVerify('RSA-SHA256')
          .update(body)
          .verify(key, signature ?? '', 'base64')
      )
        return;
    }
    receiver.signatures.bad++;
  };

  const server: Server = createServer((req, res) => {
    const header = req.headers['kopek-event-id'];
    const m = typeof header === 'string' ? EVENT_ID.exec(header) : null;
    const id = m ? Number(m[1]) : undefined;
    const chunks: Buffer[] = [];
    // Only the bodies whose signature is checked are kept; the others are read and dropped.
    const keep = id !== undefined && id % checkEvery === 0;
    req.on('data', (c: Buffer) => {
      if (keep) chunks.push(c);
    });
    req.on('end', () => {
      const at = origin + performance.now();
      receiver.requests++;
      res.writeHead(200, { 'content-length': '0' });
      res.end();
      if (id === undefined) {
        receiver.others++;
        return;
      }
      if (receiver.receivedAt.has(id)) receiver.duplicates.push(id);
      else receiver.receivedAt.set(id, at);
      if (id % checkEvery === 0) {
        const sig = req.headers['content-signature'];
        check(typeof sig === 'string' ? sig : undefined, Buffer.concat(chunks));
      }
      if (wanted && receiver.receivedAt.size >= wanted.n) {
        const w = wanted;
        wanted = undefined;
        w.resolve();
      }
    });
  });
  // Longer than the deliverers' keep-alive (4 s), so that they close idle connections, not the server.
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
