import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { GatewayInFlight, GatewayTimeout } from '../../src/gateway/client.js';
import { closeGatewayPools, GatewayHttpError, HttpGatewayClient } from '../../src/gateway/http-client.js';
import { order, rejection } from './helpers.js';
import { fakeGateway, freePort } from './http-client-process.js';

/**
 * The HTTP gateway client against servers that do not answer as a gateway: a silent one, broken
 * ones, none at all. Never a charge result, always an error that says what is known.
 */

afterAll(() => closeGatewayPools());

describe('the HTTP client when the answer is not a result', () => {
  const options = (url: string, extra = {}) => ({ url, shopId: 7, secret: 'ab'.repeat(32), ...extra });

  it('throws GatewayTimeout with the tracking_id when the gateway does not answer in time', async () => {
    const silent = await fakeGateway();
    try {
      const client = new HttpGatewayClient(options(silent.url, { timeoutMs: 300 }));
      const err = await rejection(client.payment(order({ tracking_id: 'lost-1' })));
      expect(err).toBeInstanceOf(GatewayTimeout);
      expect(err).toMatchObject({ trackingId: 'lost-1' });
      expect(silent.requests()).toBe(1);
    } finally {
      await silent.close();
    }
  });

  it.each([
    [500, 'application/json', '{"message":"Internal error","errors":{"base":["x"]}}'],
    [502, 'text/html', '<html>Bad gateway</html>'],
    [200, 'application/json', '{"unexpected":true}'],
    [404, 'application/json', '{"message":"No route","errors":{"base":["No route"]}}'],
  ])('throws GatewayHttpError, not a result, for %i %s', async (status, type, body) => {
    const broken = await fakeGateway((res) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    });
    try {
      const err = await rejection(new HttpGatewayClient(options(broken.url)).payment(order()));
      expect(err).toBeInstanceOf(GatewayHttpError);
      expect((err as GatewayHttpError).status).toBe(status);
    } finally {
      await broken.close();
    }
  });

  it("throws GatewayTimeout without a uid for a proxy's 504, which names no transaction", async () => {
    const proxy = await fakeGateway((res) => {
      res.writeHead(504, { 'content-type': 'text/html' });
      res.end('<html>Gateway Timeout</html>');
    });
    try {
      const err = await rejection(
        new HttpGatewayClient(options(proxy.url)).payment(order({ tracking_id: 'lost-2' })),
      );
      expect(err).toBeInstanceOf(GatewayTimeout);
      expect(err).toMatchObject({ trackingId: 'lost-2', uid: undefined });
    } finally {
      await proxy.close();
    }
  });

  it('sends the Idempotency-Key it is given, and reads a 409 then as "in flight", never a refusal', async () => {
    const busy = await fakeGateway((res) => {
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          response: {
            message: 'A request with this Idempotency-Key is still being processed; retry later.',
            errors: { base: ['A request with this Idempotency-Key is still being processed; retry later'] },
          },
        }),
      );
    });
    try {
      const client = new HttpGatewayClient(options(busy.url));
      const keyed = await rejection(
        client.payment(order({ tracking_id: 'busy-1' }), { idempotencyKey: 'kopek-charge:busy-1' }),
      );
      expect(busy.headers()?.['idempotency-key']).toBe('kopek-charge:busy-1');
      expect(keyed).toBeInstanceOf(GatewayInFlight);
      expect(keyed).not.toBeInstanceOf(ApiError);
      expect(keyed).toMatchObject({ idempotencyKey: 'kopek-charge:busy-1', trackingId: 'busy-1' });
      const token = await rejection(client.tokenize({ token: 'x' }, { idempotencyKey: 'kopek-card:k' }));
      expect(token).toBeInstanceOf(GatewayInFlight);
      // Without a key no header goes, and a 409 is the request's own conflict, as in-process.
      const plain = await rejection(client.payment(order()));
      expect(busy.headers()?.['idempotency-key']).toBeUndefined();
      expect(plain).toBeInstanceOf(ApiError);
      expect((plain as ApiError).code).toBe('conflict');
    } finally {
      await busy.close();
    }
  });

  it('throws GatewayHttpError without a status when nothing listens (nothing was sent)', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const err = await rejection(new HttpGatewayClient(options(url)).payment(order()));
    expect(err).toBeInstanceOf(GatewayHttpError);
    expect((err as GatewayHttpError).status).toBeUndefined();
  });
});
