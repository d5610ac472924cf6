/**
 * Property-based test of POST /posts: random JSON, cut-off JSON text and
 * "near-valid" bodies (a valid body with fields dropped or replaced by junk,
 * random date strings, huge or negative numbers, any Unicode, nested junk).
 * Whatever arrives: never a 5xx, always a JSON answer, nothing stored unless the
 * answer is 2xx, and a 2xx creates exactly one root post per returned entry.
 *
 * The seed is fixed (HERALD_FUZZ_SEED overrides it; HERALD_FUZZ_RUNS the run
 * count); on failure fast-check prints the seed and path that reproduce it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { PNG_1x1, startHerald, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { assertSameState, send, snapshotState } from '../helpers/bad-input.ts';

const SEED = Number(process.env.HERALD_FUZZ_SEED ?? 20260601);
const RUNS = Number(process.env.HERALD_FUZZ_RUNS ?? 200);
const FUTURE = '2030-06-01T09:00:00.000Z';

interface World {
  herald: TestHerald;
  account: TestAccount;
  channel: string;
  foreignChannel: string;
  media: { id: string; path: string };
  foreignMedia: { id: string; path: string };
  /** A draft of the account, for type "update". */
  post: string;
  group: string;
}

/** Any JSON value, strings of any code points (NUL and lone surrogates included). */
const junk = fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' });

/** How often a field is broken: 1 in BREAK_ODDS, so roughly half of the near-valid bodies stay valid. */
const BREAK_ODDS = 30;

/** Mostly `valid`, sometimes `broken`. */
function mostly(valid: fc.Arbitrary<unknown>, broken: fc.Arbitrary<unknown> = junk): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: BREAK_ODDS - 1, arbitrary: valid }, { weight: 1, arbitrary: broken });
}

/** Sometimes drops one or two of the object's keys. */
function dropSome(record: fc.Arbitrary<Record<string, unknown>>, keys: string[]): fc.Arbitrary<Record<string, unknown>> {
  const dropped = mostly(fc.constant([]), fc.subarray(keys, { minLength: 1, maxLength: 2 })) as fc.Arbitrary<string[]>;
  return fc.tuple(record, dropped).map(([value, drop]) => Object.fromEntries(Object.entries(value).filter(([k]) => !drop.includes(k))));
}

/** Characters that break naive storage and parsing: NUL, lone surrogates, quotes, escapes, bidi overrides. */
const nasty = fc.string({
  unit: fc.constantFrom('\u0000', '\u0001', '\ud800', '\udfff', '\uffff', '\u202e', '\u2028', '"', "'", '\\', '%00', ';--', '${x}', 'é', '😀', ' '),
  minLength: 1,
  maxLength: 12,
});

const goodText = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }).map((t) => `post ${t}`),
  nasty.map((t) => `post ${t}`),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map((t) => `post ${t}`),
  fc.constantFrom('read https://example.com/a?b=1 and http://example.org', '😀👍🏽 e\u0301', 'x'.repeat(100_000)),
);
const badText = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('', '   ', 'x'.repeat(100_001)), junk);

const date = mostly(
  fc.oneof(
    fc.constant(FUTURE),
    fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  ),
  fc.oneof(
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom(
      '2026-13-01',
      'tomorrow',
      '2026-02-30T00:00:00Z',
      '2026-06-01',
      '2026-06-01 10:00',
      '2026-06-01T10:00:00+14:00',
      '2026-06-01T10:00:00+99:00',
      '0000-01-01T00:00:00Z',
      '0099-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999999999Z',
      '2026-06-01T24:00:00Z',
    ),
    fc.integer(),
    fc.double(),
    junk,
  ),
);

const delay = mostly(
  fc.integer({ min: 0, max: 120 }),
  fc.oneof(
    fc.integer({ min: -1_000_000, max: 1_000_000_000 }),
    fc.double(),
    fc.constantFrom(1e308, -0, 2 ** 53, '5', '0x10', '', null, true, [], [7], {}),
    junk,
  ),
);

