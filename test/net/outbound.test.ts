import { afterAll, describe, expect, it } from 'vitest';
import type { OutboundRules } from '../../src/net/address-rules.js';
import { outboundAgent } from '../../src/net/outbound.js';
import { postNotification } from '../../src/notifications/post.js';
import { type Receiver, startReceiver } from '../notifications/receiver.js';
import { fakeNet } from './fake-net.js';

/** One POST through the guarded connector: what it resolves, judges and connects to. */

let rx: Receiver;
afterAll(() => rx?.close());

const LIVE: OutboundRules = { testShop: false, embeddedStore: false, allowList: ['127.0.0.0/8', '::1/128'] };
const post = (url: string, rules: OutboundRules, net: ReturnType<typeof fakeNet>) =>
  postNotification({
    url,
    body: '{}',
    headers: { 'content-type': 'application/json' },
    rules,
    net,
    timeoutMs: 5000,
  });

describe('an outbound request', () => {
  it('connects to the addresses it judged, the next one when the first does not answer', async () => {
    rx = await startReceiver();
    // The receiver listens on 127.0.0.1 only: ::1 refuses the connection, and the next address is tried.
    const net = fakeNet({ 'both.test': ['::1', '127.0.0.1'] });
    const out = await post(`http://both.test:${rx.port}/hook`, LIVE, net);
    expect(out).toMatchObject({ statusCode: 200, error: null });
    expect(net.connects).toEqual(['::1', '127.0.0.1']);
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0]?.headers.host).toBe(`both.test:${rx.port}`);
  });

  it('answers a name without an address, and a refused one, as an error without a connection', async () => {
    const net = fakeNet({ 'empty.test': [], 'inside.test': ['10.0.0.7'] });
    expect(await post('http://empty.test/hook', LIVE, net)).toMatchObject({
      statusCode: null,
      response: null,
      error: 'ENOTFOUND: empty.test has no address',
    });
    expect(await post('http://nowhere.test/hook', LIVE, net)).toMatchObject({
      statusCode: null,
      error: 'getaddrinfo ENOTFOUND nowhere.test',
    });
    expect(await post('https://inside.test/hook', LIVE, net)).toMatchObject({
      statusCode: null,
      response: null,
      error:
        'refused: inside.test resolves to 10.0.0.7, a private address; live shops reach public addresses only, and the ranges listed in KOPEK_OUTBOUND_ALLOW',
    });
    expect(net.connects).toEqual([]);
    expect(net.strays).toEqual([]);
  });

  it('keeps the connections of differently ruled shops apart', () => {
    const net = fakeNet();
    const test = { ...LIVE, testShop: true };
    expect(outboundAgent(LIVE, net)).toBe(outboundAgent({ ...LIVE }, net));
    expect(outboundAgent(LIVE, net)).not.toBe(outboundAgent(test, net));
    expect(outboundAgent(LIVE, net)).not.toBe(outboundAgent({ ...LIVE, allowList: [] }, net));
  });
});
