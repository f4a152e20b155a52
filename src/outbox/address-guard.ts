/**
 * SSRF guard for endpoint deliveries (issue 18 item 4): a delivery may connect only to public
 * addresses. The check runs after DNS resolution, on the addresses actually connected to, on
 * every attempt (undici calls `lookup` for each new connection, and the agent keeps none alive
 * between attempts), so a name that resolves to a public address when the endpoint is set and to
 * 127.0.0.1 later (DNS rebinding) is still refused. An IP literal in the URL is checked before
 * connecting (Node does not call `lookup` for one).
 *
 * Refused: loopback (127/8, ::1), unspecified (0/8, ::), private (10/8, 172.16/12, 192.168/16,
 * fc00::/7), carrier-grade NAT (100.64/10), link-local (169.254/16 — the cloud metadata address
 * 169.254.169.254 among them — and fe80::/10), benchmarking 198.18/15, IETF 192.0.0/24,
 * multicast and reserved (224/4, 240/4, ff00::/8), and IPv4-mapped/NAT64 forms of any of these.
 * `SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1` lifts the guard (development and tests).
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { Agent } from "undici";

const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) blocked.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8]] as const) blocked.addSubnet(net, prefix, "ipv6");

/** Thrown (as a connection error) when an endpoint resolves to a refused address. */
export class AddressRefusedError extends Error {
  override name = "AddressRefusedError";
  readonly code = "ENDPOINT_ADDRESS_REFUSED";
}

/** The IPv4 address embedded in an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address. */
function embeddedV4(address: string): string | null {
  const m = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const hi = parseInt(hex[1], 16);
  const lo = parseInt(hex[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True when `address` (an IP literal) is one a delivery must not connect to. */
export function isRefusedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, "ipv4");
  if (family === 6) {
    const v4 = embeddedV4(bare);
    return v4 !== null ? blocked.check(v4, "ipv4") : blocked.check(bare, "ipv6");
  }
  return true; // not an address at all
}

/** A `lookup` that resolves like dns.lookup and fails when any resolved address is refused. */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, "", 0);
    const refused = addresses.find((a) => isRefusedAddress(a.address));
    if (refused || addresses.length === 0) {
      return callback(new AddressRefusedError(`refused: ${hostname} resolves to a loopback, private, link-local or reserved address`), "", 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    return callback(null, addresses[0].address, addresses[0].family);
  });
};

/**
 * The HTTP agent of one delivery attempt: guarded unless `allowPrivate`; connections are not kept
 * (each attempt resolves and checks again). Close it after the attempt.
 */
export function deliveryAgent(allowPrivate: boolean): Agent {
  return new Agent({ connect: allowPrivate ? {} : { lookup: guardedLookup }, pipelining: 0, keepAliveTimeout: 1 });
}

/**
 * Throws AddressRefusedError when the guard is on and `url` is not https (an endpoint set while
 * private addresses were allowed), or its host is an IP literal or a `localhost` name it refuses.
 */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  if (allowPrivate) return;
  if (url.protocol !== "https:") throw new AddressRefusedError(`refused: ${url.protocol}// is allowed only with SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0 && isRefusedAddress(host)) throw new AddressRefusedError(`refused: ${host} is a loopback, private, link-local or reserved address`);
  if (host === "localhost" || host.endsWith(".localhost")) throw new AddressRefusedError(`refused: ${host} is a loopback name`);
}
