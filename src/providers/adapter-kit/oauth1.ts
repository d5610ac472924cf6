/**
 * OAuth 1.0a request signing (RFC 5849, HMAC-SHA1), as X requires for user
 * tokens. Parameters signed are the oauth_* ones, the URL's query and a
 * url-encoded form body; JSON and multipart bodies are not part of the signature.
 */
import crypto from 'node:crypto';

export interface OAuth1Keys {
  consumerKey: string;
  consumerSecret: string;
  token?: string;
  tokenSecret?: string;
}

/** RFC 3986 percent-encoding: everything but unreserved characters (RFC 5849 §3.6). */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The base string URI: scheme and host lower case, default port dropped, no query or fragment (§3.4.1.2). */
function baseUri(url: URL): string {
  const defaultPort = (url.protocol === 'http:' && url.port === '80') || (url.protocol === 'https:' && url.port === '443');
  const port = url.port && !defaultPort ? `:${url.port}` : '';
  return `${url.protocol.toLowerCase()}//${url.hostname.toLowerCase()}${port}${url.pathname}`;
}

/** The signature base string of §3.4.1 for a request and its (decoded) parameters. */
export function signatureBaseString(method: string, url: string, params: [string, string][]): string {
  const u = new URL(url);
  const all: [string, string][] = [...params];
  for (const [k, v] of u.searchParams) all.push([k, v]);
  const normalized = all
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as const)
    .sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return [method.toUpperCase(), percentEncode(baseUri(u)), percentEncode(normalized)].join('&');
}

export function hmacSha1Signature(baseString: string, consumerSecret: string, tokenSecret = ''): string {
  return crypto
    .createHmac('sha1', `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`)
    .update(baseString)
    .digest('base64');
}

export interface SignOptions {
  method: string;
  url: string;
  keys: OAuth1Keys;
  /** A url-encoded form body's fields (signed); leave out for JSON or multipart bodies. */
  form?: Record<string, string>;
  /** Extra oauth_* parameters (oauth_callback, oauth_verifier). */
  extra?: Record<string, string>;
  /** Fixed for tests against published examples; random otherwise. */
  nonce?: string;
  timestamp?: string;
  /** oauth_version is optional (§3.1); X's examples send it, RFC 5849's do not. */
  withVersion?: boolean;
}

/** The oauth_* parameters of a request, including oauth_signature. */
export function oauthParameters(options: SignOptions): Record<string, string> {
  const { keys } = options;
  const oauth: Record<string, string> = {
    oauth_consumer_key: keys.consumerKey,
    oauth_nonce: options.nonce ?? crypto.randomBytes(16).toString('hex'),
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: options.timestamp ?? String(Math.floor(Date.now() / 1000)),
    ...(options.withVersion === false ? {} : { oauth_version: '1.0' }),
    ...(keys.token ? { oauth_token: keys.token } : {}),
    ...options.extra,
  };
  const base = signatureBaseString(options.method, options.url, [...Object.entries(oauth), ...Object.entries(options.form ?? {})]);
  return { ...oauth, oauth_signature: hmacSha1Signature(base, keys.consumerSecret, keys.tokenSecret) };
}

/** The `Authorization: OAuth ...` header value (§3.5.1). */
export function authorizationHeader(options: SignOptions): string {
  const params = oauthParameters(options);
  return `OAuth ${Object.entries(params)
    .map(([k, v]) => `${percentEncode(k)}="${percentEncode(v)}"`)
    .join(', ')}`;
}

/** Reads an `Authorization: OAuth ...` header back into its parameters (for servers and tests). */
export function parseAuthorizationHeader(header: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const match of header.replace(/^OAuth\s+/i, '').matchAll(/([\w.~%-]+)="([^"]*)"/g)) params[decodeURIComponent(match[1])] = decodeURIComponent(match[2]);
  return params;
}
