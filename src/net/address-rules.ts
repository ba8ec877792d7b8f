import ipaddr from 'ipaddr.js';

/**
 * Which addresses a request that a shop aims (its notification_url) may reach. A shop chooses the
 * URL, so without this rule anyone with a shop could make Kopek send requests into the network it
 * runs in: a database's admin port, or the cloud metadata service (169.254.169.254) that hands out
 * the machine's credentials.
 *
 * - Link-local and cloud metadata addresses are never reached, by any shop, whatever the settings.
 * - Public unicast addresses are reached by every shop.
 * - Every other address (loopback, private, unique-local, CGNAT and the other special ranges) is
 *   reached when it lies in a range the operator lists in KOPEK_OUTBOUND_ALLOW (for every shop: the
 *   operator knows its own network), and by test shops when Kopek runs on its embedded store (a
 *   developer's own machine, where the receiver is usually on localhost).
 *
 * An address is judged as what it reaches, however it is written: an IPv6 address that embeds an
 * IPv4 one (IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4, Teredo) is judged as that IPv4 address.
 * Other spellings (2852039166, 0xa9fea9fe, 0251.0376.0251.0376) are parsed as the address they are.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

export interface OutboundRules {
  /** The shop that aims the request is a test shop. */
  testShop: boolean;
  /** Kopek runs on its embedded store (PGlite, no DATABASE_URL): a developer's own machine. */
  embeddedStore: boolean;
  /** KOPEK_OUTBOUND_ALLOW: the operator's ranges every shop may reach, as `address/prefix` texts. */
  allowList: readonly string[];
}

export type Decision =
  | { allowed: true }
  | {
      allowed: false;
      /** The address as judged: `127.0.0.1`, or `::ffff:7f00:1 (127.0.0.1)` when it embeds one. */
      address: string;
      /** What it is: "a loopback address". */
      what: string;
      /** Why that is refused here, and what would allow it (if anything does). */
      hint: string;
    };

const cidr = (text: string): Range => ipaddr.parseCIDR(text);

/** Never reached: link-local (169.254.169.254 is in it) and the clouds' other metadata addresses. */
const NEVER: readonly Range[] = [
  cidr('169.254.0.0/16'),
  cidr('fe80::/10'),
  // AWS's metadata service over IPv6.
  cidr('fd00:ec2::254/128'),
  // Alibaba Cloud's metadata service, Azure's platform endpoint (WireServer), Oracle Cloud's legacy one.
  cidr('100.100.100.200/32'),
  cidr('168.63.129.16/32'),
  cidr('192.0.0.192/32'),
];

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  loopback: 'a loopback',
  carrierGradeNat: 'a shared (CGNAT)',
  private: 'a private',
  uniqueLocal: 'a unique-local',
  reserved: 'a reserved',
};

const NEVER_WHAT = 'a link-local (cloud metadata) address';
const NEVER_HINT = '; link-local and cloud metadata addresses are never reached';
const LIVE_HINT = '; live shops reach public addresses only, and the ranges listed in KOPEK_OUTBOUND_ALLOW';
const TEST_HINT =
  '; test shops reach other than public addresses on the embedded store only, or within KOPEK_OUTBOUND_ALLOW';

// IPv6 ranges whose addresses carry an IPv4 address.
const COMPATIBLE = cidr('::/96');
const SIIT = cidr('::ffff:0:0:0/96');
const NAT64 = cidr('64:ff9b::/96');
const NAT64_LOCAL = cidr('64:ff9b:1::/48');
const SIX_TO_FOUR = cidr('2002::/16');
const TEREDO = cidr('2001::/32');
const EMBEDDING: readonly Range[] = [
  cidr('::ffff:0:0/96'),
  COMPATIBLE,
  SIIT,
  NAT64,
  NAT64_LOCAL,
  SIX_TO_FOUR,
  TEREDO,
];

const inRange = (a: Address, [net, bits]: Range) => a.kind() === net.kind() && a.match(net, bits);

const v4 = (bytes: number[]) => new ipaddr.IPv4(bytes);

/**
 * The addresses `a` reaches: itself, or the IPv4 address(es) it embeds. A local-use NAT64 prefix
 * (64:ff9b:1::/48) may be cut at any of RFC 6052's lengths, so each place an IPv4 may sit is judged.
 */
