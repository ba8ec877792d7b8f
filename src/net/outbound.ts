import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { Db } from '../db/db.js';
import { decide, type OutboundRules, refusalText } from './address-rules.js';

/**
 * The connections of requests a shop aims (notifications to its notification_url). Every new
 * connection resolves the name, judges every address it resolves to (address-rules.ts), and connects
 * to exactly an address it judged, so a name that answers differently the second time (DNS
 * rebinding) gets nowhere. Redirects are never followed: a 3xx is an answer like any other.
 */

/** Why a connection to an address was refused; `code` tells it from network errors. */
export class AddressRefused extends Error {
  readonly code = 'KOPEK_ADDRESS_REFUSED';
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** The network steps of an outbound request; tests replace them so nothing leaves loopback. */
export interface OutboundNet {
  /** Every address of a name (default: the system's resolver, as dns.lookup answers). */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
  /**
   * Opens the connection to an address already judged (`options.hostname` is that address; `host`
   * keeps the name for TLS). Default: undici's own connector.
   */
  connect?: buildConnector.connector;
}

/** The rules for a request that a shop (test or live) aims, on this Kopek's store and settings. */
export function outboundRules(
  services: { config: { outboundAllow: readonly string[] }; db: Pick<Db, 'kind'> },
  testShop: boolean,
): OutboundRules {
  return {
    testShop,
    embeddedStore: services.db.kind === 'pglite',
    allowList: services.config.outboundAllow,
  };
}

const systemResolve = (hostname: string): Promise<ResolvedAddress[]> => lookup(hostname, { all: true });

/** The addresses a connection to `hostname` may use: all judged allowed, or AddressRefused. */
async function addressesOf(
  hostname: string,
  rules: OutboundRules,
  resolve: NonNullable<OutboundNet['resolve']>,
): Promise<string[]> {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host)) {
    const d = decide(host, rules);
    if (!d.allowed) throw new AddressRefused(refusalText(host, d));
    return [host];
  }
  const found = await resolve(host);
  if (found.length === 0)
    throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND', hostname: host });
  // One refused address refuses the name: which one a later connection would get is the name's to choose.
  for (const { address } of found) {
    const d = decide(address, rules);
    if (!d.allowed) throw new AddressRefused(refusalText(host, d));
  }
  return found.map((a) => a.address);
}

/** A connector that judges before it connects, then tries the judged addresses in order. */
function guardedConnector(rules: OutboundRules, net: OutboundNet): buildConnector.connector {
  const connect = net.connect ?? buildConnector({});
  const resolve = net.resolve ?? systemResolve;
  return (options, callback) => {
    const attempt = (addresses: string[], i: number) => {
      connect({ ...options, hostname: addresses[i] as string }, (...result) => {
        // A name with IPv6 and IPv4 addresses on a machine that reaches only one of them.
        if (result[0] && i + 1 < addresses.length) attempt(addresses, i + 1);
        else callback(...result);
      });
    };
    addressesOf(options.hostname, rules, resolve).then(
      (addresses) => attempt(addresses, 0),
      (err: Error) => callback(err, null),
    );
  };
}

const DEFAULT_NET: OutboundNet = {};
const agents = new Map<OutboundNet, Map<string, Agent>>();

/**
 * The keep-alive agent for requests under `rules`: one per set of rules, so a connection opened
 * under one shop's rules is never reused for a shop under stricter ones.
 */
export function outboundAgent(rules: OutboundRules, net: OutboundNet = DEFAULT_NET): Agent {
  let byRules = agents.get(net);
  if (!byRules) {
    byRules = new Map();
    agents.set(net, byRules);
  }
  const key = `${rules.testShop}|${rules.embeddedStore}|${rules.allowList.join(',')}`;
  let agent = byRules.get(key);
  if (!agent) {
    agent = new Agent({ keepAliveTimeout: 4000, connect: guardedConnector(rules, net) });
    byRules.set(key, agent);
  }
  return agent;
}

/** Closes every outbound agent and the connections they keep alive (at shutdown). */
export async function closeOutboundAgents(): Promise<void> {
  const all = [...agents.values()].flatMap((byRules) => [...byRules.values()]);
  agents.clear();
  await Promise.all(all.map((a) => a.close()));
}
