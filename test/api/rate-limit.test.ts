import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { untypedCaller, startHerald, type UntypedResult, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { addWebhookChannel, countRows, entry, scheduledPost } from '../helpers/api-fixtures.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';

const HOUR = 3_600_000;

/** Both spellings of the rate-limit headers, which must agree. */
function limitHeaders(r: UntypedResult): { limit: number; remaining: number; reset: number } {
  const read = (name: string) => {
    const standard = r.headers.get(`ratelimit-${name}`);
    assert.ok(standard !== null, `RateLimit-${name} header present (status ${r.status})`);
    assert.equal(r.headers.get(`x-ratelimit-${name}`), standard, `X-RateLimit-${name} equals RateLimit-${name}`);
    return Number(standard);
  };
  return { limit: read('limit'), remaining: read('remaining'), reset: read('reset') };
}

function assertLimited(r: UntypedResult, limit: number, windowSeconds: number): void {
  assert.equal(r.status, 429, JSON.stringify(r.body));
  assert.equal(r.body.statusCode, 429);
  assert.equal(r.body.code, 'rate_limited');
  assert.equal(r.body.msg, r.body.message);
  const retryAfter = Number(r.headers.get('retry-after'));
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds,
    `Retry-After is whole seconds within the window: ${r.headers.get('retry-after')}`,
  );
  const headers = limitHeaders(r);
  assert.equal(headers.limit, limit);
  assert.equal(headers.remaining, 0);
  assert.ok(headers.reset >= 1 && headers.reset <= windowSeconds, 'headers.reset >= 1 && headers.reset <= windowSeconds');
}

const POSTS_PER_HOUR = 3;
/** The limits slide in steps of a sixtieth of their window: a request leaves the hour at most 61 minutes after it was counted, */
const POSTS_WINDOW_SECONDS = 3600 + 60;
/** and the minute at most 61 seconds after. */
const KEY_WINDOW_SECONDS = 60 + 1;

