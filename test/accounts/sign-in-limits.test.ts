/**
 * Sign-in limits count the real client address: X-Forwarded-For is believed only
 * from the proxies HERALD_TRUST_PROXY names, and a stranger guessing a person's
 * password locks out only the stranger's own address.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { loadConfig } from '../../src/config.ts';
import { WebClient } from './web-client.ts';

const PASSWORD = 'correct horse battery';

function logInFrom(herald: TestHerald, forwardedFor: string, email: string, password: string) {
  return new WebClient(herald.url).app('POST', '/auth/login', { email, password }, { headers: { 'x-forwarded-for': forwardedFor } });
}

describe('sign-in limits without a trusted proxy (the default)', () => {
  let herald: TestHerald;
  before(async () => {
    herald = await startHerald('sqlite');
    await new WebClient(herald.url).signUp('owner@example.com', PASSWORD);
  });
  after(async () => herald.close());

  it('a client that makes up a new X-Forwarded-For for every guess is still counted as one address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 55; i++) statuses.push((await logInFrom(herald, `198.51.100.${i}`, `guess${i}@example.com`, 'wrong password')).status);
    assert.deepEqual(statuses.slice(0, 50), Array(50).fill(401), 'the first 50 are judged');
    assert.deepEqual(statuses.slice(50), Array(5).fill(429), 'then this address is limited, whatever it claims');
  });
});

describe('sign-in limits behind a trusted proxy', () => {
  let herald: TestHerald;
  before(async () => {
    herald = await startHerald('sqlite', { env: { HERALD_TRUST_PROXY: '127.0.0.1' } });
    await new WebClient(herald.url).signUp('owner@example.com', PASSWORD);
  });
  after(async () => herald.close());

  it("a stranger's wrong guesses lock out the stranger, not the owner signing in from elsewhere", async () => {
    for (let i = 0; i < 10; i++) assert.equal((await logInFrom(herald, '203.0.113.7', 'owner@example.com', 'wrong password')).status, 401);
    const stranger = await logInFrom(herald, '203.0.113.7', 'owner@example.com', PASSWORD);
    assert.equal(stranger.status, 429, 'the guessing address is limited, even with the right password');
    assert.ok(Number(stranger.headers.get('retry-after')) > 0, 'with a retry hint');
    const owner = await logInFrom(herald, '198.51.100.2', 'owner@example.com', PASSWORD);
    assert.equal(owner.status, 200, `the owner signs in from another address: ${JSON.stringify(owner.body)}`);
  });

  it('guesses on both sides of a clock quarter-hour still count as one window (the window slides)', async () => {
    const WINDOW = 15 * 60_000;
    const edge = Math.ceil(Date.now() / WINDOW) * WINDOW;
    mock.timers.enable({ apis: ['Date'], now: edge - 5_000 });
    try {
      for (let i = 0; i < 10; i++) assert.equal((await logInFrom(herald, '203.0.113.40', 'owner@example.com', 'wrong password')).status, 401);
      mock.timers.tick(10_000); // past the quarter-hour: a clock window would start counting again
      assert.equal((await logInFrom(herald, '203.0.113.40', 'owner@example.com', 'wrong password')).status, 429, 'the ten guesses are still in the window');
      mock.timers.tick(WINDOW);
      assert.equal((await logInFrom(herald, '203.0.113.40', 'owner@example.com', 'wrong password')).status, 401, 'judged again once they left it');
    } finally {
      mock.timers.reset();
    }
  });

  it('each forwarded address has its own allowance', async () => {
    for (let i = 0; i < 60; i++) assert.equal((await logInFrom(herald, `192.0.2.${i}`, `someone${i}@example.com`, 'wrong password')).status, 401);
  });
});

describe('HERALD_TRUST_PROXY', () => {
  it('names proxies or a hop count; "true" (trust anyone) is refused at start', () => {
    const base = { HERALD_DATA_DIR: '/tmp/unused' };
    assert.equal(loadConfig(base).trustProxy, false, 'no proxy by default');
    assert.equal(loadConfig({ ...base, HERALD_TRUST_PROXY: '2' }).trustProxy, 2);
    assert.equal(loadConfig({ ...base, HERALD_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, '10.0.0.0/8, 127.0.0.1');
    assert.throws(() => loadConfig({ ...base, HERALD_TRUST_PROXY: 'true' }), /must name the proxies/);
    assert.throws(() => loadConfig({ ...base, HERALD_TRUST_PROXY: 'proxy.example' }), /not an address/);
  });
});
