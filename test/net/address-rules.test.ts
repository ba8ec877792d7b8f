import { describe, expect, it } from 'vitest';
import { decide, type OutboundRules, refusalText } from '../../src/net/address-rules.js';

/**
 * The decision for every address a shop may aim a request at, however it is written, for test and
 * live shops, on the embedded store and on PostgreSQL, with and without the operator's list. Each
 * spelling goes through the URL parser first, as a notification_url's host does.
 */

type Kind = 'never' | 'ten' | 'special' | 'public';

const SPELLINGS: [string, Kind][] = [
  // Cloud metadata, link-local: never, whatever the settings.
  ['169.254.169.254', 'never'],
  ['2852039166', 'never'],
  ['0251.0376.0251.0376', 'never'],
  ['0xa9fea9fe', 'never'],
  ['0xa9.0xfe.0xa9.0xfe', 'never'],
  ['169.254.43518', 'never'],
  ['169.254.169.254.', 'never'],
  ['169.254.0.1', 'never'],
  ['[::ffff:169.254.169.254]', 'never'],
  ['[::ffff:a9fe:a9fe]', 'never'],
  ['[::169.254.169.254]', 'never'],
  ['[::a9fe:a9fe]', 'never'],
  ['[::ffff:0:a9fe:a9fe]', 'never'],
  ['[64:ff9b::169.254.169.254]', 'never'],
  ['[64:ff9b::a9fe:a9fe]', 'never'],
  ['[64:ff9b:1::a9fe:a9fe]', 'never'],
  ['[64:ff9b:1:a9fe:a9:fe00::]', 'never'],
  ['[2002:a9fe:a9fe::1]', 'never'],
  ['[2001:0:4136:e378:8000:63bf:5601:5601]', 'never'],
  ['[2001:0:a9fe:a9fe::1]', 'never'],
  ['[fe80::1]', 'never'],
  ['[febf::a9fe:a9fe]', 'never'],
  ['[fd00:ec2::254]', 'never'],
  ['100.100.100.200', 'never'],
  ['168.63.129.16', 'never'],
  ['192.0.0.192', 'never'],
  // Private 10/8, in every spelling.
  ['10.0.0.1', 'ten'],
  ['012.0.0.1', 'ten'],
  ['0xa000001', 'ten'],
  ['167772161', 'ten'],
  ['10.1', 'ten'],
  ['[::ffff:10.0.0.1]', 'ten'],
  ['[::ffff:a00:1]', 'ten'],
  ['[::10.0.0.1]', 'ten'],
  ['[::ffff:0:a00:1]', 'ten'],
  ['[64:ff9b::a00:1]', 'ten'],
  ['[2002:a00:1::]', 'ten'],
  ['[2001:0:4136:e378:8000:63bf:f5ff:fffe]', 'ten'],
  // Loopback and the other special ranges.
  ['127.0.0.1', 'special'],
  ['2130706433', 'special'],
  ['0x7f000001', 'special'],
  ['0177.0.0.1', 'special'],
  ['127.1', 'special'],
  ['127.0.0.1.', 'special'],
  ['127.255.0.9', 'special'],
  ['[::1]', 'special'],
  ['[::ffff:127.0.0.1]', 'special'],
  ['[::ffff:7f00:1]', 'special'],
  ['[::127.0.0.1]', 'special'],
  ['[::7f00:1]', 'special'],
  ['[64:ff9b::7f00:1]', 'special'],
  ['[64:ff9b:1::7f00:1]', 'special'],
  ['[64:ff9b:1::808:808]', 'special'],
  ['[2002:7f00:1::]', 'special'],
  ['0.0.0.0', 'special'],
  ['0', 'special'],
  ['[::]', 'special'],
  ['172.16.0.1', 'special'],
  ['192.168.1.1', 'special'],
  ['100.64.0.1', 'special'],
  ['[fc00::1]', 'special'],
  ['[fd12:3456::1]', 'special'],
  ['224.0.0.1', 'special'],
  ['255.255.255.255', 'special'],
  ['198.51.100.7', 'special'],
  ['[2001:db8::1]', 'special'],
  ['[ff02::1]', 'special'],
  // Public.
  ['93.184.215.14', 'public'],
  ['8.8.8.8', 'public'],
  ['134744072', 'public'],
  ['0x8080808', 'public'],
  ['[2606:4700::1111]', 'public'],
  ['[::ffff:8.8.8.8]', 'public'],
  ['[64:ff9b::808:808]', 'public'],
  ['[2002:808:808::1]', 'public'],
];

