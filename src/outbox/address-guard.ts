/**
 * SSRF guard for endpoint deliveries (issue 18 item 4): a delivery may connect only to public
 * addresses. The check runs after DNS resolution, on the addresses actually connected to, on
 * every attempt (undici calls `lookup` for each new connection, and the agent keeps none alive
 * between attempts), so a name that resolves to a public address when the endpoint is set and to
 * 127.0.0.1 later (DNS rebinding) is still refused. An IP literal in the URL is checked before
 * connecting (Node does not call `lookup` for one), and so are `localhost` names, with or without
 * a trailing dot (`localhost.` is the same name, but no hosts file lists it, so the resolver would
 * ask a DNS server).
 *
 * Refused: loopback (127/8, ::1), unspecified (0/8, ::), private (10/8, 172.16/12, 192.168/16,
 * fc00::/7), carrier-grade NAT (100.64/10), link-local (169.254/16 — the cloud metadata address
 * 169.254.169.254 among them — and fe80::/10), site-local fec0::/10, benchmarking 198.18/15, IETF
 * 192.0.0/24, multicast and reserved (224/4, 240/4, ff00::/8), discard-only 100::/64,
 * documentation 2001:db8::/32, local-use NAT64 64:ff9b:1::/48, Teredo 2001::/32; and every IPv6
 * form that embeds a refused IPv4 address: IPv4-compatible ::/96, IPv4-mapped ::ffff:0:0/96,
 * IPv4-translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96 and 6to4 2002::/16 (issue 18: the tests
 * showed ::127.0.0.1, ::ffff:0:127.0.0.1, 6to4 and local-use NAT64 forms passing).
 * `SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1` lifts the guard (development and tests).
 *
 * Every refusal says which address (or name) was refused and why, e.g. `refused: hooks.example
 * resolves to 127.0.0.1, a loopback address`.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent } from "undici";

/** Refused IPv4 networks and what they are, most specific first. */
const V4_REFUSED: ReadonlyArray<readonly [string, number, string]> = [
  ["169.254.169.254", 32, "a link-local address (the cloud metadata service)"],
  ["0.0.0.0", 8, "an unspecified address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a carrier-grade NAT address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "a reserved (IETF protocol) address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
];

/** Refused IPv6 networks (other than the forms embedding IPv4) and what they are. */
const V6_REFUSED: ReadonlyArray<readonly [string, number, string]> = [
  ["::", 128, "an unspecified address"],
  ["::1", 128, "a loopback address"],
  ["fc00::", 7, "a private address"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a site-local address"],
  ["ff00::", 8, "a multicast address"],
  ["100::", 64, "a discard-only address"],
  ["2001:db8::", 32, "a documentation address"],
  ["64:ff9b:1::", 48, "a local-use NAT64 address (it reaches IPv4 addresses of the local network)"],
  ["2001::", 32, "a Teredo address (it embeds IPv4 addresses)"],
];

/** IPv6 forms carrying an IPv4 address: prefix, prefix length, name, where the IPv4 address sits (bits from the right). */
const V6_EMBEDDING: ReadonlyArray<readonly [string, number, string, bigint]> = [
  ["::", 96, "IPv4-compatible", 0n],
  ["::ffff:0:0", 96, "IPv4-mapped", 0n],
  ["::ffff:0:0:0", 96, "IPv4-translated", 0n],
  ["64:ff9b::", 96, "NAT64", 0n],
  ["2002::", 16, "6to4", 80n],
];

/** An IPv4 address as a number (the caller has checked it with isIP). */
function v4Value(address: string): number {
  return address.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function v4Text(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
}

/** An IPv6 address as a 128-bit number (the caller has checked it with isIP; a zone index is dropped). */
function v6Value(address: string): bigint {
  let text = address.replace(/%.*$/, "").toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = v4Value(dotted[1]);
    text = text.slice(0, dotted.index) + `${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const hextets =
    tail === undefined ? groups(head) : [...groups(head), ...Array<string>(8 - groups(head).length - groups(tail).length).fill("0"), ...groups(tail)];
  return hextets.reduce((n, h) => (n << 16n) | BigInt(parseInt(h, 16)), 0n);
}

const inV4 = (value: number, net: string, prefix: number) => prefix === 0 || value >>> (32 - prefix) === v4Value(net) >>> (32 - prefix);
const inV6 = (value: bigint, net: string, prefix: number) => value >> BigInt(128 - prefix) === v6Value(net) >> BigInt(128 - prefix);

/**
 * Why a delivery must not connect to `address` (an IP literal, brackets allowed), e.g. "a loopback
 * address" or "the IPv4-mapped form of 127.0.0.1, a loopback address"; null when it may.
 */
export function refusalReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 4) return v4RefusalReason(v4Value(bare));
  if (family !== 6) return "not an IP address";
  const value = v6Value(bare);
  for (const [net, prefix, what] of V6_REFUSED) if (inV6(value, net, prefix)) return what;
  for (const [net, prefix, name, shift] of V6_EMBEDDING) {
    if (!inV6(value, net, prefix)) continue;
    const embedded = Number((value >> shift) & 0xffffffffn);
    const v4 = v4Text(embedded);
    const why = v4RefusalReason(embedded);
    return why === null ? null : `the ${name} form of ${v4}, ${why}`;
  }
  return null;
}

/** Why an IPv4 address (as a 32-bit number) is refused, or null (no recursion: an embedded IPv4 address is checked here). */
function v4RefusalReason(value: number): string | null {
  return V4_REFUSED.find(([net, prefix]) => inV4(value, net, prefix))?.[2] ?? null;
}

/** True when `address` (an IP literal) is one a delivery must not connect to. */
export function isRefusedAddress(address: string): boolean {
  return refusalReason(address) !== null;
}

/** Thrown (as a connection error) when an endpoint resolves to a refused address. */
export class AddressRefusedError extends Error {
  override name = "AddressRefusedError";
  readonly code = "ENDPOINT_ADDRESS_REFUSED";
}

/** Resolves a name to all its addresses, like dns.lookup with `all: true` (tests pass a stand-in for DNS). */
export type Resolver = (hostname: string, options: LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `lookup` that resolves with `resolve` and fails when any resolved address is refused (not only
 * the first: a connection may try each of them), naming that address and why.
 */
export function guardedLookupWith(resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      if (addresses.length === 0) return callback(new AddressRefusedError(`refused: ${hostname} resolves to no address`), "", 0);
      for (const { address } of addresses) {
        const why = refusalReason(address);
        if (why !== null) return callback(new AddressRefusedError(`refused: ${hostname} resolves to ${address}, ${why}`), "", 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** A `lookup` that resolves like dns.lookup and fails when any resolved address is refused. */
export const guardedLookup: LookupFunction = guardedLookupWith(dnsLookup as Resolver);

/**
 * The HTTP agent of one delivery attempt: guarded unless `allowPrivate`; connections are not kept
 * (each attempt resolves and checks again). Close it after the attempt.
 */
export function deliveryAgent(allowPrivate: boolean, resolve: Resolver = dnsLookup as Resolver): Agent {
  return new Agent({ connect: allowPrivate ? {} : { lookup: guardedLookupWith(resolve) }, pipelining: 0, keepAliveTimeout: 1 });
}

/**
 * Throws AddressRefusedError when the guard is on and `url` is not https (an endpoint set while
 * private addresses were allowed), or its host is an IP literal it refuses, or a `localhost` name
 * (trailing dots ignored: `localhost.` names the same host).
 */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  if (allowPrivate) return;
  if (url.protocol !== "https:") throw new AddressRefusedError(`refused: ${url.protocol}// is allowed only with SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0) {
    const why = refusalReason(host);
    if (why !== null) throw new AddressRefusedError(`refused: ${host} is ${why}`);
    return;
  }
  const name = host.replace(/\.+$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) throw new AddressRefusedError(`refused: ${host} is a loopback name`);
}
