/**
 * The one way Herald fetches a URL that a user gave it (upload-from-url, webhook
 * channels, outgoing webhooks). It refuses non-public destinations: the name is
 * resolved, every address checked, the connection pinned to the checked address
 * (so DNS cannot change between check and connect), and each redirect re-checked.
 */
import dns from 'node:dns';
import net from 'node:net';
import { readAtMost } from './bounded-body.ts';
import { Agent, fetch as undiciFetch, request as undiciRequest, type BodyInit, type Response } from 'undici';

/** What a request may carry: text, bytes, a form, or a stream read as it is sent. */
export type OutboundBody = string | Uint8Array | URLSearchParams | FormData | Blob | AsyncIterable<Uint8Array>;

/** How an operator lets Herald reach a service on their own network (a local n8n, a self-hosted instance). */
const ALLOW_HINT = 'add the host to HERALD_ALLOW_PRIVATE_HOSTS to allow it';
/** The most of an answer to `post` that is read. */
const LARGEST_POST_ANSWER_BYTES = 1024 * 1024;

export class OutboundRefused extends Error {
  constructor(
    readonly reason: string,
    /** The host name did not resolve (rather than resolving to a refused address). */
    readonly unresolved = false,
  ) {
    super(reason);
  }
}

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface OutboundOptions {
  /** Host names or literal addresses that may be reached although private. */
  allowPrivateHosts?: string[];
  /** Name resolution; tests inject a stub. */
  lookup?: Lookup;
  connectTimeoutMs?: number;
}

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(prefix, bits, 'ipv6');

/** True for loopback, private, link-local (cloud metadata), CGNAT, multicast and reserved addresses. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const embedded = embeddedIpv4(address);
  if (embedded) return blocked.check(embedded, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** The eight 16-bit groups of a valid IPv6 address (any spelling: "::", a dotted IPv4 tail, leading zeros). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 address carries in its last 32 bits, for the forms that
 * reach it: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96) and
 * IPv4-translated (::ffff:0:0:0/96), in every spelling ("::ffff:7f00:1",
 * "::127.0.0.1", "0:0:0:0:0:ffff:127.0.0.1"...).
 */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const mapped = zeros(0, 5) && g[5] === 0xffff;
  const compatible = zeros(0, 6) && (g[6] !== 0 || g[7] > 1);
  const translated = zeros(0, 4) && g[4] === 0xffff && g[5] === 0;
  if (!mapped && !compatible && !translated) return undefined;
  return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
}

