import { afterAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/context.js';
import type { Db } from '../../src/db/db.js';
import { deliverDue } from '../../src/notifications/deliver.js';
import { type FakeNet, fakeNet } from '../net/fake-net.js';
import { type NotifyShop, notifyShop, type Receiver, startReceiver } from './receiver.js';

/**
 * No shop can make Kopek send into the network it runs in. A shop's notification is judged on the
 * address it would connect to, after its name is resolved: cloud metadata and link-local addresses
 * never, loopback and private ones for live shops only within KOPEK_OUTBOUND_ALLOW, for test shops
 * also on the embedded store. A refused attempt is recorded with the reason and no response, and no
 * connection is opened. The network here is a fake one: names from a table, connections to
 * loopback only (any other is kept in `strays`, and every test checks there is none).
 */

let rx: Receiver;
afterAll(() => rx?.close());

interface Setting {
  allow?: string[];
  store: Db['kind'];
  names?: Record<string, string[]>;
}

/** The app's services as a Kopek on `store` with KOPEK_OUTBOUND_ALLOW=`allow` and its own fake network. */
function kopek(s: NotifyShop, setting: Setting): { services: Services; net: FakeNet } {
  const services = s.h.app.services;
  const net = fakeNet(setting.names);
  // The rules ask the store which it is; the same store, seen as the other kind, shows both rules.
  const db =
    services.db.kind === setting.store
      ? services.db
      : Object.create(services.db, { kind: { value: setting.store } });
  return {
    services: {
      ...services,
      db,
      outbound: net,
      config: { ...services.config, outboundAllow: setting.allow ?? [] },
    },
    net,
  };
}

async function deliver(s: NotifyShop, setting: Setting) {
  const { services, net } = kopek(s, setting);
  const summary = await deliverDue(services, { shopId: s.shop.shop.id });
  expect(net.strays).toEqual([]);
  return { summary, net };
}

/** The first attempt of each subscription's first notification, as GET /notifications/{id} shows it. */
async function firstAttempts(s: NotifyShop, subs: string[]) {
  const attempts = [];
  for (const sub of subs) {
    const [first] = (await s.api.get(`/notifications?resource_id=${sub}&event=created.subscription`)).body;
    const one = (await s.api.get(`/notifications/${first.id}`)).body;
    expect(one.status).toBe('pending');
    expect(one.attempts).toHaveLength(1);
    attempts.push(one.attempts[0]);
  }
  return attempts;
}

const NEVER =
  /^refused: .*, a link-local \(cloud metadata\) address; link-local and cloud metadata addresses are never reached$|^refused: .* is a link-local \(cloud metadata\) address; link-local and cloud metadata addresses are never reached$/;

describe('notification addresses', () => {
  it("refuses a test shop's cloud metadata URL in every spelling, without connecting", async () => {
    rx = await startReceiver();
    const s = await notifyShop({ test: true });
    const urls = [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/latest/meta-data/',
      'http://0251.0376.0251.0376/latest/meta-data/',
      'http://0xa9fea9fe/latest/meta-data/',
      'http://169.254.169.254./latest/meta-data/',
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
      'http://[::169.254.169.254]/latest/meta-data/',
      'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
      'http://[2002:a9fe:a9fe::]/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'https://[fe80::1]/hook',
      'http://metadata.test/latest/meta-data/',
      'http://mapped.test/latest/meta-data/',
      'http://rebound.test/latest/meta-data/',
    ];
    const subs = [];
    for (const url of urls) subs.push(await s.subscribe(url));
    // Even on the embedded store, with an operator's list that names every address.
    const { summary, net } = await deliver(s, {
      store: 'pglite',
      allow: ['0.0.0.0/0', '::/0'],
      names: {
        'metadata.test': ['169.254.169.254'],
        'mapped.test': ['::ffff:169.254.169.254'],
        // A name that answers a harmless address beside the metadata one.
        'rebound.test': ['127.0.0.1', '169.254.169.254'],
      },
    });
    expect(summary).toMatchObject({ attempts: urls.length, delivered: 0, retrying: urls.length });
    expect(net.connects).toEqual([]);
    expect(net.resolved).toEqual(['metadata.test', 'mapped.test', 'rebound.test']);
    const attempts = await firstAttempts(s, subs);
    for (const a of attempts) {
      expect(a).toMatchObject({ status_code: null, response: null });
      expect(a.error).toMatch(NEVER);
    }
    const errors = attempts.map((a) => a.error);
    expect(errors[0]).toMatch(/^refused: 169\.254\.169\.254 is a link-local/);
    expect(errors[5]).toMatch(/^refused: ::ffff:a9fe:a9fe \(169\.254\.169\.254\) is a link-local/);
    expect(errors[12]).toMatch(/^refused: metadata\.test resolves to 169\.254\.169\.254, a link-local/);
    expect(errors[13]).toMatch(
      /^refused: mapped\.test resolves to ::ffff:a9fe:a9fe \(169\.254\.169\.254\), a link-local/,
    );
    expect(errors[14]).toMatch(/^refused: rebound\.test resolves to 169\.254\.169\.254, a link-local/);
  });

  it("refuses a live shop's loopback, private and metadata addresses, by address and by name", async () => {
    rx ??= await startReceiver();
    const s = await notifyShop({ test: false });
    const urls = [
      `http://127.0.0.1:${rx.port}/hook`,
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      `http://localhost:${rx.port}/hook`,
      `http://[::ffff:127.0.0.1]:${rx.port}/hook`,
      `http://[::1]:${rx.port}/hook`,
      `http://2130706433:${rx.port}/hook`,
      `http://inside.test:${rx.port}/hook`,
    ];
    const subs = [];
    for (const url of urls) subs.push(await s.subscribe(url));
    // On the embedded store, which lets test shops (not live ones) reach loopback.
    const { summary, net } = await deliver(s, { store: 'pglite', names: { 'inside.test': ['10.1.2.3'] } });
    expect(summary).toMatchObject({ attempts: urls.length, delivered: 0, retrying: urls.length });
    expect(net.connects).toEqual([]);
    expect(rx.received).toEqual([]);
    const attempts = await firstAttempts(s, subs);
    for (const a of attempts) expect(a).toMatchObject({ status_code: null, response: null });
    const reasons = attempts.map((a) => a.error);
    const hint = '; live shops reach public addresses only, and the ranges listed in KOPEK_OUTBOUND_ALLOW';
    expect(reasons).toEqual([
      `refused: 127.0.0.1 is a loopback address${hint}`,
      `refused: 10.0.0.1 is a private address${hint}`,
      'refused: 169.254.169.254 is a link-local (cloud metadata) address; link-local and cloud metadata addresses are never reached',
      `refused: localhost resolves to 127.0.0.1, a loopback address${hint}`,
      `refused: ::ffff:7f00:1 (127.0.0.1) is a loopback address${hint}`,
      `refused: ::1 is a loopback address${hint}`,
      `refused: 127.0.0.1 is a loopback address${hint}`,
      `refused: inside.test resolves to 10.1.2.3, a private address${hint}`,
    ]);
  });

  it("lets a test shop on the embedded store notify its own machine, and not on PostgreSQL without the operator's list", async () => {
    rx ??= await startReceiver();
    const embedded = await notifyShop({ test: true });
    const sub = await embedded.subscribe(`http://localhost:${rx.port}/hook`);
    const { summary, net } = await deliver(embedded, { store: 'pglite' });
    expect(summary).toMatchObject({ delivered: 2 });
    expect(new Set(net.connects)).toEqual(new Set(['127.0.0.1']));
    expect(rx.received.filter((r) => r.json.id === sub)).toHaveLength(2);

    const onPostgres = await notifyShop({ test: true });
    const refused = await onPostgres.subscribe(`http://127.0.0.1:${rx.port}/hook`);
    const second = await deliver(onPostgres, { store: 'postgres' });
    expect(second.summary).toMatchObject({ delivered: 0, retrying: 1 });
    expect(second.net.connects).toEqual([]);
    expect(rx.received.filter((r) => r.json.id === refused)).toEqual([]);
    const [attempt] = await firstAttempts(onPostgres, [refused]);
    expect(attempt).toMatchObject({
      status_code: null,
      response: null,
      error:
        'refused: 127.0.0.1 is a loopback address; test shops reach other than public addresses on the embedded store only, or within KOPEK_OUTBOUND_ALLOW',
    });
  });

  it("lets every shop reach the ranges in the operator's KOPEK_OUTBOUND_ALLOW", async () => {
    rx ??= await startReceiver();
    for (const test of [false, true]) {
      const s = await notifyShop({ test });
      const sub = await s.subscribe(`http://receiver.test:${rx.port}/hook`);
      const { summary, net } = await deliver(s, {
        store: 'postgres',
        allow: ['127.0.0.0/8'],
        names: { 'receiver.test': ['127.0.0.1'] },
      });
      expect(summary).toMatchObject({ delivered: 2 });
      expect(new Set(net.connects)).toEqual(new Set(['127.0.0.1']));
      expect(rx.received.filter((r) => r.json.id === sub)).toHaveLength(2);
    }
  });
});