const tagText = fc.oneof(fc.string({ maxLength: 20 }), nasty);
const tags = mostly(fc.array(fc.oneof(tagText, fc.record({ value: tagText, label: fc.option(tagText, { nil: undefined }) })), { maxLength: 3 }));

function postArbitrary(w: World): fc.Arbitrary<Record<string, unknown>> {
  const uploadUrl = w.herald.services.config.uploadUrl;
  const wrongRef = fc.record({
    id: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
    path: fc.oneof(fc.constant(w.foreignMedia.path), fc.constant(`${uploadUrl}/2030/01/none.png`), fc.webUrl(), fc.string({ maxLength: 20 })),
  });
  const image = mostly(fc.constantFrom([], [w.media]), fc.oneof(fc.array(fc.oneof(wrongRef, junk), { minLength: 1, maxLength: 3 }), junk));
  const itemId = mostly(fc.constant(''), fc.oneof(fc.constant(w.post), fc.string({ maxLength: 20 }), junk));
  const item = dropSome(fc.record({ id: itemId, content: mostly(goodText, badText), image, delay }), ['id', 'content', 'image', 'delay']);
  const integration = mostly(
    fc.constant({ id: w.channel }),
    fc.oneof(fc.constant({ id: w.foreignChannel }), fc.record({ id: fc.oneof(nasty, fc.string({ unit: 'binary', maxLength: 30 })) }), junk),
  );
  const settings = mostly(
    fc.constantFrom(undefined, { __type: 'webhook' }),
    fc.oneof(fc.dictionary(fc.string({ unit: 'binary', maxLength: 10 }), junk, { maxKeys: 3 }), junk),
  );
  const group = mostly(fc.constantFrom('', w.group), fc.oneof(fc.string({ maxLength: 20 }), nasty, junk));
  const entry = dropSome(fc.record({ integration, value: mostly(fc.array(mostly(item), { minLength: 1, maxLength: 3 })), settings, group }), [
    'integration',
    'value',
    'settings',
    'group',
  ]);
  const body = dropSome(
    fc.record({
      type: mostly(fc.constantFrom('draft', 'schedule', 'now', 'update'), fc.oneof(fc.string({ maxLength: 10 }), junk)),
      date,
      shortLink: mostly(fc.boolean()),
      tags,
      posts: mostly(fc.array(mostly(entry), { minLength: 1, maxLength: 3 })),
      creationMethod: fc.option(mostly(fc.oneof(fc.string({ maxLength: 50 }), nasty)), { nil: undefined }),
    }),
    ['type', 'date', 'shortLink', 'tags', 'posts'],
  );
  const extras = mostly(fc.constant({}), fc.dictionary(fc.string({ maxLength: 10 }), junk, { maxKeys: 2 }));
  return fc.tuple(body, extras).map(([b, extra]) => ({ ...b, ...(extra as object) }));
}

/** What is sent: JSON text, and the value it encodes (undefined when the text is cut off). */
function requestArbitrary(w: World): fc.Arbitrary<{ text: string }> {
  const nearValid = postArbitrary(w);
  return fc.oneof(
    { weight: 6, arbitrary: nearValid.map((b) => ({ text: JSON.stringify(b) })) },
    { weight: 1, arbitrary: junk.map((v) => ({ text: JSON.stringify(v) })) },
    {
      weight: 1,
      arbitrary: fc.tuple(nearValid, fc.nat()).map(([b, n]) => {
        const t = JSON.stringify(b);
        return { text: t.slice(0, n % t.length) };
      }),
    },
  );
}

async function rootPostIds(herald: TestHerald): Promise<Set<string>> {
  const rows = await herald.services.store.db.selectFrom('posts').select('id').where('thread_index', '=', 0).execute();
  return new Set(rows.map((r) => r.id));
}

