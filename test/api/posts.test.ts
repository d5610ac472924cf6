import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, PNG_1x1, startHerald, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { addWebhookChannel, assertError, createPosts, entry, FUTURE, listPosts, postBody, schedulePost, type Channel } from '../helpers/api-fixtures.ts';
import { teardown } from '../helpers/teardown.ts';

const MINUTE = 60_000;
/** Enough POST /posts per hour for a suite that makes many (the limit itself is tested elsewhere). */
const env = { HERALD_POSTS_PER_HOUR: '1000' };

for (const store of await testStores()) {
  describe(`posts endpoints (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let channel: Channel;
    let media: { id: string; path: string };

    const detail = async (id: string) => {
      const answer = await account.callUntyped('GET', `/posts/${id}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body;
    };

    before(async () => {
      herald = await startHerald(store, { env });
      account = await herald.newAccount();
      channel = await addWebhookChannel(account, { name: 'Main hook' });
      const uploaded = await upload(account, herald.api, PNG_1x1, 'photo.png');
      assert.equal(uploaded.status, 201);
      media = uploaded.body;
    });
    after(() => herald.close());

    it('type "draft" stores a DRAFT, spared the content rules', async () => {
      const [created] = await createPosts(account, postBody('draft', [entry(channel.id, [''])]));
      assert.equal(created.integration, channel.id);
      const post = await detail(created.postId);
      assert.equal(post.state, 'DRAFT');
      assert.equal(post.content, '');
    });

    it('type "schedule" queues at the given date; a date without offset is UTC, an offset is honoured', async () => {
      const cases: [string, string][] = [
        ['2031-05-06T07:08:09.000Z', '2031-05-06T07:08:09.000Z'],
        ['2031-05-06T07:08:09', '2031-05-06T07:08:09.000Z'],
        ['2031-05-06T09:08:09+02:00', '2031-05-06T07:08:09.000Z'],
      ];
      for (const [date, expected] of cases) {
        const post = await detail(await schedulePost(account, channel.id, `at ${date}`, date));
        assert.equal(post.state, 'QUEUE');
        assert.equal(post.publishDate, expected, `date ${date}`);
      }
    });

    it('type "now" queues for the present moment', async () => {
      const before = Date.now();
      const [created] = await createPosts(account, postBody('now', [entry(channel.id, ['right away'])], { date: FUTURE }));
      const after = Date.now();
      const post = await detail(created.postId);
      assert.equal(post.state, 'QUEUE');
      const at = Date.parse(post.publishDate);
      assert.ok(at >= before - 1000 && at <= after, `${post.publishDate} is now, not the date sent`);
    });

    it('several channels in one call give one {postId, integration} per entry, in order', async () => {
      const second = await addWebhookChannel(account, { name: 'Second hook' });
      const created = await createPosts(account, postBody('schedule', [entry(second.id, ['to two']), entry(channel.id, ['to one'])]));
      assert.deepEqual(
        created.map((c) => c.integration),
        [second.id, channel.id],
      );
      assert.notEqual(created[0].postId, created[1].postId);
      assert.equal((await detail(created[0].postId)).integration.id, second.id);
      assert.equal((await detail(created[1].postId)).content, 'to one');
    });

    it('thread items follow the first after their delays; GET /posts lists only the first; GET /posts/:id has the whole thread', async () => {
      const [created] = await createPosts(
        account,
        postBody(
          'schedule',
          [entry(channel.id, ['root', { content: 'reply one', delay: 5 }, { content: 'reply two', delay: 10, image: [{ id: media.id, path: media.path }] }])],
          { date: FUTURE },
        ),
      );
      const post = await detail(created.postId);
      assert.deepEqual(
        post.thread.map((t: any) => [t.content, t.delay, t.publishDate, t.state, t.error, t.attempts]),
        [
          ['root', 0, FUTURE, 'QUEUE', null, []],
          ['reply one', 5, new Date(Date.parse(FUTURE) + 5 * MINUTE).toISOString(), 'QUEUE', null, []],
          ['reply two', 10, new Date(Date.parse(FUTURE) + 15 * MINUTE).toISOString(), 'QUEUE', null, []],
        ],
      );
      assert.deepEqual(
        post.thread[2].image.map((m: any) => m.path),
        [media.path],
      );
      assert.equal(post.thread[0].id, created.postId);
      const listedIds = (await listPosts(account)).map((p) => p.id);
      assert.ok(listedIds.includes(created.postId), 'listedIds.includes(created.postId)');
      assert.ok(!listedIds.includes(post.thread[1].id) && !listedIds.includes(post.thread[2].id), 'replies are not listed');
      assert.equal((await detail(post.thread[2].id)).id, created.postId, 'a reply id answers with its whole thread');
    });

    it('tags may be strings or {value, label}', async () => {
      const [created] = await createPosts(
        account,
        postBody('schedule', [entry(channel.id, ['tagged'])], { tags: ['news', { value: 'promo', label: 'Promo' }, { value: 'bare' }] }),
      );
      assert.deepEqual((await detail(created.postId)).tags, [
        { value: 'news', label: 'news' },
        { value: 'promo', label: 'Promo' },
        { value: 'bare', label: 'bare' },
      ]);
      assertError(await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['x'])], { tags: [42] as never })), 400, {
        path: 'tags.0',
      });
    });

    it('accepts the extra fields clients send (value[].id "", posts[].group "", creationMethod)', async () => {
      const body = postBody('schedule', [entry(channel.id, [{ id: '', content: 'from the cli', delay: 0 }], { group: '' })], { creationMethod: 'cli' });
      const [created] = await createPosts(account, body);
      const post = await detail(created.postId);
      assert.equal(post.content, 'from the cli');
      assert.equal(post.creationMethod, 'cli');
    });

    it('shortLink: true replaces links by {public}/s/{code} links that redirect and count clicks', async () => {
      const content = 'Read https://example.com/article?id=1 and http://example.org/x.';
      const [created] = await createPosts(account, postBody('schedule', [entry(channel.id, [content])], { shortLink: true }));
      const stored = (await detail(created.postId)).content as string;
      const short = [...stored.matchAll(/(http:\/\/127\.0\.0\.1:\d+)\/s\/([A-Za-z0-9_-]+)/g)];
      assert.equal(short.length, 2, stored);
      assert.ok(
        short.every((m) => m[1] === herald.url),
        'short links are on the public URL',
      );
      assert.ok(!stored.includes('example.com') && stored.endsWith('.'), stored);

      const follow = (code: string) => fetch(`${herald.url}/s/${code}`, { redirect: 'manual' });
      const first = await follow(short[0][2]);
      assert.equal(first.status, 302);
      assert.equal(first.headers.get('location'), 'https://example.com/article?id=1');
      assert.equal((await follow(short[1][2])).headers.get('location'), 'http://example.org/x');
      await follow(short[0][2]);
      const clicks = await herald.services.store.db
        .selectFrom('short_links')
        .select(['url', 'clicks'])
        .where('code', 'in', [short[0][2], short[1][2]])
        .orderBy('url')
        .execute();
      assert.deepEqual(
        clicks.map((c) => [c.url, Number(c.clicks)]),
        [
          ['http://example.org/x', 1],
          ['https://example.com/article?id=1', 2],
        ],
      );

      const unknown = await follow('nope-not-a-code');
      assert.equal(unknown.status, 404);
      assert.equal((await unknown.json()).statusCode, 404);

      const [plain] = await createPosts(account, postBody('schedule', [entry(channel.id, [content])], { shortLink: false }));
      assert.equal((await detail(plain.postId)).content, content, 'shortLink: false keeps links');
    });

    it('settings: __type is filled in from the channel, kept when it matches, 400 when it names another provider', async () => {
      const [bare] = await createPosts(account, postBody('schedule', [entry(channel.id, ['no settings'])]));
      assert.equal((await detail(bare.postId)).settings.__type, 'webhook');
      const [given] = await createPosts(
        account,
        postBody('schedule', [entry(channel.id, ['with settings'], { settings: { __type: 'webhook', topic: 'sales' } })]),
      );
      assert.deepEqual((await detail(given.postId)).settings, { __type: 'webhook', topic: 'sales' });
      assertError(
        await account.callUntyped(
          'POST',
          '/posts',
          postBody('schedule', [entry(channel.id, ['x'], { settings: { __type: 'x', who_can_reply_post: 'everyone' } })]),
        ),
        400,
        {
          path: 'posts.0.settings.__type',
        },
      );
    });

    it('media must be uploaded to this service: foreign URLs, data URLs and unknown upload paths are 400', async () => {
      const [withMedia] = await createPosts(
        account,
        postBody('schedule', [entry(channel.id, [{ content: 'pic', image: [{ id: media.id, path: media.path }] }])]),
      );
      assert.deepEqual((await detail(withMedia.postId)).image, [{ id: media.id, path: media.path }]);
      const bad = [
        'https://images.example.net/cat.png',
        `data:image/png;base64,${PNG_1x1.toString('base64')}`,
        `${herald.url}/uploads/2020/01/never-uploaded.png`,
      ];
      for (const path of bad) {
        assertError(
          await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['ok', { content: 'reply', image: [{ path }] }])])),
          400,
          {
            path: 'posts.0.value.1.image.0.path',
          },
        );
      }
      assertError(
        await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, [{ content: 'raw', image: 'file.png' as never }])])),
        400,
        {
          path: 'posts.0.value.0.image',
        },
      );
    });

    it('content rules: text or media is needed, and a channel takes a limited number of media', async () => {
      assertError(await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['  '])])), 400, { path: 'posts.0.value.0.content' });
      await createPosts(account, postBody('schedule', [entry(channel.id, [{ content: '', image: [{ path: media.path }] }])]));
      const settings = await account.callUntyped('GET', `/integration-settings/${channel.id}`);
      const maxMedia = Number(/up to (\d+) media/.exec(settings.body.output.rules)?.[1]);
      assert.ok(maxMedia > 0, settings.body.output.rules);
      const images = (n: number) => Array.from({ length: n }, () => ({ path: media.path }));
      await createPosts(account, postBody('schedule', [entry(channel.id, [{ content: 'full', image: images(maxMedia) }])]));
      assertError(
        await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, [{ content: 'too many', image: images(maxMedia + 1) }])])),
        400,
        { path: 'posts.0.value.0.image' },
      );
    });

    it('every problem of a body is reported at once, with its path, and nothing is stored', async () => {
      const before = await listPosts(account);
      const answer = await account.callUntyped(
        'POST',
        '/posts',
        postBody('schedule', [entry(channel.id, ['']), entry(channel.id, ['fine', { content: 'x', image: [{ path: 'https://elsewhere.example/a.png' }] }])]),
      );
      assertError(answer, 400, { path: 'posts.0.value.0.content' });
      assertError(answer, 400, { path: 'posts.1.value.1.image.0.path' });
      const cases: [unknown, string, number?][] = [
        [{ ...postBody('now', [entry(channel.id, ['x'])]), type: 'publish' }, 'type'],
        [{ ...postBody('schedule', [entry(channel.id, ['x'])]), date: 'tomorrow' }, 'date'],
        [{ ...postBody('schedule', [entry(channel.id, ['x'])]), date: undefined }, 'date'],
        [{ ...postBody('schedule', []) }, 'posts'],
        [{ type: 'schedule', date: FUTURE }, 'posts'],
        [postBody('schedule', [{ integration: { id: channel.id }, value: [] }]), 'posts.0.value'],
        [postBody('schedule', [{ value: [{ content: 'x', image: [] }] } as never]), 'posts.0.integration'],
        [postBody('schedule', [entry(channel.id, [{ content: 'x', delay: -1 }])]), 'posts.0.value.0.delay'],
        [postBody('schedule', [entry('no-such-channel', ['x'])]), 'posts.0.integration.id', 404],
      ];
      for (const [body, path, status = 400] of cases) assertError(await account.callUntyped('POST', '/posts', body), status, { path });
      assertError(await account.callUntyped('POST', '/posts', '{"type": "draft",'), 400, { code: 'invalid_json' });
      assert.deepEqual(await listPosts(account), before);
    });

    it('type "update" rewrites a post named by its group, keeping its id and state', async () => {
      const [created] = await createPosts(account, postBody('draft', [entry(channel.id, ['v1', { content: 'v1 reply', delay: 3 }])], { tags: ['keep'] }));
      const { group } = await detail(created.postId);
      const later = '2031-07-01T12:00:00.000Z';
      const updated = await createPosts(account, postBody('update', [entry(channel.id, ['v2'], { group })], { date: later }));
      assert.deepEqual(updated, [{ postId: created.postId, integration: channel.id }]);
      const post = await detail(created.postId);
      assert.deepEqual([post.content, post.state, post.publishDate, post.group, post.thread.length], ['v2', 'DRAFT', later, group, 1]);
      assert.deepEqual(post.tags, [{ value: 'keep', label: 'keep' }], 'tags stay when the update sends none');
      assert.equal((await listPosts(account)).filter((p) => p.group === group).length, 1);
    });

    it('type "update" names a post by value[0].id as well; without a date it keeps the scheduled time', async () => {
      const postId = await schedulePost(account, channel.id, 'before', '2031-08-01T08:00:00.000Z');
      const { date: _date, ...withoutDate } = postBody('update', [
        entry(channel.id, [
          { id: postId, content: 'after' },
          { content: 'new reply', delay: 2 },
        ]),
      ]);
      await createPosts(account, withoutDate);
      const post = await detail(postId);
      assert.deepEqual([post.content, post.state, post.publishDate], ['after', 'QUEUE', '2031-08-01T08:00:00.000Z']);
      assert.deepEqual(
        post.thread.map((t: any) => [t.content, t.publishDate]),
        [
          ['after', '2031-08-01T08:00:00.000Z'],
          ['new reply', '2031-08-01T08:02:00.000Z'],
        ],
      );
    });

    it('type "update" without a target, with an unknown one or one of another channel is 400 and changes nothing', async () => {
      const other = await addWebhookChannel(account);
      const postId = await schedulePost(account, other.id, 'on the other channel');
      const before = await detail(postId);
      const cases: [unknown[], string][] = [
        [[entry(channel.id, ['x'])], 'posts.0.group'],
        [[entry(channel.id, ['x'], { group: 'no-such-group' })], 'posts.0.group'],
        [[entry(channel.id, ['x'], { group: before.group })], 'posts.0.group'],
        [[entry(channel.id, [{ id: postId, content: 'x' }])], 'posts.0.value.0.id'],
      ];
      for (const [entries, path] of cases) assertError(await account.callUntyped('POST', '/posts', postBody('update', entries as never)), 400, { path });
      assert.deepEqual(await detail(postId), before);
    });

    it('GET /posts: required dates, range, customer filter and the contract fields', async () => {
      const customer = (await account.callUntyped('POST', '/groups', { name: 'Listed customer' })).body;
      const customerChannel = await addWebhookChannel(account, { customer: customer.id, name: 'Customer hook' });
      const inRange = await schedulePost(account, customerChannel.id, 'in range', '2033-02-10T10:00:00.000Z');
      const outOfRange = await schedulePost(account, customerChannel.id, 'out of range', '2033-04-10T10:00:00.000Z');
      const otherChannel = await schedulePost(account, channel.id, 'same range, no customer', '2033-02-11T10:00:00.000Z');

      const range = await account.callUntyped('GET', '/posts?startDate=2033-02-01T00:00:00.000Z&endDate=2033-02-28T23:59:59.999Z');
      assert.equal(range.status, 200);
      assert.deepEqual(
        range.body.posts.map((p: any) => p.id),
        [inRange, otherChannel],
      );
      assert.ok(!range.body.posts.some((p: any) => p.id === outOfRange), '!range.body.posts.some((p: any) => p.id === outOfRange)');
      const byCustomer = await account.callUntyped('GET', `/posts?startDate=2033-01-01T00:00:00Z&endDate=2033-12-31T00:00:00Z&customer=${customer.id}`);
      assert.deepEqual(
        byCustomer.body.posts.map((p: any) => p.id),
        [inRange, outOfRange],
      );

      const post = range.body.posts[0];
      for (const key of ['id', 'content', 'publishDate', 'releaseURL', 'releaseId', 'state', 'group', 'creationMethod', 'settings', 'tags', 'integration'])
        assert.ok(key in post, `posts[] has ${key}`);
      assert.deepEqual(
        [post.content, post.publishDate, post.releaseURL, post.releaseId, post.state, post.integration],
        [
          'in range',
          '2033-02-10T10:00:00.000Z',
          null,
          null,
          'QUEUE',
          { id: customerChannel.id, providerIdentifier: 'webhook', name: 'Customer hook', picture: null },
        ],
      );

      assertError(await account.callUntyped('GET', '/posts?endDate=2033-02-28T00:00:00Z'), 400, { path: 'startDate' });
      assertError(await account.callUntyped('GET', '/posts?startDate=2033-02-01T00:00:00Z'), 400, { path: 'endDate' });
      assertError(await account.callUntyped('GET', '/posts?startDate=yesterday&endDate=2033-02-28T00:00:00Z'), 400, { path: 'startDate' });
      assertError(await account.callUntyped('GET', '/posts?startDate=2033-03-01T00:00:00Z&endDate=2033-02-01T00:00:00Z'), 400, { path: 'endDate' });
    });

    it('DELETE /posts/:id answers 200 JSON and deletes the whole group, also when named by a reply', async () => {
      const [created] = await createPosts(account, postBody('schedule', [entry(channel.id, ['to delete', { content: 'its reply', delay: 1 }])]));
      const post = await detail(created.postId);
      const deleted = await account.callUntyped('DELETE', `/posts/${post.thread[1].id}`, undefined, { 'content-type': 'application/json' });
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.body, { deleted: true, id: created.postId, group: post.group });
      for (const id of [created.postId, post.thread[1].id]) assertError(await account.callUntyped('GET', `/posts/${id}`), 404);
      assert.ok(!(await listPosts(account)).some((p) => p.id === created.postId), '!(await listPosts(account)).some((p) => p.id === created.postId)');
      assertError(await account.callUntyped('DELETE', `/posts/${created.postId}`), 404);
    });

    it('DELETE /posts/group/:group deletes every item of the group', async () => {
      const [created] = await createPosts(account, postBody('schedule', [entry(channel.id, ['group root', { content: 'group reply', delay: 1 }])]));
      const post = await detail(created.postId);
      const deleted = await account.callUntyped('DELETE', `/posts/group/${post.group}`);
      assert.equal(deleted.status, 200);
      assert.equal(deleted.body.deleted, true);
      assert.deepEqual([...deleted.body.ids].sort(), post.thread.map((t: any) => t.id).sort());
      assertError(await account.callUntyped('GET', `/posts/${created.postId}`), 404);
      assertError(await account.callUntyped('DELETE', `/posts/group/${post.group}`), 404);
    });

    it('PUT /posts/:id/status moves a post between DRAFT and QUEUE, applying the content rules when queueing', async () => {
      const postId = await schedulePost(account, channel.id, 'moving');
      const toDraft = await account.callUntyped('PUT', `/posts/${postId}/status`, { status: 'draft' });
      assert.deepEqual([toDraft.status, toDraft.body], [200, { id: postId, state: 'DRAFT' }]);
      assert.equal((await detail(postId)).state, 'DRAFT');
      assert.equal((await account.callUntyped('PUT', `/posts/${postId}/status`, { status: 'schedule' })).body.state, 'QUEUE');
      assert.equal((await detail(postId)).thread[0].state, 'QUEUE');
      assertError(await account.callUntyped('PUT', `/posts/${postId}/status`, { status: 'published' }), 400, { path: 'status' });

      const [empty] = await createPosts(account, postBody('draft', [entry(channel.id, ['fine', ''])]));
      assertError(await account.callUntyped('PUT', `/posts/${empty.postId}/status`, { status: 'schedule' }), 400, { path: 'thread.1.content' });
      assert.equal((await detail(empty.postId)).state, 'DRAFT');
    });

    it('PUT /posts/:id/settings merges settings and checks them', async () => {
      const postId = await schedulePost(account, channel.id, 'settings');
      const first = await account.callUntyped('PUT', `/posts/${postId}/settings`, { settings: { topic: 'a' } });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      await account.callUntyped('PUT', `/posts/${postId}/settings`, { settings: { audience: 'b' } });
      assert.deepEqual((await detail(postId)).settings, { __type: 'webhook', topic: 'a', audience: 'b' });
      assertError(await account.callUntyped('PUT', `/posts/${postId}/settings`, { settings: { __type: 'linkedin' } }), 400, { path: 'settings.__type' });
      assertError(await account.callUntyped('PUT', `/posts/${postId}/settings`, {}), 400, { path: 'settings' });
      assert.deepEqual((await detail(postId)).settings, { __type: 'webhook', topic: 'a', audience: 'b' });
    });

    it('PUT /posts/:id/release-id marks a post published by hand; it can then no longer be changed (409)', async () => {
      const postId = await schedulePost(account, channel.id, 'posted by hand');
      assertError(await account.callUntyped('PUT', `/posts/${postId}/release-id`, { releaseId: '' }), 400, { path: 'releaseId' });
      const attached = await account.callUntyped('PUT', `/posts/${postId}/release-id`, { releaseId: 'net-42' });
      assert.deepEqual([attached.status, attached.body], [200, { id: postId, releaseId: 'net-42', state: 'PUBLISHED' }]);
      const post = await detail(postId);
      assert.deepEqual([post.state, post.releaseId], ['PUBLISHED', 'net-42']);

      assertError(await account.callUntyped('PUT', `/posts/${postId}/status`, { status: 'draft' }), 409);
      assertError(await account.callUntyped('PUT', `/posts/${postId}/settings`, { settings: { topic: 'late' } }), 409);
      assertError(await account.callUntyped('POST', `/posts/${postId}/retry`), 409);
      assertError(await account.callUntyped('POST', '/posts', postBody('update', [entry(channel.id, ['rewrite'], { group: post.group })])), 400, {
        path: 'posts.0.group',
      });
      assert.deepEqual(await detail(postId), post);
    });

    it('GET /posts/:id/missing answers [] on a channel whose network does not list its posts (a webhook), 404 for a post not of the account', async () => {
      const postId = await schedulePost(account, channel.id, 'missing?');
      const missing = await account.callUntyped('GET', `/posts/${postId}/missing`);
      assert.equal(missing.status, 200);
      assert.deepEqual(missing.body, [], 'a webhook has no posts of its own to pick from');
      assertError(await account.callUntyped('GET', '/posts/no-such-post/missing'), 404);
    });

    it('POST /posts/:id/retry is 409 for posts that did not fail', async () => {
      const queued = await schedulePost(account, channel.id, 'queued');
      const [draft] = await createPosts(account, postBody('draft', [entry(channel.id, ['draft'])]));
      for (const id of [queued, draft.postId]) assertError(await account.callUntyped('POST', `/posts/${id}/retry`), 409);
      assert.equal((await detail(queued)).state, 'QUEUE');
      assert.equal((await detail(draft.postId)).state, 'DRAFT');
    });
  });

  describe(`posts publishing and retry (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;

    const settled = (id: string, done: (post: any) => boolean, what: string) =>
      eventually(
        async () => {
          const r = await account.callUntyped('GET', `/posts/${id}`);
          return done(r.body) ? r.body : undefined;
        },
        10_000,
        what,
      );

    before(async () => {
      herald = await startHerald(store, { env, engine: true });
      receiver = await startWebhookReceiver();
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it('publishes one call to several channels, each getting its own delivery with short links', async () => {
      const a = await addWebhookChannel(account, { name: 'A' }, `${receiver.url}?a`);
      const b = await addWebhookChannel(account, { name: 'B' }, `${receiver.url}?b`);
      const created = await createPosts(
        account,
        postBody('now', [entry(a.id, ['go https://example.com/launch']), entry(b.id, ['go https://example.com/launch'])], { shortLink: true }),
      );
      for (const c of created) await settled(c.postId, (p) => p.state === 'PUBLISHED', `post on ${c.integration} published`);
      const byPath = new Map(receiver.deliveries.map((d) => [d.path, d.json]));
      assert.deepEqual([...byPath.keys()].sort(), ['/hook?a', '/hook?b']);
      for (const delivery of byPath.values()) assert.match(delivery.post.content, new RegExp(`^go ${herald.url}/s/\\S+$`));
    });

    it('a failed post ends in ERROR with its attempts; retry queues it again and it publishes', async () => {
      const channel = await addWebhookChannel(account, { name: 'Flaky' }, `${receiver.url}?flaky`);
      receiver.respond((d) => (d.path === '/hook?flaky' ? { status: 422, body: { error: 'not today' } } : undefined));
      const [created] = await createPosts(account, postBody('now', [entry(channel.id, ['try me', { content: 'and me', delay: 0 }])]));
      const failed = await settled(created.postId, (p) => p.thread.every((t: any) => t.state === 'ERROR'), 'thread failed');
      assert.match(failed.error, /not today/);
      assert.deepEqual(
        failed.thread[0].attempts.map((a: any) => a.outcome),
        ['failed'],
      );
      assert.ok(failed.thread[1].error, 'the reply says why it was not published');
      assert.equal(
        (await account.callUntyped('GET', '/posts?startDate=2000-01-01T00:00:00Z&endDate=2100-01-01T00:00:00Z')).body.posts.find(
          (p: any) => p.id === created.postId,
        ).state,
        'ERROR',
      );

      receiver.respond((d) => ({ body: { id: `ok-${d.json.post.threadIndex}` } }));
      const retried = await account.callUntyped('POST', `/posts/${created.postId}/retry`);
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      assert.equal(retried.body.id, created.postId);
      assert.ok(
        retried.body.thread.every((t: any) => t.state !== 'ERROR' && t.error === null),
        'retry clears the failure',
      );
      const published = await settled(created.postId, (p) => p.thread.every((t: any) => t.state === 'PUBLISHED'), 'thread published after retry');
      assert.deepEqual(
        published.thread[0].attempts.map((a: any) => a.outcome),
        ['failed', 'published'],
      );
      assert.deepEqual(
        published.thread.map((t: any) => t.releaseId),
        ['ok-0', 'ok-1'],
      );
      assertError(await account.callUntyped('POST', `/posts/${created.postId}/retry`), 409);
    });
  });
}
