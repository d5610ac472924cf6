import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { entry, postBody } from '../helpers/api-fixtures.ts';
import { startListmonkFake, type ListmonkFake } from '../fakes/listmonk.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { saveDraft, uploadMp4 } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const NEWSLETTER = { __type: 'listmonk', subject: 'Our news', list: '3' };

for (const store of await testStores()) {
  describe(`listmonk (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: ListmonkFake;
    let account: TestAccount;
    let channelId: string;

    /** Campaigns made for one post item (named after it). */
    const campaignsOf = (postId: string) => fake.campaigns.filter((c) => c.name === `herald-${postId}`);

    before(async () => {
      fake = await startListmonkFake();
      herald = await startHerald(store, { engine: { pollMs: 50, publishTimeoutMs: 2_000 } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('connects with the instance URL, API user and token, checked with GET /api/profile over Basic auth', async () => {
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'listmonk',
        credentials: { url: `${fake.url}/`, username: fake.user.username, token: fake.user.token },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.identifier, 'listmonk');
      assert.match(added.body.name, /^Herald API \(127\.0\.0\.1:\d+\)$/);
      const [profile] = fake.calls('GET /api/profile');
      assert.equal(profile.headers.authorization, `Basic ${Buffer.from(`${fake.user.username}:${fake.user.token}`).toString('base64')}`);
      assert.equal(profile.headers.cookie, undefined, 'no cookie: it would make listmonk ignore the token');
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), /lm-token/);
    });

    it('refuses a wrong token with 400 naming the credentials, and a malformed URL naming the field', async () => {
      const wrong = await account.callUntyped('POST', '/integrations', {
        identifier: 'listmonk',
        credentials: { url: fake.url, username: fake.user.username, token: 'not-the-token' },
      });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials');
      assert.match(wrong.body.message, /listmonk answered 403: invalid API credentials/);
      const malformed = await account.callUntyped('POST', '/integrations', {
        identifier: 'listmonk',
        credentials: { url: 'not a url', username: 'x', token: '' },
      });
      assert.equal(malformed.status, 400);
      assert.deepEqual(malformed.body.errors.map((e: { path: string }) => e.path).sort(), ['credentials.token', 'credentials.url']);
    });

    it('lists mailing lists and campaign templates for the settings', async () => {
      const lists = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'lists' });
      assert.equal(lists.status, 200, JSON.stringify(lists.body));
      assert.deepEqual(lists.body.output, [
        { id: '3', name: 'Newsletter', type: 'public', subscribers: 120 },
        { id: '5', name: 'Empty list', type: 'private', subscribers: 0 },
      ]);
      assert.equal(fake.calls('GET /api/lists').at(-1)!.query.per_page, 'all');
      const templates = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'templates' });
      assert.deepEqual(
        templates.body.output.map((t: { id: string }) => t.id),
        ['1', '2'],
        'transactional templates are left out',
      );
    });

    it('creates the campaign as HTML to the chosen list, then starts it', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['Hello readers & friends, 1 < 2\nline two\n\nSecond paragraph'], {
          ...NEWSLETTER,
          preview: 'Read on',
          template: '2',
        }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [created] = campaignsOf(post.id);
      assert.equal(created.status, 'running');
      const create = fake.calls('POST /api/campaigns').at(-1)!;
      assert.deepEqual(create.json, {
        name: `herald-${post.id}`,
        subject: 'Our news',
        lists: [3],
        type: 'regular',
        content_type: 'html',
        body:
          '<div style="display:none;max-height:0;overflow:hidden;opacity:0">Read on</div>\n\n' +
          '<p>Hello readers &amp; friends, 1 &lt; 2<br>line two</p>\n<p>Second paragraph</p>',
        messenger: 'email',
        tags: ['herald'],
        template_id: 2,
      });
      const start = fake.calls('PUT /api/campaigns/:id/status').at(-1)!;
      assert.equal(start.path, `/api/campaigns/${created.id}/status`);
      assert.deepEqual(start.json, { status: 'running' });
      assert.equal(post.releaseId, String(created.id));
      assert.equal(post.releaseURL, `${fake.url}/admin/campaigns/${created.id}`);
    });

    it('sends "{{" in the text as text: subscribers read it as written, not as a template action', async () => {
      const text = 'Reply with {{ your name }} and {{ the date';
      const post = await settled(account, await publishNow(account, channelId, [text], { ...NEWSLETTER, preview: 'About {{ this }}' }));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [created] = campaignsOf(post.id);
      assert.ok(created.rendered.includes(`<p>${text}</p>`), created.rendered);
      assert.ok(created.rendered.includes('>About {{ this }}</div>'), created.rendered);
    });

    it('sends HTML as written, images as links to the upload host, and the default template without template_id', async () => {
      const png = await uploadPng(account, herald.api);
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: '<h1>Big news</h1><p>See below</p>', image: [{ id: png.id, path: png.path }] }], NEWSLETTER),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const create = fake.calls('POST /api/campaigns').at(-1)!;
      assert.equal(create.json.template_id, undefined);
      assert.match(
        create.json.body,
        /^<h1>Big news<\/h1><p>See below<\/p>\n<p><img src="http:\/\/127\.0\.0\.1:\d+\/[^"]+" alt="" style="max-width:100%"><\/p>$/,
      );
      const src = /src="([^"]+)"/.exec(create.json.body)![1];
      const served = await fetch(src);
      assert.equal(served.status, 200, 'the image link is served');
      assert.deepEqual(Buffer.from(await served.arrayBuffer()), png.bytes);
    });

    it('refuses before acceptance: missing subject or list, a video, and says threads are not published', async () => {
      const missing = await account.callUntyped('POST', '/posts', postBody('now', [entry(channelId, ['no settings'])], { date: new Date().toISOString() }));
      assert.equal(missing.status, 400);
      assert.deepEqual(missing.body.errors.map((e: { path: string }) => e.path).sort(), ['posts.0.settings.list', 'posts.0.settings.subject']);
      const clip = await uploadMp4(account, herald, 2048);
      const video = await account.callUntyped(
        'POST',
        '/posts',
        postBody('now', [entry(channelId, [{ content: 'clip', image: [{ id: clip.id, path: clip.path }] }], { settings: NEWSLETTER })], {
          date: new Date().toISOString(),
        }),
      );
      assert.equal(video.status, 400, JSON.stringify(video.body));
      assert.ok(
        video.body.errors.some((e: { path: string }) => e.path.startsWith('posts.0.value.0.image')),
        JSON.stringify(video.body.errors),
      );

      const created = await account.callUntyped(
        'POST',
        '/posts',
        postBody('now', [entry(channelId, ['only this', 'not this'], { settings: NEWSLETTER })], { date: new Date().toISOString() }),
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const post = await settled(account, created.body[0].postId);
      assert.match(post.warning ?? '', /listmonk has no threads: only the first item is published/);
      assert.equal(post.thread.length, 1);
      assert.equal(fake.calls('POST /api/campaigns').filter((c) => c.json.body.includes('not this')).length, 0);
    });

    it("fails with listmonk's own message when it refuses the campaign, without retrying", async () => {
      const before = fake.calls('POST /api/campaigns').length;
      const post = await settled(account, await publishNow(account, channelId, ['to nobody'], { ...NEWSLETTER, list: '5' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /listmonk answered 400: There are no subscribers in the selected lists to create the campaign\./);
      assert.equal(fake.calls('POST /api/campaigns').length, before + 1);
    });

    it('a role without campaigns:send fails the post naming the permission; the draft is not duplicated', async () => {
      fake.permissions.delete('campaigns:send');
      try {
        const post = await settled(account, await publishNow(account, channelId, ['cannot start'], NEWSLETTER));
        assert.equal(post.state, 'ERROR');
        assert.match(post.error ?? '', /permission denied: campaigns:send/);
        assert.equal(campaignsOf(post.id).length, 1);
        assert.equal(campaignsOf(post.id)[0].status, 'draft');
        assert.equal((await channelView(account, channelId)).needsReconnect, false, 'a role problem is not a reconnect');
      } finally {
        fake.permissions.add('campaigns:send');
      }
    });

    it('a create whose answer never comes is looked up by its name and started: one campaign', async () => {
      fake.failNext('POST /api/campaigns', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['created, answer lost'], NEWSLETTER), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const made = campaignsOf(post.id);
      assert.equal(made.length, 1, 'never created twice');
      assert.equal(made[0].status, 'running');
      assert.equal(post.releaseId, String(made[0].id));
      const lookup = fake.calls('GET /api/campaigns').at(-1)!;
      assert.equal(lookup.query.query, `herald-${post.id}`);
    });

    it('a start that fails with a server error is retried on the same campaign, and one already started is not started again', async () => {
      fake.failNext('PUT /api/campaigns/:id/status', { status: 503, body: '<html>503 Service Unavailable</html>', headers: { 'content-type': 'text/html' } });
      const post = await settled(account, await publishNow(account, channelId, ['start after 503'], NEWSLETTER), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.equal(campaignsOf(post.id).length, 1);
      assert.equal(campaignsOf(post.id)[0].status, 'running');

      // listmonk started it, then a proxy answered 502: the retry sees it running and starts nothing.
      fake.failNext('PUT /api/campaigns/:id/status', { handleFirst: true, status: 502, body: 'Bad Gateway', headers: { 'content-type': 'text/plain' } });
      const starts = fake.calls('PUT /api/campaigns/:id/status').length;
      const second = await settled(account, await publishNow(account, channelId, ['started, then 502'], NEWSLETTER), 20_000);
      assert.equal(second.state, 'PUBLISHED', second.error ?? '');
      assert.equal(campaignsOf(second.id).length, 1);
      assert.equal(fake.calls('PUT /api/campaigns/:id/status').length, starts + 1, 'started once');
      assert.equal(fake.calls('GET /api/campaigns/:id').at(-1)!.path, `/api/campaigns/${second.releaseId}`);
    });

    it("waits a proxy's 429 Retry-After and creates once", async () => {
      fake.failNext('POST /api/campaigns', { status: 429, body: 'Too Many Requests', headers: { 'retry-after': '1', 'content-type': 'text/plain' } });
      const post = await settled(account, await publishNow(account, channelId, ['after 429'], NEWSLETTER), 20_000);
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(campaignsOf(post.id).length, 1);
      const [limited, sent] = fake.calls('POST /api/campaigns').slice(-2);
      assert.ok(sent.at - limited.at >= 1000, 'the retry came after Retry-After');
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], NEWSLETTER),
      held: (text) => fake.campaigns.filter((c) => c.body.includes(text)).length,
    }));

    it("reports the lists' subscribers and a campaign's counters, and lists recent campaigns", async () => {
      const channel = await account.callUntyped('GET', `/analytics/${channelId}?date=30`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      assert.deepEqual(
        channel.body.map((s: any) => [s.label, s.data[0].total]),
        [['Subscribers', 120]],
      );
      const post = await settled(account, await publishNow(account, channelId, ['counted'], NEWSLETTER));
      Object.assign(campaignsOf(post.id)[0], { sent: 118, views: 40, clicks: 7, bounces: 2 });
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((s: any) => [s.label, s.data[0].total]),
        [
          ['Sent', 118],
          ['Recipients', 120],
          ['Views', 40],
          ['Clicks', 7],
          ['Bounces', 2],
        ],
      );
      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'listmonk' });
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      assert.equal(missing.body[0].id, post.releaseId);
      assert.equal(missing.body[0].url, post.releaseURL);
      assert.equal(missing.body[0].text, 'Our news');
    });

    it('marks the channel for reconnection when the token is regenerated', async () => {
      fake.regenerateToken();
      const post = await settled(account, await publishNow(account, channelId, ['after regenerate'], NEWSLETTER));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /must be reconnected: listmonk answered 403: invalid API credentials/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