for (const store of await testStores()) {
  describe(`POST /posts hourly limit per account (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let alice: TestAccount;
    let bob: TestAccount;
    let aliceChannel: string;
    let bobChannel: string;
    const env = { HERALD_POSTS_PER_HOUR: String(POSTS_PER_HOUR) };

    before(async () => {
      herald = await startHerald(store, { env });
      alice = await herald.newAccount('Alice');
      bob = await herald.newAccount('Bob');
      aliceChannel = (await addWebhookChannel(alice)).id;
      bobChannel = (await addWebhookChannel(bob)).id;
    });
    after(() => herald.close());

    it('does not count requests refused by validation', async () => {
      const good = scheduledPost(aliceChannel, 'valid');
      const { date: _date, ...noDate } = good;
      for (const bad of [{ ...good, type: 'sometime' }, noDate, scheduledPost(aliceChannel, '   ')]) {
        const refused = await alice.callUntyped('POST', '/posts', bad);
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
      }
      // Nothing was used up: the first valid request still has the whole allowance minus itself.
      const first = await alice.callUntyped('POST', '/posts', good);
      assert.equal(first.status, 201);
      const headers = limitHeaders(first);
      assert.equal(headers.limit, POSTS_PER_HOUR);
      assert.equal(headers.remaining, POSTS_PER_HOUR - 1);
      assert.ok(headers.reset >= 1 && headers.reset <= POSTS_WINDOW_SECONDS, `reset within the sliding hour: ${headers.reset}`);
    });

    it('counts down in the headers, then answers 429 with Retry-After and creates nothing', async () => {
      const lastKey = { 'idempotency-key': 'the-last-allowed-post' };
      const lastBody = scheduledPost(aliceChannel, 'the last allowed post');
      for (let remaining = POSTS_PER_HOUR - 2; remaining >= 1; remaining--) {
        const created = await alice.callUntyped('POST', '/posts', scheduledPost(aliceChannel, `post, ${remaining} left`));
        assert.equal(created.status, 201);
        assert.equal(limitHeaders(created).remaining, remaining);
      }
      const last = await alice.callUntyped('POST', '/posts', lastBody, lastKey);
      assert.equal(last.status, 201);
      assert.equal(limitHeaders(last).remaining, 0);
      const posts = await countRows(herald, 'posts', alice.id);
      const over = await alice.callUntyped('POST', '/posts', scheduledPost(aliceChannel, 'one too many'));
      assertLimited(over, POSTS_PER_HOUR, POSTS_WINDOW_SECONDS);
      assert.equal(await countRows(herald, 'posts', alice.id), posts);

      // A client that lost the answer of its last allowed post still gets it back.
      const retried = await alice.callUntyped('POST', '/posts', lastBody, lastKey);
      assert.equal(retried.status, 201);
      assert.equal(retried.headers.get('idempotent-replayed'), 'true');
      assert.equal(await countRows(herald, 'posts', alice.id), posts);
      assert.equal((await alice.callUntyped('GET', '/integrations')).status, 200, 'other endpoints are not limited by the posts allowance');
    });

    it('a new series counts as one POST /posts: past the allowance it is refused with the same 429, and nothing is stored', async () => {
      const dora = await herald.newAccount('Dora');
      const channel = (await addWebhookChannel(dora)).id;
      const start = new Date(Date.now() + 7 * 24 * HOUR).toISOString();
      const series = (content: string, unit = 'week') => ({
        repeat: { start, unit, count: 3 },
        shortLink: false,
        tags: [],
        posts: [entry(channel, [content])],
      });
      const refused = await dora.callUntyped('POST', '/series', series('a bad rule', 'month'));
      assert.equal(refused.status, 400, 'a series refused by its checks counts nothing');
      const first = await dora.callUntyped('POST', '/series', series('Weekly tip'));
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.equal(limitHeaders(first).remaining, POSTS_PER_HOUR - 1, 'counted once, as one POST /posts');
      for (let i = 1; i < POSTS_PER_HOUR; i++) assert.equal((await dora.callUntyped('POST', '/posts', scheduledPost(channel, `post ${i}`))).status, 201);

      const overSeries = await dora.callUntyped('POST', '/series', series('one series too many'));
      const overPost = await dora.callUntyped('POST', '/posts', scheduledPost(channel, 'one post too many'));
      assertLimited(overSeries, POSTS_PER_HOUR, POSTS_WINDOW_SECONDS);
      assertLimited(overPost, POSTS_PER_HOUR, POSTS_WINDOW_SECONDS);
      const shape = ({ message: _message, msg: _msg, ...rest }: Record<string, unknown>) => rest;
      assert.deepEqual(shape(overSeries.body), shape(overPost.body), 'the same error body as POST /posts');
      for (const over of [overSeries, overPost]) assert.match(over.body.message, /^POST \/posts: at most 3 requests per 1 hour\(s\); try again in \d+ s$/);
      assert.deepEqual(
        (await dora.callUntyped('GET', '/series')).body.map((s: { posts: { value: { content: string }[] }[] }) => s.posts[0].value[0].content),
        ['Weekly tip'],
        'the refused series was not stored',
      );
    });

    it('limits each account on its own', async () => {
      const created = await bob.callUntyped('POST', '/posts', scheduledPost(bobChannel, 'Bob still may'));
      assert.equal(created.status, 201);
      assert.equal(limitHeaders(created).remaining, POSTS_PER_HOUR - 1);
    });

    // Several processes of one deployment share a PostgreSQL database (SQLite is the one-process mode).
    if (store === 'postgres') {
      it('shares the counters between servers on the same database', async () => {
        const second = await startHerald(store, { env, databaseUrl: herald.services.config.databaseUrl });
        try {
          // Same accounts and keys: they live in the database.
          const [aliceThere, bobThere] = [alice, bob].map((a) => untypedCaller(second.api, a.key));
          const aliceOver = await aliceThere('POST', '/posts', scheduledPost(aliceChannel, 'try the other server'));
          assertLimited(aliceOver, POSTS_PER_HOUR, POSTS_WINDOW_SECONDS);

          const bobOnSecond = await bobThere('POST', '/posts', scheduledPost(bobChannel, 'Bob on the second server'));
          assert.equal(bobOnSecond.status, 201);
          assert.equal(limitHeaders(bobOnSecond).remaining, POSTS_PER_HOUR - 2, 'counts the post Bob made on the first server');
          const bobOnFirst = await bob.callUntyped('POST', '/posts', scheduledPost(bobChannel, 'Bob back on the first'));
          assert.equal(limitHeaders(bobOnFirst).remaining, 0, 'counts the post Bob made on the second server');
          assertLimited(await bobThere('POST', '/posts', scheduledPost(bobChannel, 'Bob over')), POSTS_PER_HOUR, POSTS_WINDOW_SECONDS);

          // A burst spread over both servers at once gets exactly the allowance, no more.
          const carol = await herald.newAccount('Carol');
          const carolChannel = (await addWebhookChannel(carol)).id;
          const carolThere = untypedCaller(second.api, carol.key);
          const burst = await Promise.all(
            Array.from({ length: POSTS_PER_HOUR * 2 }, (_, i) =>
              (i % 2 ? carolThere : carol.callUntyped)('POST', '/posts', scheduledPost(carolChannel, `burst ${i}`)),
            ),
          );
          assert.deepEqual(burst.map((r) => r.status).sort(), [...Array(POSTS_PER_HOUR).fill(201), ...Array(POSTS_PER_HOUR).fill(429)]);
          assert.equal(await countRows(herald, 'posts', carol.id), POSTS_PER_HOUR);
        } finally {
          await second.close();
        }
      });
    }
  });

  describe(`per-key request limit on every endpoint (${store})`, storeSuite(store), () => {
    const PER_MINUTE = 5;
    let herald: TestHerald;
    let alice: TestAccount;

    before(async () => {
      herald = await startHerald(store, { env: { HERALD_REQUESTS_PER_MINUTE: String(PER_MINUTE) } });
      alice = await herald.newAccount('Alice');
    });
    after(() => herald.close());

    it('answers 429 with headers once a key made its allowance of requests, on any endpoint', async () => {
      const start = new Date().toISOString();
      const allowed = [
        await alice.callUntyped('GET', '/integrations'),
        await alice.callUntyped('GET', '/is-connected'),
        await alice.callUntyped('GET', `/posts?startDate=${start}&endDate=${start}`),
        await alice.callUntyped('GET', '/posts/no-such-post'),
        await alice.callUntyped('POST', '/posts', { type: 'draft' }),
      ];
      assert.deepEqual(
        allowed.map((r) => r.status),
        [200, 200, 200, 404, 400],
      );
      assertLimited(await alice.callUntyped('GET', '/integrations'), PER_MINUTE, KEY_WINDOW_SECONDS);
      assertLimited(await alice.callUntyped('GET', '/is-connected'), PER_MINUTE, KEY_WINDOW_SECONDS);
      assertLimited(await alice.callUntyped('POST', '/upload-from-url', { url: 'http://127.0.0.1:9/x.png' }), PER_MINUTE, KEY_WINDOW_SECONDS);

      const secondKey = await herald.services.accounts.createKey(alice.id, 'second');
      const other = await fetch(`${herald.api}/is-connected`, { headers: { authorization: secondKey.key } });
      assert.equal(other.status, 200, 'another key of the same account has its own allowance');
      const stranger = await herald.newAccount('Stranger');
      assert.equal((await stranger.callUntyped('GET', '/integrations')).status, 200);
    });
  });
}

for (const store of await testStores()) {
  describe(`the hourly posts limit slides (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    before(async () => {
      herald = await startHerald(store);
    });
    after(async () => herald.close());

    /** How many of `count` requests at `at` pass a limit of 30 per hour. */
    async function passed(bucket: string, count: number, at: number): Promise<number> {
      let ok = 0;
      for (let i = 0; i < count; i++) {
        try {
          await herald.services.rateLimiter.consumeSliding(bucket, 30, HOUR, 'POST /posts', at);
          ok++;
        } catch (err) {
          assert.equal((err as { statusCode?: number }).statusCode, 429, String(err));
        }
      }
      return ok;
    }

    it('30 at the end of one clock hour and 30 at the start of the next: the second burst is refused', async () => {
      const nextHour = Date.parse('2031-05-01T11:00:00Z');
      assert.equal(await passed('slide-a', 30, nextHour - 30_000), 30, 'the first burst is within the limit');
      assert.equal(await passed('slide-a', 30, nextHour + 30_000), 0, 'a minute later, nothing more');
    });

    it('a post counts for exactly one hour after it was accepted', async () => {
      const t = Date.parse('2031-05-02T10:20:00Z');
      assert.equal(await passed('slide-b', 15, t), 15);
      assert.equal(await passed('slide-b', 15, t + 30 * 60_000), 15);
      assert.equal(await passed('slide-b', 5, t + 59 * 60_000), 0, 'all 30 are still within the hour');
      assert.equal(await passed('slide-b', 20, t + 61 * 60_000), 15, 'the first 15 have left it');
    });

    it('Retry-After says when one more fits, and then one does', async () => {
      const t = Date.parse('2031-05-03T10:20:00Z');
      assert.equal(await passed('slide-c', 30, t), 30);
      const at = t + 10 * 60_000;
      const retryAfter = await herald.services.rateLimiter.consumeSliding('slide-c', 30, HOUR, 'POST /posts', at).then(
        () => assert.fail('the 31st is refused'),
        (err: { headers: Record<string, string> }) => Number(err.headers['Retry-After']),
      );
      assert.ok(retryAfter > 50 * 60 && retryAfter <= 51 * 60, `about fifty minutes, when the first ones leave the hour: ${retryAfter} s`);
      assert.equal(await passed('slide-c', 1, at + retryAfter * 1000 - 1_000), 0, 'not a second earlier');
      assert.equal(await passed('slide-c', 1, at + retryAfter * 1000), 1, 'then one more fits');
    });
  });
}
