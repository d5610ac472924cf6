/**
 * A small browser stand-in for the tests of the web side: keeps cookies, sends
 * the CSRF token the way the web UI does, fills in and posts the server's HTML
 * forms, and never follows redirects by itself (tests look at each step).
 */
import assert from 'node:assert/strict';
import { pathOf, type AnswerOf, type RouteEntry, type RouteInput } from '../../src/contract/route.ts';

export interface WebAnswer {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the text for HTML pages. */
  body: any;
  text: string;
}

function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e as string]!);
}

/** The action and fields of the first form of a page (hidden fields and filled inputs). */
export function formOf(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  assert.ok(form, `the page has no form:\n${html}`);
  const fields: Record<string, string> = {};
  for (const input of form[2].matchAll(/<input([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(input[1]);
    const value = /value="([^"]*)"/.exec(input[1]);
    if (name) fields[unescapeHtml(name[1])] = value ? unescapeHtml(value[1]) : '';
  }
  return { action: unescapeHtml(form[1]), fields };
}

export class WebClient {
  readonly jar = new Map<string, string>();

  constructor(readonly origin: string) {}

  private cookieHeader(url: string): Record<string, string> {
    // Cookies belong to Herald's origin only (the auth server is another origin, as for a real browser).
    if (!url.startsWith(this.origin) || this.jar.size === 0) return {};
    return { cookie: [...this.jar].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('; ') };
  }

  private remember(url: string, headers: Headers): void {
    if (!url.startsWith(this.origin)) return;
    for (const line of headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = decodeURIComponent(pair.slice(at + 1).trim());
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  get csrf(): string | undefined {
    return this.jar.get('herald_csrf');
  }

  async request(
    method: string,
    url: string,
    options: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<WebAnswer> {
    const full = url.startsWith('http') ? url : this.origin + url;
    const headers: Record<string, string> = { ...this.cookieHeader(full), ...options.headers };
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    const response = await fetch(full, { method, headers, body, redirect: 'manual' });
    this.remember(full, response.headers);
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json')) parsed = text === '' ? undefined : JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  /** A call of the web UI's JSON API (/api/app/...): with the CSRF header unless told otherwise. */
  app(method: string, path: string, json?: unknown, options: { csrf?: boolean; headers?: Record<string, string> } = {}): Promise<WebAnswer> {
    const headers = { ...options.headers };
    if (options.csrf !== false && this.csrf) headers['x-csrf-token'] = this.csrf;
    return this.request(method, `/api/app${path}`, { json, headers });
  }

  /** A call of an /api/app route by its entry in the route table: typed input, and the success answer typed as `body`. */
  async route<E extends RouteEntry>(entry: E, input: RouteInput<E>): Promise<Omit<WebAnswer, 'body'> & { body: AnswerOf<E> }> {
    return this.app(entry.method, pathOf(entry, input), input.body);
  }

  async signUp(email: string, password = 'correct horse battery', extra: Record<string, string> = {}): Promise<WebAnswer> {
    const answer = await this.app('POST', '/auth/signup', { email, password, ...extra });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    return answer;
  }

  async logIn(email: string, password = 'correct horse battery'): Promise<WebAnswer> {
    return this.app('POST', '/auth/login', { email, password });
  }
}

/** Where a redirect answer points (absolute). */
export function location(answer: WebAnswer, base: string): URL {
  assert.ok(answer.status >= 300 && answer.status < 400, `expected a redirect, got ${answer.status}: ${answer.text.slice(0, 500)}`);
  return new URL(answer.headers.get('location')!, base);
}
