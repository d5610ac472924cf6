import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { entry, postBody } from '../helpers/api-fixtures.ts';
import { findProvider } from '../../src/providers/index.ts';
import { startMoltbookFake, type MoltbookFake } from '../fakes/moltbook.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const KEY = 'moltbook_sk_3f9a1c7e5b2d4f6a8c0e';
const UNCLAIMED = 'moltbook_sk_unclaimed_0b1c2d3e';

for (const store of await testStores()) {
  describe(`moltbook (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: MoltbookFake;
    let account: TestAccount;
    let channelId: string;

    const postsTitled = (title: string) => fake.calls('POST /api/v1/posts').filter((c) => c.json?.title === title);

    before(async () => {
      fake = await startMoltbookFake();
      fake.agents.set(KEY, { id: 'agent-7', name: 'herald_bot', display_name: 'Herald Bot', status: 'claimed', karma: 42, follower_count: 5 });
      fake.agents.set(UNCLAIMED, { id: 'agent-8', name: 'new_bot', status: 'pending_claim', karma: 0, follower_count: 0 });
      // The suite posts often: no 30-minute gap except where a test sets it; comments keep a real (short) gap.
      fake.limits.postGapMs = 0;
      fake.limits.commentGapMs = 1000;
      herald = await startHerald(store, { engine: { pollMs: 50, publishTimeoutMs: 1_500 }, env: { HERALD_MOLTBOOK_API_URL: fake.url } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('talks to the www host by default (the bare domain drops Authorization on its redirect)', () => {
      assert.equal(findProvider('moltbook')?.urls?.api, 'https://www.moltbook.com');
    });

    it('connects with a claimed agent key, checked with /agents/me and /agents/status', async () => {
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'moltbook', credentials: { apiKey: KEY } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Herald Bot');
      assert.equal(added.body.profile, 'herald_bot');
      const [me, status] = fake.requests.slice(-2);
      assert.equal(`${me.method} ${me.path}`, 'GET /api/v1/agents/me');
      assert.equal(`${status.method} ${status.path}`, 'GET /api/v1/agents/status');
      assert.equal(me.headers.authorization, `Bearer ${KEY}`);
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), /moltbook_sk/);
    });

    it('refuses a wrong key, an unclaimed agent and a malformed key, naming the field', async () => {
      const wrong = await account.callUntyped('POST', '/integrations', { identifier: 'moltbook', credentials: { apiKey: 'moltbook_sk_wrongwrongwrong' } });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials');
      assert.match(wrong.body.message, /Moltbook answered 401: Invalid API key/);
      const unclaimed = await account.callUntyped('POST', '/integrations', { identifier: 'moltbook', credentials: { apiKey: UNCLAIMED } });
      assert.equal(unclaimed.status, 400);
      assert.match(unclaimed.body.message, /new_bot is not claimed yet/);
      const malformed = await account.callUntyped('POST', '/integrations', { identifier: 'moltbook', credentials: { apiKey: 'no spaces allowed' } });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.errors[0].path, 'credentials.apiKey');
    });

    it('posts text in the chosen submolt with its first line as the title', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['Agents and schedules\nWhy I post on time.'], { __type: 'moltbook', submolt: 'agents' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [sent] = postsTitled('Agents and schedules');
      assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
      assert.deepEqual(sent.json, { submolt: 'agents', title: 'Agents and schedules', content: 'Agents and schedules\nWhy I post on time.' });
      const stored = fake.items.at(-1)!;
      assert.equal(post.releaseId, stored.id);
      assert.equal(post.releaseURL, `https://www.moltbook.com/post/${stored.id}`);
    });

    it('refuses before acceptance: over 300 characters, and media', async () => {
      const now = { date: new Date().toISOString() };
      const long = await account.callUntyped('POST', '/posts', postBody('now', [entry(channelId, ['x'.repeat(301)])], now));
      assert.equal(long.status, 400, JSON.stringify(long.body));
      assert.ok(
        long.body.errors.some((e: any) => e.path === 'posts.0.value.0.content' && /300/.test(e.message)),
        'a too-long title is refused at the content, naming the 300-character limit',
      );
      const png = await uploadPng(account, herald.api);
      const media = await account.callUntyped(
        'POST',
        '/posts',
        postBody('now', [entry(channelId, [{ content: 'pic', image: [{ id: png.id, path: png.path }] }])], now),
      );
      assert.equal(media.status, 400, JSON.stringify(media.body));
    });

    it('publishes a thread as comments replying to the one before, waiting retry_after_seconds between them', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Thread root', 'first comment', 'second comment']), 20_000);
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const rootId = post.thread[0].releaseId;
      const comments = fake.calls('POST /api/v1/posts/:id/comments');
      const first = comments.filter((c) => c.json.content === 'first comment');
      const second = comments.filter((c) => c.json.content === 'second comment');
      assert.equal(first.length, 1);
      assert.equal(first[0].path, `/api/v1/posts/${rootId}/comments`);
      assert.equal(first[0].json.parent_id, undefined);
      const firstComment = fake.items.find((i) => i.content === 'first comment')!;
      assert.equal(post.thread[1].releaseId, `${rootId}/${firstComment.id}`);
      // The second came within Moltbook's comment gap: refused with retry_after_seconds, then sent after it.
      assert.equal(second.length, 2);
      assert.equal(second[1].json.parent_id, firstComment.id);
      assert.ok(second[1].at - second[0].at >= 1000, 'waited retry_after_seconds');
      assert.equal(post.thread[2].attempts[0].outcome, 'retry');
      assert.match(post.thread[2].attempts[0].detail ?? '', /comment once every 20 seconds/);
    });

    it('answers a verification challenge it can read, and the post counts', async () => {
      fake.challengeNext = {
        text: 'A] lO-bS tErS^ cLaW ]fOrCe| iN~ wAtEr, tHe^ lObStEr muLtIpLiEs iT: tHe fIrSt cLaW iS tWeNtY tHrEe NeWtOnS aNd ThE sEcOnD iS fI vE nEwToNs',
        answer: '115.00',
      };
      const post = await settled(account, await publishNow(account, channelId, ['Verified post']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [check] = fake.calls('POST /api/v1/verify');
      assert.deepEqual(check.json, { verification_code: fake.items.at(-1)!.challenge!.code, answer: '115.00' });
      assert.equal(fake.items.at(-1)!.verified, true);
    });

    it('fails plainly, without guessing or posting again, on a challenge it cannot read', async () => {
      fake.challengeNext = { text: 'wHaT cOlOuR iS a LoBsTeR aFtEr CoOkInG?', answer: 'red' };
      const verifies = fake.calls('POST /api/v1/verify').length;
      const post = await settled(account, await publishNow(account, channelId, ['Unanswerable']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /verification Herald cannot answer with confidence \("wHaT cOlOuR/);
      assert.equal(fake.calls('POST /api/v1/verify').length, verifies, 'no guess sent');
      assert.equal(postsTitled('Unanswerable').length, 1);
    });

    it('a post whose answer never comes is found among the newest posts: one post', async () => {
      fake.failNext('POST /api/v1/posts', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['Lost answer']), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(postsTitled('Lost answer').length, 1, 'never posted twice');
      assert.equal(post.releaseId, fake.items.find((i) => i.title === 'Lost answer')!.id);
      assert.deepEqual(fake.calls('GET /api/v1/posts').at(-1)!.query, { sort: 'new', submolt: 'general', limit: '25' });
    });

    it('a post that is not there after a timeout is not sent again: ERROR telling the user', async () => {
      fake.failNext('POST /api/v1/posts', { hang: true });
      const post = await settled(account, await publishNow(account, channelId, ['Never arrived']), 20_000);
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /may have been published.*Moltbook does not show it yet/);
      assert.equal(postsTitled('Never arrived').length, 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text]),
      held: (text) => fake.items.filter((i) => i.kind === 'post' && i.title === text).length,
    }));

    it("fails a refused post with Moltbook's own error, without retrying", async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Nowhere'], { __type: 'moltbook', submolt: 'nosuchplace' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /Moltbook answered 404: Submolt not found/);
      assert.equal(postsTitled('Nowhere').length, 1);
    });

    it('waits retry_after_minutes when the agent posted less than 30 minutes ago', async () => {
      fake.limits.postGapMs = 30 * 60_000;
      try {
        const postId = await publishNow(account, channelId, ['Too soon']);
        const view = await eventually(async () => {
          const r = await account.callUntyped('GET', `/posts/${postId}`);
          return r.body.thread[0].attempts.length > 0 && r.body.thread[0].attempts[0].outcome !== 'sending' ? r.body : undefined;
        });
        assert.notEqual(view.state, 'ERROR');
        assert.equal(view.thread[0].attempts[0].outcome, 'retry');
        assert.match(view.thread[0].attempts[0].detail ?? '', /once every 30 minutes/);
        // Herald hands the post back until the minutes Moltbook named: no worker holds it, and it is not due before then.
        await eventually(
          async () => {
            const row = await herald.services.store.db
              .selectFrom('posts')
              .select(['lease_owner', 'lease_until'])
              .where('id', '=', view.thread[0].id)
              .executeTakeFirst();
            return row && row.lease_owner === null && Number(row.lease_until) > Date.now() + 29 * 60_000 ? true : undefined;
          },
          5000,
          'the post handed back for the minutes Moltbook named',
        );
        assert.equal(postsTitled('Too soon').length, 1, 'not sent again before the minutes Moltbook named');
        await account.callUntyped('DELETE', `/posts/${postId}`);
      } finally {
        fake.limits.postGapMs = 0;
      }
    });

    it("reports the agent's karma and followers, and a post's votes and comments", async () => {
      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      assert.deepEqual(
        channel.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Karma', 42],
          ['Followers', 5],
        ],
      );
      const post = await settled(account, await publishNow(account, channelId, ['Vote for me']));
      Object.assign(fake.items.find((i) => i.id === post.releaseId)!, { upvotes: 7, downvotes: 1 });
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Upvotes', 7],
          ['Downvotes', 1],
          ['Comments', 0],
        ],
      );
    });

    it('marks the channel for reconnection when the key stops working', async () => {
      fake.agents.delete(KEY);
      const post = await settled(account, await publishNow(account, channelId, ['after the key is gone']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /must be reconnected: Moltbook answered 401: Invalid API key/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