const systemLookup: Lookup = async (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export class OutboundGuard {
  private readonly allowed: Set<string>;
  private readonly lookup: Lookup;
  private readonly agent: Agent;

  constructor(options: OutboundOptions = {}) {
    this.allowed = new Set((options.allowPrivateHosts ?? []).map((h) => h.toLowerCase()));
    this.lookup = options.lookup ?? systemLookup;
    this.agent = new Agent({
      connect: {
        timeout: options.connectTimeoutMs ?? 10_000,
        // Called by the socket for host names: resolve, check, and connect to what was checked.
        lookup: (hostname, opts, callback) => {
          this.resolve(hostname).then(
            (address) => {
              const family = net.isIP(address);
              // With happy-eyeballs the socket asks for a list of addresses.
              if ((opts as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
              else callback(null, address, family);
            },
            (err) => callback(err, '', 0),
          );
        },
      },
    });
  }

  /** Checks a URL's form and, for a literal address, the address itself. */
  checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new OutboundRefused('is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefused('must use http or https');
    if (url.username || url.password) throw new OutboundRefused('must not carry credentials');
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (net.isIP(host) && !this.allowed.has(host) && isPrivateAddress(host)) {
      throw new OutboundRefused(`points to a private or reserved address (${host}); ${ALLOW_HINT}`);
    }
    return url;
  }

  /**
   * `checkUrl`, and a host name resolved and checked too: what is refused when a
   * channel or webhook is added is what would be refused when it is used.
   */
  async checkReachable(raw: string): Promise<URL> {
    const url = this.checkUrl(raw);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!net.isIP(host)) {
      try {
        await this.resolve(host);
      } catch (err) {
        // A name that does not resolve yet (DNS being set up, a resolver down) is not refused here; using it says so.
        if (!(err instanceof OutboundRefused) || !err.unresolved) throw err;
      }
    }
    return url;
  }

  /** Resolves a host name to one address that may be reached. */
  async resolve(hostname: string): Promise<string> {
    const host = hostname.toLowerCase();
    let addresses: { address: string }[];
    try {
      addresses = await this.lookup(host);
    } catch {
      throw new OutboundRefused(`host ${host} could not be resolved`, true);
    }
    if (addresses.length === 0) throw new OutboundRefused(`host ${host} could not be resolved`, true);
    if (this.allowed.has(host)) return addresses[0].address;
    const bad = addresses.find((a) => isPrivateAddress(a.address) && !this.allowed.has(a.address));
    if (bad) throw new OutboundRefused(`host ${host} resolves to a private or reserved address (${bad.address}); ${ALLOW_HINT}`);
    return addresses[0].address;
  }

  /**
   * fetch with every hop checked. Follows up to `maxRedirects` redirects itself so
   * each target is checked again. Errors from the guard are OutboundRefused.
   */
  async fetch(
    raw: string,
    init: { method?: string; headers?: Record<string, string>; body?: OutboundBody; signal?: AbortSignal; maxRedirects?: number } = {},
  ): Promise<Response> {
    let url = this.checkUrl(raw);
    let method = init.method ?? 'GET';
    let body = init.body;
    let headers = init.headers;
    // Node's global FormData comes from Node's bundled undici, which this undici does not
    // recognise (it would send "[object FormData]"): encode it here, boundary and all.
    if (body instanceof globalThis.FormData) {
      const encoded = new globalThis.Response(body);
      headers = { ...headers, 'content-type': encoded.headers.get('content-type') ?? 'multipart/form-data' };
      body = new Uint8Array(await encoded.arrayBuffer());
    }
    for (let hop = 0; ; hop++) {
      const response = await undiciFetch(url, {
        method,
        headers,
        body: body as BodyInit | undefined,
        // A streamed body is sent as it is read.
        ...(body && typeof body === 'object' && Symbol.asyncIterator in body ? { duplex: 'half' as const } : {}),
        signal: init.signal,
        redirect: 'manual',
        dispatcher: this.agent,
      }).catch((err: unknown) => {
        const cause = (err as { cause?: unknown }).cause;
        if (cause instanceof OutboundRefused) throw cause;
        throw err;
      });
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return response;
      await response.body?.cancel();
      if (hop >= (init.maxRedirects ?? 5)) throw new OutboundRefused('too many redirects');
      url = this.checkUrl(new URL(location, url).toString());
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
  }

  /**
   * One request, no redirects followed, without fetch's streams machinery: for
   * the hot path that sends small JSON bodies (the webhook channel's deliveries).
   */
  async post(
    raw: string,
    init: { headers: Record<string, string>; body: string; signal?: AbortSignal },
  ): Promise<{ status: number; header(name: string): string | null; text(): Promise<string> }> {
    const url = this.checkUrl(raw);
    const response = await undiciRequest(url, { method: 'POST', headers: init.headers, body: init.body, signal: init.signal, dispatcher: this.agent }).catch(
      (err: unknown) => {
        const cause = (err as { cause?: unknown }).cause;
        if (cause instanceof OutboundRefused) throw cause;
        throw err;
      },
    );
    return {
      status: response.statusCode,
      header: (name) => {
        const value = response.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
      // A receiver's answer is a few bytes of JSON; more is not read (whatever the receiver sends).
      text: async () => (await readAtMost(response.body, LARGEST_POST_ANSWER_BYTES)).bytes.toString('utf8'),
    };
  }

  /** Ends every connection, also those of requests still waiting for an answer (a stop's grace has passed). */
  close(): Promise<void> {
    return this.agent.destroy();
  }
}