/** The host a URL ends up with, as the connector gets it (brackets off). */
function hostOf(spelling: string): string {
  const host = new URL(`http://${spelling}:8080/hook`).hostname;
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

const NARROW = ['10.0.0.0/8'];
const BROAD = ['0.0.0.0/0', '::/0'];

describe('the outbound address rules', () => {
  for (const testShop of [false, true])
    for (const embeddedStore of [true, false])
      for (const allowList of [[], NARROW, BROAD]) {
        const rules: OutboundRules = { testShop, embeddedStore, allowList };
        const name = `${testShop ? 'test' : 'live'} shop, ${embeddedStore ? 'embedded store' : 'PostgreSQL'}, KOPEK_OUTBOUND_ALLOW=${allowList.join(',')}`;
        it(name, () => {
          const expected = (kind: Kind): boolean => {
            if (kind === 'never') return false;
            if (kind === 'public') return true;
            if (allowList === BROAD) return true;
            if (kind === 'ten' && allowList === NARROW) return true;
            return testShop && embeddedStore;
          };
          const wrong = SPELLINGS.filter(([spelling, kind]) => {
            const d = decide(hostOf(spelling), rules);
            return d.allowed !== expected(kind);
          }).map(([spelling]) => spelling);
          expect(wrong).toEqual([]);
        });
      }

  it('names the address as judged, what it is, and what would allow it', () => {
    const live: OutboundRules = { testShop: false, embeddedStore: true, allowList: [] };
    const test: OutboundRules = { testShop: true, embeddedStore: false, allowList: [] };
    const text = (spelling: string, rules: OutboundRules) => {
      const d = decide(hostOf(spelling), rules);
      if (d.allowed) throw new Error(`${spelling} allowed`);
      return refusalText(hostOf(spelling), d);
    };
    expect(text('0xa9fea9fe', { ...test, embeddedStore: true, allowList: BROAD })).toBe(
      'refused: 169.254.169.254 is a link-local (cloud metadata) address; link-local and cloud metadata addresses are never reached',
    );
    expect(text('[::ffff:169.254.169.254]', test)).toBe(
      'refused: ::ffff:a9fe:a9fe (169.254.169.254) is a link-local (cloud metadata) address; link-local and cloud metadata addresses are never reached',
    );
    expect(text('127.1', live)).toBe(
      'refused: 127.0.0.1 is a loopback address; live shops reach public addresses only, and the ranges listed in KOPEK_OUTBOUND_ALLOW',
    );
    expect(text('[64:ff9b::a00:1]', test)).toBe(
      'refused: 64:ff9b::a00:1 (10.0.0.1) is a private address; test shops reach other than public addresses on the embedded store only, or within KOPEK_OUTBOUND_ALLOW',
    );
    expect(text('[::1]', live)).toMatch(/^refused: ::1 is a loopback address; /);
    expect(text('100.64.0.1', live)).toMatch(/^refused: 100\.64\.0\.1 is a shared \(CGNAT\) address; /);
    expect(text('[2001:db8::1]', live)).toMatch(/^refused: 2001:db8::1 is a reserved address; /);
    const d = decide('169.254.169.254', live);
    if (d.allowed) throw new Error('allowed');
    expect(refusalText('metadata.test', d)).toBe(
      'refused: metadata.test resolves to 169.254.169.254, a link-local (cloud metadata) address; link-local and cloud metadata addresses are never reached',
    );
  });

  it('refuses what is not an address', () => {
    expect(decide('localhost', { testShop: true, embeddedStore: true, allowList: BROAD })).toMatchObject({
      allowed: false,
      what: 'not an IP address',
    });
  });
});
