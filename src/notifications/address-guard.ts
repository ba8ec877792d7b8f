import { type LookupAddress, lookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a live shop's notifications may go to. A shop chooses its notification_url, so
 * without this rule anyone with a shop could make Kopek POST into its own network: the database's
 * admin port, a cloud metadata service (169.254.169.254) handing out credentials. The check runs on
 * the addresses a name resolves to, at connect time, and the connection goes to exactly the address
 * checked, so a name that answers differently the second time (DNS rebinding) gets nowhere.
 */

/** Why a connection to an address was refused; `code` tells it from network errors. */
export class AddressRefused extends Error {
  readonly code = 'KOPEK_ADDRESS_REFUSED';
}

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local (cloud metadata)',
  loopback: 'a loopback',
  carrierGradeNat: 'a shared (CGNAT)',
  private: 'a private',
  uniqueLocal: 'a unique-local',
};

/**
 * Undefined when `ip` is an ordinary public unicast address; otherwise what it is ("a loopback
 * address"). Only `unicast` passes:
 * every special range (private, loopback, link-local with the metadata address, unique-local, CGNAT,
 * multicast, documentation, translation prefixes that may embed a private IPv4) is refused, and an
 * IPv4-mapped IPv6 address is judged as the IPv4 address it is.
 */
export function refusalOf(ip: string): string | undefined {
  if (!ipaddr.isValid(ip)) return 'not an IP address';
  // process(): an IPv4-mapped IPv6 address comes back as its IPv4 address.
  const range = ipaddr.process(ip).range();
  if (range === 'unicast') return undefined;
  return `${RANGE_NAMES[range] ?? `a reserved (${range})`} address`;
}

const ALLOW_HINT = '; notifications of live shops go to public addresses only (NOTIFY_ALLOW_PRIVATE)';

/** Refuses a URL host that is itself an IP address (no lookup happens for those). */
export function checkLiteralHost(hostname: string): void {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (!ipaddr.isValid(bare)) return;
  const why = refusalOf(bare);
  if (why) throw new AddressRefused(`refused: ${bare} is ${why}${ALLOW_HINT}`);
}

/**
 * A `lookup` for net.connect that resolves every address of the name, refuses the name if any of
 * them is not public, and answers only the addresses it checked.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints ?? 0 }, (err, found) => {
    if (err) return callback(err, '', 0);
    const addresses = found as LookupAddress[];
    for (const a of addresses) {
      const why = refusalOf(a.address);
      if (why) {
        const refused = new AddressRefused(
          `refused: ${hostname} resolves to ${a.address}, ${why}${ALLOW_HINT}`,
        );
        return callback(refused, '', 0);
      }
    }
    const first = addresses[0];
    if (!first)
      return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
    // net asks for every address when it may try several (autoSelectFamily), otherwise for one.
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    } else callback(null, first.address, first.family);
  });
};
