import { afterAll, describe, expect, it } from 'vitest';
import { GatewayTimeout } from '../../src/gateway/client.js';
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

  it('throws GatewayHttpError without a status when nothing listens (nothing was sent)', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const err = await rejection(new HttpGatewayClient(options(url)).payment(order()));
    expect(err).toBeInstanceOf(GatewayHttpError);
    expect((err as GatewayHttpError).status).toBeUndefined();
  });
});
