import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';
import type { OutboundNet, ResolvedAddress } from '../../src/net/outbound.js';

/**
 * The network of outbound requests in tests: names resolve from a table (nothing asks a DNS
 * server), and a connection opens only to a loopback address. Asked to connect anywhere else, it
 * connects nowhere, answers an error, and keeps the address in `strays` for the test to fail on.
 */

export interface FakeNet extends OutboundNet {
  /** Every name asked for, in order. */
  resolved: string[];
  /** Every address a connection was asked for (after the guard judged it), in order. */
  connects: string[];
  /** Those that were not loopback: a test asserts this stays empty. */
  strays: string[];
}

const isLoopback = (address: string) =>
  ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';

/** `names` maps a host name to the addresses it resolves to; `localhost` is 127.0.0.1 and ::1. */
export function fakeNet(names: Record<string, string[]> = {}): FakeNet {
  const table: Record<string, string[]> = { localhost: ['127.0.0.1', '::1'], ...names };
  const real = buildConnector({});
  const net: FakeNet = {
    resolved: [],
    connects: [],
    strays: [],
    async resolve(hostname: string): Promise<ResolvedAddress[]> {
      net.resolved.push(hostname);
      const found = table[hostname.toLowerCase()];
      if (!found)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
      return found.map((address) => ({ address, family: isIP(address) }));
    },
    connect(options, callback) {
      net.connects.push(options.hostname);
      if (!isLoopback(options.hostname)) {
        net.strays.push(options.hostname);
        callback(new Error(`a test may not connect to ${options.hostname}`), null);
        return;
      }
      real(options, callback);
    },
  };
  return net;
}
