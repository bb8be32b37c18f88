/**
 * Receiver URL guard (docs/architecture.md, Events and webhooks): a webhook may only reach a public address over https.
 * Checked at registration and again before each batch of deliveries a lane sends (delivery-lanes.ts);
 * the deliveries then connect to the exact address that was checked (pinnedLookup), so a DNS answer that
 * changes between check and connect (rebinding) cannot steer them to a private address. `allowLoopback` (WEBHOOK_ALLOW_LOOPBACK) admits
 * loopback receivers, over http too, for local testing only.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to. Injectable so tests never need real DNS. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

export type AddressClass = 'public' | 'loopback' | 'blocked';

/** The message a refused private address records, at registration and in the delivery log. */
export const BLOCKED_PRIVATE = 'blocked: private address';

/**
 * Why a receiver URL is refused. `private`: it points at an address we never reach; `unresolvable`:
 * DNS gave no answer (may be passing); `invalid`: the URL itself is not acceptable.
 */
export class ReceiverUrlRefused extends Error {
  constructor(message: string, readonly reason: 'private' | 'unresolvable' | 'invalid') {
    super(message);
    this.name = 'ReceiverUrlRefused';
  }
}

/** A URL that passed the guard, with the one address the request must connect to. */
export interface CheckedReceiver {
  url: URL;
  address: string;
  family: 4 | 6;
}

export interface GuardOptions {
  allowLoopback: boolean;
  resolve?: HostResolver;
}

const v4 = (cidr: string) => ipaddr.IPv4.parseCIDR(cidr);
const v6 = (cidr: string) => ipaddr.IPv6.parseCIDR(cidr);
// Special-purpose blocks (IANA registries) that ipaddr.js 1.9 reports as plain unicast.
const EXTRA_BLOCKED_V4 = [v4('198.18.0.0/15') /* benchmarking */];
const EXTRA_BLOCKED_V6 = [v6('2001::/23') /* IETF protocol assignments (ORCHID, benchmarking, ...) */];
const GLOBAL_UNICAST_V6 = v6('2000::/3');

/**
 * Public, loopback or blocked. Blocked: private (RFC 1918), link-local, CGNAT, multicast, broadcast,
 * unspecified, reserved and documentation blocks; for IPv6 anything outside global unicast 2000::/3
 * (ULA, link-local, NAT64, IPv4-compatible) plus 6to4, Teredo and IPv4-mapped addresses, which can
 * embed a private IPv4 address.
 */
export function classifyAddress(ip: string): AddressClass {
  if (!ipaddr.isValid(ip)) return 'blocked';
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv4') {
    const a = addr as ipaddr.IPv4;
    const range = a.range();
    if (range === 'loopback') return 'loopback';
    if (range !== 'unicast' || EXTRA_BLOCKED_V4.some((r) => a.match(r))) return 'blocked';
    return 'public';
  }
  const a = addr as ipaddr.IPv6;
  if (a.isIPv4MappedAddress()) return 'blocked';
  const range = a.range();
  if (range === 'loopback') return 'loopback';
  if (range !== 'unicast' || !a.match(GLOBAL_UNICAST_V6) || EXTRA_BLOCKED_V6.some((r) => a.match(r))) return 'blocked';
  return 'public';
}

/** URL.hostname keeps the brackets of an IPv6 literal; sockets and DNS want the bare address. */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Special-use names (RFC 6761 `localhost`, RFC 6762 `.local`, RFC 8375 `.home.arpa`, ICANN's `.internal`)
 * that never name a public receiver, whatever DNS says: refused without a lookup. `.invalid` never resolves.
 */
const LOOPBACK_NAME = /(^|\.)localhost\.?$/i;

/** Whether the URL names this machine (localhost or a loopback literal): what WEBHOOK_ALLOW_LOOPBACK admits. */
export function namesLoopback(url: URL): boolean {
  const host = bareHostname(url);
  return net.isIP(host) ? classifyAddress(host) === 'loopback' : LOOPBACK_NAME.test(host);
}
const PRIVATE_NAME = /(^|\.)(local|home\.arpa|internal)\.?$/i;
const INVALID_NAME = /(^|\.)invalid\.?$/i;

/**
 * Parses and normalises a receiver URL without any DNS: the WHATWG URL parser silently drops tabs and
 * line breaks, so they are refused here first (a URL is stored and listed exactly as it will be called).
 * The answer is `url.href`: lower-case scheme and host, default port dropped, path percent-encoded.
 */
export function parseReceiverUrl(raw: string): URL {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f]/.test(raw)) throw new ReceiverUrlRefused('url must not contain spaces or control characters.', 'invalid');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ReceiverUrlRefused('url must be an absolute https:// URL.', 'invalid');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ReceiverUrlRefused('url must use https://.', 'invalid');
  if (url.username || url.password) throw new ReceiverUrlRefused('url must not carry credentials.', 'invalid');
  if (!url.hostname) throw new ReceiverUrlRefused('url must name a host.', 'invalid');
  return url;
}

export async function checkReceiverUrl(raw: string, opts: GuardOptions): Promise<CheckedReceiver> {
  const url = parseReceiverUrl(raw);
  const mustUseHttps = () => new ReceiverUrlRefused('url must use https://.', 'invalid');

  const host = bareHostname(url);
  let addresses: ResolvedAddress[];
  const literal = net.isIP(host);
  if (literal) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    // Plain http is only ever allowed for a loopback receiver under the local-testing flag: no DNS needed to refuse it.
    if (url.protocol === 'http:' && !opts.allowLoopback) throw mustUseHttps();
    if (INVALID_NAME.test(host)) throw new ReceiverUrlRefused(`url host "${host}" can never resolve.`, 'invalid');
    if (PRIVATE_NAME.test(host) || (LOOPBACK_NAME.test(host) && !opts.allowLoopback)) throw new ReceiverUrlRefused(BLOCKED_PRIVATE, 'private');
    // Under the local-testing flag plain http is admitted for a loopback receiver only: a host that does not
    // resolve is not known to be loopback, so it is refused outright (never kept as "may be passing").
    const unresolvable = () => url.protocol === 'http:' ? mustUseHttps() : new ReceiverUrlRefused(`url host "${host}" does not resolve.`, 'unresolvable');
    try {
      addresses = await (opts.resolve ?? systemResolver)(host);
    } catch {
      throw unresolvable();
    }
    if (addresses.length === 0) throw unresolvable();
  }

  // Every answer must pass: a host with one public and one private address could be steered to the latter.
  const classes = addresses.map((a) => classifyAddress(a.address));
  const allPublic = classes.every((c) => c === 'public');
  const allLoopback = classes.every((c) => c === 'loopback');
  if (!allPublic && !(opts.allowLoopback && allLoopback)) throw new ReceiverUrlRefused(BLOCKED_PRIVATE, 'private');
  if (url.protocol === 'http:' && !(opts.allowLoopback && allLoopback)) throw mustUseHttps();
  return { url, address: addresses[0].address, family: addresses[0].family };
}

/**
 * A `lookup` for http(s).request that answers with the checked address whatever the name: the
 * connection goes where the guard looked, while TLS still verifies the certificate for the name.
 */
export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    // Node's connect asks for every address (all: true) when it races IPv4 and IPv6.
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}