function reached(a: Address): { addresses: Address[]; embeds: boolean } {
  if (a.kind() === 'ipv4') return { addresses: [a], embeds: false };
  const v6 = a as ipaddr.IPv6;
  const b = v6.toByteArray();
  const one = (bytes: number[]) => ({ addresses: [v4(bytes)], embeds: true });
  if (v6.isIPv4MappedAddress()) return { addresses: [v6.toIPv4Address()], embeds: true };
  const range = v6.range();
  // ::1 and :: are IPv6's own loopback and unspecified addresses, not IPv4-compatible ones.
  if (range === 'loopback' || range === 'unspecified') return { addresses: [a], embeds: false };
  if (inRange(v6, COMPATIBLE) || inRange(v6, SIIT) || inRange(v6, NAT64)) return one(b.slice(12, 16));
  if (inRange(v6, SIX_TO_FOUR)) return one(b.slice(2, 6));
  if (inRange(v6, TEREDO)) {
    // The Teredo server's address, and the client's, stored inverted.
    const client = b.slice(12, 16).map((x) => x ^ 0xff);
    return { addresses: [v4(b.slice(4, 8)), v4(client)], embeds: true };
  }
  if (inRange(v6, NAT64_LOCAL)) {
    const places = [
      [b[6], b[7], b[9], b[10]],
      [b[7], b[9], b[10], b[11]],
      b.slice(9, 13),
      b.slice(12, 16),
    ] as number[][];
    return { addresses: [a, ...places.map(v4)], embeds: true };
  }
  return { addresses: [a], embeds: false };
}

/** An address text as an address: brackets, a zone and a trailing dot after an IPv4 one are dropped. */
export function parseAddress(text: string): Address | undefined {
  let bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  bare = bare.replace(/%.*$/, '');
  if (/^[0-9a-fx.]+\.$/i.test(bare)) bare = bare.slice(0, -1);
  if (!ipaddr.isValid(bare)) return undefined;
  return ipaddr.parse(bare);
}

const never = (a: Address) => NEVER.some((r) => inRange(a, r));

const whatOf = (a: Address) => {
  const range = a.range();
  return `${RANGE_NAMES[range] ?? `a reserved (${range})`} address`;
};

const allowLists = new WeakMap<readonly string[], Range[]>();

function allowRanges(list: readonly string[]): Range[] {
  let ranges = allowLists.get(list);
  if (!ranges) {
    ranges = list.map(cidr);
    allowLists.set(list, ranges);
  }
  return ranges;
}

/** Whether a request a shop aims at `address` may connect there, and if not, why. */
export function decide(address: string, rules: OutboundRules): Decision {
  const parsed = parseAddress(address);
  if (!parsed) return { allowed: false, address, what: 'not an IP address', hint: '' };
  const { addresses, embeds } = reached(parsed);
  const shown = embeds
    ? `${parsed.toString()} (${addresses
        .filter((a) => a.kind() === 'ipv4')
        .map(String)
        .join(', ')})`
    : parsed.toString();
  if (addresses.some(never)) return { allowed: false, address: shown, what: NEVER_WHAT, hint: NEVER_HINT };
  const special = addresses.filter((a) => a.range() !== 'unicast');
  if (special.length === 0) return { allowed: true };
  const allow = allowRanges(rules.allowList);
  if (special.every((a) => allow.some((r) => inRange(a, r)))) return { allowed: true };
  if (rules.testShop && rules.embeddedStore) return { allowed: true };
  const first = special[0] as Address;
  return {
    allowed: false,
    address: shown,
    what: whatOf(first),
    hint: rules.testShop ? TEST_HINT : LIVE_HINT,
  };
}

/** KOPEK_OUTBOUND_ALLOW read: each range as `address/prefix`, or what is wrong with the text. */
export function parseAllowList(raw: string): { ranges: string[]; problems: string[] } {
  const ranges: string[] = [];
  const problems: string[] = [];
  const entries = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const withPrefix = entry.includes('/') ? entry : `${entry}/${entry.includes(':') ? 128 : 32}`;
    const valid = ipaddr.IPv4.isValidCIDRFourPartDecimal(withPrefix) || ipaddr.IPv6.isValidCIDR(withPrefix);
    if (!valid || withPrefix.includes('%')) {
      problems.push(
        `KOPEK_OUTBOUND_ALLOW must list address ranges such as 10.0.0.0/8,fd00::/8, got "${entry}"`,
      );
      continue;
    }
    const range = cidr(withPrefix);
    const [net, bits] = range;
    const within = (outer: readonly Range[]) => outer.some(([o, ob]) => bits >= ob && inRange(net, [o, ob]));
    if (within(NEVER)) {
      problems.push(
        `KOPEK_OUTBOUND_ALLOW cannot allow "${entry}": link-local and cloud metadata addresses are never reached`,
      );
      continue;
    }
    if (within(EMBEDDING) && reached(net).embeds) {
      problems.push(
        `KOPEK_OUTBOUND_ALLOW: "${entry}" embeds IPv4 addresses, which are judged as IPv4: list the IPv4 range instead`,
      );
      continue;
    }
    ranges.push(`${net.toString()}/${bits}`);
  }
  return { ranges, problems };
}

/** The sentence an attempt records: `refused: <host> is ...` or `refused: <host> resolves to ..., ...`. */
export function refusalText(host: string, decision: Extract<Decision, { allowed: false }>): string {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (parseAddress(bare)) return `refused: ${decision.address} is ${decision.what}${decision.hint}`;
  return `refused: ${bare} resolves to ${decision.address}, ${decision.what}${decision.hint}`;
}
