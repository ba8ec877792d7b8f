import { afterAll, describe, expect, it } from 'vitest';
import { refusalOf } from '../../src/notifications/address-guard.js';
import { deliverDue } from '../../src/notifications/deliver.js';
import { notifyShop, type Receiver, startReceiver } from './receiver.js';

/**
 * A live shop cannot make Kopek POST into its own network: loopback, private and link-local (cloud
 * metadata) addresses are refused when the notification is sent, after the name is resolved; the
 * attempt is recorded with the reason, and nothing reaches the address.
 */

let rx: Receiver;
afterAll(() => rx?.close());

describe('notification addresses of a live shop', () => {
  it('refuses loopback, private, metadata and names resolving to loopback, at send time', async () => {
    rx = await startReceiver();
    const s = await notifyShop({ test: false });
    const urls = [
      `http://127.0.0.1:${rx.port}/hook`,
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      `http://localhost:${rx.port}/hook`,
      `http://[::ffff:127.0.0.1]:${rx.port}/hook`,
      `http://[::1]:${rx.port}/hook`,
      `http://2130706433:${rx.port}/hook`,
    ];
    const subs = [];
    for (const url of urls) subs.push(await s.subscribe(url));

    // Each subscription's first event is tried once (its second waits behind it).
    expect(await s.deliver()).toMatchObject({ attempts: urls.length, delivered: 0, retrying: urls.length });
    expect(rx.received).toEqual([]);
    const reasons: string[] = [];
    for (const sub of subs) {
      const [first] = (await s.api.get(`/notifications?resource_id=${sub}&event=created.subscription`)).body;
      const one = (await s.api.get(`/notifications/${first.id}`)).body;
      expect(one.status).toBe('pending');
      expect(one.attempts).toHaveLength(1);
      expect(one.attempts[0]).toMatchObject({ status_code: null, response: null });
      reasons.push(one.attempts[0].error);
    }
    expect(reasons[0]).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    expect(reasons[1]).toMatch(/^refused: 10\.0\.0\.1 is a private address/);
    expect(reasons[2]).toMatch(/^refused: 169\.254\.169\.254 is a link-local \(cloud metadata\) address/);
    expect(reasons[3]).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(reasons[4]).toMatch(/^refused: .* is a loopback address/);
    expect(reasons[5]).toMatch(/^refused: ::1 is a loopback address/);
    expect(reasons[6]).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    for (const r of reasons) expect(r).toContain('NOTIFY_ALLOW_PRIVATE');
  });

  it('lets them through with NOTIFY_ALLOW_PRIVATE=true', async () => {
    const s = await notifyShop({ test: false });
    const sub = await s.subscribe(`http://localhost:${rx.port}/hook`);
    const services = s.h.app.services;
    const allowed = { ...services, config: { ...services.config, notifyAllowPrivate: true } };
    expect(await deliverDue(allowed, { shopId: s.shop.shop.id })).toMatchObject({ delivered: 2 });
    expect(rx.received.filter((r) => r.json.id === sub)).toHaveLength(2);
  });

  it('lets a test shop notify its own machine', async () => {
    const s = await notifyShop({ test: true });
    const sub = await s.subscribe(`http://localhost:${rx.port}/hook`);
    expect(await s.deliver()).toMatchObject({ delivered: 2 });
    expect(rx.received.filter((r) => r.json.id === sub)).toHaveLength(2);
  });

  it('takes only public unicast addresses, IPv4 inside IPv6 judged as IPv4', () => {
    for (const ok of ['93.184.215.14', '8.8.8.8', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '::ffff:8.8.8.8'])
      expect(refusalOf(ok), ok).toBeUndefined();
    const refused: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.255.0.9', /loopback/],
      ['10.1.2.3', /private/],
      ['172.16.0.1', /private/],
      ['192.168.1.1', /private/],
      ['169.254.169.254', /link-local/],
      ['100.100.100.200', /CGNAT/],
      ['0.0.0.0', /unspecified/],
      ['255.255.255.255', /broadcast/],
      ['224.0.0.1', /multicast/],
      ['::1', /loopback/],
      ['::', /unspecified/],
      ['fe80::1', /link-local/],
      ['fc00::1', /unique-local/],
      ['fd00:ec2::254', /unique-local/],
      ['ff02::1', /multicast/],
      ['::ffff:10.0.0.1', /private/],
      ['::ffff:169.254.169.254', /link-local/],
      ['64:ff9b::a00:1', /reserved/],
      ['2002:a00:1::', /reserved/],
      ['not-an-ip', /not an IP/],
    ];
    for (const [ip, why] of refused) expect(refusalOf(ip), ip).toMatch(why);
  });
});
