/**
 * Drives "connect a channel through OAuth" end to end over HTTP, playing the
 * user's browser: GET /social/{provider}, follow the network's consent screen
 * (a fake that allows), land on Herald's callback, and pick an account when the
 * network offers several.
 */
import assert from 'node:assert/strict';
import type { TestAccount, TestHerald } from './herald.ts';

export interface Connected {
  /** The channel's id in Herald. */
  id: string;
  name: string;
  identifier: string;
}

export interface ConnectOptions {
  /** Extra query parameters of GET /social/{provider} (e.g. instance for Mastodon). */
  query?: Record<string, string>;
  /** Which of several offered accounts to pick (by index); the first by default. */
  pick?: (choices: { index: number; name: string }[]) => number;
}

/** Starts the connection and returns the network URL the user is sent to. */
export async function startConnect(account: TestAccount, provider: string, query: Record<string, string> = {}): Promise<URL> {
  const started = await account.call('GET', `/social/${provider}?${new URLSearchParams(query)}`);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  return new URL(started.body.url);
}

/** Follows redirects by hand (the browser's part) until Herald's callback answers. */
export async function followToCallback(herald: TestHerald, start: URL): Promise<{ status: number; body: any }> {
  let url = start;
  for (let hop = 0; hop < 5; hop++) {
    const onHerald = url.origin === herald.url;
    const response = await fetch(url, { redirect: 'manual', headers: onHerald ? { accept: 'application/json' } : {} });
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url);
      continue;
    }
    const text = await response.text();
    assert.ok(onHerald, `the network answered ${response.status} instead of sending the user back: ${text.slice(0, 300)}`);
    return { status: response.status, body: JSON.parse(text) };
  }
  throw new Error('too many redirects while connecting');
}

export async function connectOAuth(herald: TestHerald, account: TestAccount, provider: string, options: ConnectOptions = {}): Promise<Connected> {
  const finished = await followToCallback(herald, await startConnect(account, provider, options.query));
  assert.equal(finished.status, 200, JSON.stringify(finished.body));
  let body = finished.body;
  if (!body.connected) {
    const index = options.pick ? options.pick(body.choices) : 0;
    const chosen = await fetch(`${herald.url}/connect/${provider}/choose`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ state: body.state, index }),
    });
    body = await chosen.json();
    assert.equal(chosen.status, 200, JSON.stringify(body));
  }
  assert.equal(body.connected, true);
  return body.integration;
}