async function makeWorld(herald: TestHerald): Promise<World> {
  const account = await herald.newAccount('Fuzzed');
  const other = await herald.newAccount('Other');
  const addChannel = async (who: TestAccount, label: string) => {
    const added = await who.callUntyped('POST', '/integrations', { identifier: 'webhook', name: label, credentials: { url: `http://127.0.0.1:9/${label}` } });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    return added.body.id as string;
  };
  const addMedia = async (who: TestAccount) => {
    const stored = await upload(who, herald.api, PNG_1x1, 'fuzz.png');
    assert.equal(stored.status, 201, JSON.stringify(stored.body));
    return { id: stored.body.id as string, path: stored.body.path as string };
  };
  const channel = await addChannel(account, 'fuzzed');
  const draft = await account.callUntyped('POST', '/posts', {
    type: 'draft',
    date: FUTURE,
    shortLink: false,
    tags: [],
    posts: [{ integration: { id: channel }, value: [{ content: 'draft to update' }] }],
  });
  assert.equal(draft.status, 201, JSON.stringify(draft.body));
  const detail = await account.callUntyped('GET', `/posts/${draft.body[0].postId}`);
  return {
    herald,
    account,
    channel,
    foreignChannel: await addChannel(other, 'other'),
    media: await addMedia(account),
    foreignMedia: await addMedia(other),
    post: draft.body[0].postId,
    group: detail.body.group,
  };
}

for (const store of await testStores()) {
  describe(`POST /posts under random input (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let world: World;

    before(async () => {
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '1000000', HERALD_REQUESTS_PER_MINUTE: '1000000' } });
      world = await makeWorld(herald);
    });
    after(async () => {
      await herald.close();
    });

    it(`never 5xx, always JSON, stores only on 2xx (${RUNS} runs, seed ${SEED})`, async () => {
      const outcomes = { accepted: 0, refused: 0 };
      const property = fc.asyncProperty(requestArbitrary(world), async ({ text }) => {
        const stateBefore = await snapshotState(herald, ['rate_counters', 'idempotency_keys']);
        const rootsBefore = await rootPostIds(herald);
        const answer = await send(herald.api, world.account.key, { method: 'POST', path: '/posts', raw: text });
        const shown = `answered ${answer.status} ${answer.text.slice(0, 300)} to ${text.slice(0, 300)}`;
        assert.ok(answer.status < 500, shown);
        assert.ok(answer.isJson, `${shown} (not JSON)`);
        if (answer.status < 200 || answer.status >= 300) {
          outcomes.refused++;
          assert.ok(answer.status >= 400, shown);
          assert.equal(answer.body.msg, answer.body.message, shown);
          assertSameState(stateBefore, await snapshotState(herald, ['rate_counters', 'idempotency_keys']), `a refused POST /posts (${answer.status})`);
          return;
        }
        outcomes.accepted++;
        const sent = JSON.parse(text);
        assert.equal(answer.status, 201, shown);
        assert.ok(Array.isArray(answer.body) && answer.body.length === sent.posts.length, shown);
        const returned = answer.body.map((r: { postId: string }) => r.postId).sort();
        const rootsAfter = await rootPostIds(herald);
        const created = [...rootsAfter].filter((id) => !rootsBefore.has(id)).sort();
        if (sent.type === 'update') {
          assert.deepEqual(created, [], `an update creates no root post: ${shown}`);
          for (const id of returned) assert.ok(rootsAfter.has(id), `update answered a post that does not exist: ${shown}`);
        } else {
          assert.deepEqual(created, returned, `one new root post per returned entry: ${shown}`);
        }
        for (const r of answer.body) assert.equal(r.integration, world.channel, shown);
      });
      console.log(`# POST /posts fuzz (${store}): seed ${SEED}, ${RUNS} runs`);
      await fc.assert(property, { numRuns: RUNS, seed: SEED });
      console.log(`# accepted ${outcomes.accepted}, refused ${outcomes.refused}`);
      // A generator that never produced an accepted body would not test the 2xx half of the property.
      assert.ok(outcomes.accepted > 0 && outcomes.refused > 0, JSON.stringify(outcomes));
    });
  });
}
