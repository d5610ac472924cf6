import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findProvider } from '../../src/providers/index.ts';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { SKOOL_SESSION, SKOOL_USER, startSkoolFake, type SkoolFake } from '../fakes/skool.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';
import { uploadMp4 } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const GROUP = { id: '0f1e2d3c4b5a69788796a5b4c3d2e1f0', name: 'herald-builders', display_name: 'Herald Builders' };
const WINS = 'aaaabbbbccccddddeeeeffff00001111';
const NEWS = 'aaaabbbbccccddddeeeeffff00002222';
const STRICT = { id: '11112222333344445555666677778888', name: 'strict-club', display_name: 'Strict Club' };

for (const store of await testStores()) {
  describe(`skool (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: SkoolFake;
    let account: TestAccount;
    let channelId: string;
    const inWins = { __type: 'skool', group: GROUP.id, label: WINS, title: 'Shipped it' };

    before(async () => {
      fake = await startSkoolFake();
      fake.groups.push(
        {
          ...GROUP,
          labels: [
            { id: WINS, name: 'Wins' },
            { id: NEWS, name: 'News' },
          ],
          requiresLabel: false,
        },
        { ...STRICT, labels: [{ id: '99990000999900009999000099990000', name: 'Intros' }], requiresLabel: true },
      );
      herald = await startHerald(store, { engine: { pollMs: 50, publishTimeoutMs: 2_000 }, env: { HERALD_SKOOL_API_URL: fake.url } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('says plainly on the connect form that Skool has no official API and works with session cookies', () => {
      const skool = findProvider('skool')!;
      assert.match(skool.connectNote ?? '', /no official API.*auth_token and client_id cookies/s);
      assert.deepEqual(Object.keys(skool.credentials!.shape), ['authToken', 'clientId', 'wafToken']);
      assert.match(skool.credentials!.shape.authToken.description ?? '', /auth_token cookie/);
    });

    it('refuses cookies Skool does not accept, naming the field, and malformed ones before asking', async () => {
      const wrong = await account.callUntyped('POST', '/integrations', {
        identifier: 'skool',
        credentials: { authToken: 'eyJhbGciOiJIUzI1NiJ9.expired.token-value', clientId: SKOOL_SESSION.clientId },
      });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials.authToken');
      assert.match(wrong.body.message, /Skool did not accept these cookies/);
      assert.doesNotMatch(JSON.stringify(wrong.body), /expired\.token-value/);
      const calls = fake.calls('GET /self').length;
      const malformed = await account.callUntyped('POST', '/integrations', { identifier: 'skool', credentials: { authToken: 'short', clientId: '' } });
      assert.equal(malformed.status, 400);
      assert.deepEqual(malformed.body.errors.map((e: { path: string }) => e.path).sort(), ['credentials.authToken', 'credentials.clientId']);
      assert.equal(fake.calls('GET /self').length, calls, 'nothing sent for malformed cookies');
    });

    it('connects with the session cookies, checked with GET /self', async () => {
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'skool',
        credentials: { authToken: SKOOL_SESSION.authToken, clientId: SKOOL_SESSION.clientId },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Hera Writer');
      const me = fake.calls('GET /self').at(-1)!;
      assert.equal(me.headers.cookie, `auth_token=${SKOOL_SESSION.authToken}; client_id=${SKOOL_SESSION.clientId}`);
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(SKOOL_SESSION.clientId));
    });

    it('lists groups with their categories for the group and label settings', async () => {
      const listed = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'groups' });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(listed.body.output, [
        {
          id: GROUP.id,
          name: GROUP.display_name,
          slug: GROUP.name,
          labels: [
            { id: WINS, name: 'Wins' },
            { id: NEWS, name: 'News' },
          ],
        },
        { id: STRICT.id, name: STRICT.display_name, slug: STRICT.name, labels: [{ id: '99990000999900009999000099990000', name: 'Intros' }] },
      ]);
      assert.equal(fake.calls('GET /users/:id/groups').at(-1)!.params.id, SKOOL_USER.id);
    });

    it('publishes a post with title and category, linked by the group’s slug', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['We shipped the new dashboard.'], inWins));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const sent = fake.calls('POST /posts').at(-1)!;
      assert.equal(sent.query.follow, 'true');
      assert.equal(sent.headers.cookie, `auth_token=${SKOOL_SESSION.authToken}; client_id=${SKOOL_SESSION.clientId}`);
      assert.equal(sent.headers.origin, 'https://www.skool.com');
      assert.deepEqual(sent.json, {
        post_type: 'generic',
        group_id: GROUP.id,
        metadata: { title: 'Shipped it', content: 'We shipped the new dashboard.', attachments: '', labels: WINS, action: 0, video_ids: '' },
      });
      const stored = fake.posts.at(-1)!;
      assert.equal(post.releaseId, stored.id);
      assert.equal(post.releaseURL, `https://www.skool.com/${GROUP.name}/${stored.name}`);
    });

    it('uploads images (POST /files, then the bytes with x-amz-acl) and attaches their ids comma-joined', async () => {
      const a = await uploadPng(account, herald.api, 'a.png');
      const b = await uploadPng(account, herald.api, 'b.png');
      const post = await settled(
        account,
        await publishNow(account, channelId, [{ content: 'Screenshots', image: [a, b].map(({ id, path }) => ({ id, path })) }], { ...inWins, label: 'none' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const asks = fake.calls('POST /files').slice(-2);
      assert.deepEqual(Object.keys(asks[0].json).sort(), [
        'content_disposition',
        'content_length',
        'content_type',
        'file_name',
        'large_thumbnail',
        'owner_id',
        'ref',
      ]);
      assert.equal(asks[0].json.owner_id, SKOOL_USER.id);
      assert.equal(asks[0].json.content_length, a.bytes.length);
      const puts = fake.calls('PUT /s3/uploads/:id').slice(-2);
      assert.equal(puts[0].headers['x-amz-acl'], 'public-read');
      assert.equal(puts[0].headers.cookie, undefined, 'the session never goes to the storage URL');
      assert.deepEqual(puts[0].raw, a.bytes);
      const sent = fake.calls('POST /posts').at(-1)!;
      assert.equal(sent.json.metadata.attachments, puts.map((p) => p.params.id).join(','));
      assert.equal('labels' in sent.json.metadata, false, 'label "none" sends no category');
    });

    it('publishes a thread as comments on the post (root_id = parent_id = the post)', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['Main post', { content: 'first comment', delay: 0 }, { content: 'second', delay: 0 }], inWins),
      );
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const [, one, two] = fake.calls('POST /posts').slice(-3);
      const root = post.thread[0].releaseId;
      assert.deepEqual(one.json, {
        post_type: 'comment',
        group_id: GROUP.id,
        root_id: root,
        parent_id: root,
        metadata: { title: '', content: 'first comment', attachments: '', action: 0, video_ids: '' },
      });
      assert.equal(two.json.root_id, root, 'a comment after a comment stays on the same post');
      assert.equal(post.thread[2].releaseId, `${root}/${fake.posts.at(-1)!.id}`);
    });

    it('refuses before acceptance: a missing title, a bad group id, video, text over 5,000', async () => {
      const clip = await uploadMp4(account, herald, 2000);
      const body = (value: unknown[], settings: Record<string, unknown>) => ({
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value, settings }],
      });
      const before = fake.calls('POST /posts').length;
      const noTitle = await account.callUntyped('POST', '/posts', body([{ content: 'hi', image: [] }], { __type: 'skool', group: GROUP.id, label: 'none' }));
      assert.equal(noTitle.status, 400);
      assert.equal(noTitle.body.errors[0].path, 'posts.0.settings.title');
      const badGroup = await account.callUntyped('POST', '/posts', body([{ content: 'hi', image: [] }], { ...inWins, group: 'herald-builders' }));
      assert.equal(badGroup.status, 400);
      assert.equal(badGroup.body.errors[0].path, 'posts.0.settings.group');
      const video = await account.callUntyped('POST', '/posts', body([{ content: 'clip', image: [{ id: clip.id, path: clip.path }] }], inWins));
      assert.equal(video.status, 400);
      assert.equal(video.body.errors[0].path, 'posts.0.value.0.image.0');
      const long = await account.callUntyped('POST', '/posts', body([{ content: 'x'.repeat(5001), image: [] }], inWins));
      assert.equal(long.status, 400);
      assert.match(long.body.errors[0].message, /5001 characters.*at most 5000/);
      assert.equal(fake.calls('POST /posts').length, before);
    });

    it('fails with Skool’s words when the group requires a category (no retry, no reconnect)', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['hello'], { __type: 'skool', group: STRICT.id, label: 'none', title: 'Hi all' }),
      );
      assert.equal(post.state, 'ERROR');
      assert.equal(post.error, 'Skool answered 403: cannot post to this label');
      assert.equal(post.thread[0].attempts.length, 1);
      assert.equal((await channelView(account, channelId)).needsReconnect, false);
    });

    it('a refused image upload fails the post without asking to reconnect', async () => {
      const a = await uploadPng(account, herald.api, 'c.png');
      fake.failNext('PUT /s3/uploads/:id', { status: 403, body: '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>' });
      const count = fake.posts.length;
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'pic', image: [{ id: a.id, path: a.path }] }], inWins));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /the image storage refused the upload: <Error><Code>AccessDenied/);
      assert.equal(fake.posts.length, count);
      assert.equal((await channelView(account, channelId)).needsReconnect, false);
    });

    it('waits after 429 and posts once', async () => {
      fake.failNext('POST /posts', { status: 429, headers: { 'retry-after': '2' }, body: { message: 'too many requests' } });
      const count = fake.posts.length;
      const post = await settled(account, await publishNow(account, channelId, ['after the limit'], inWins));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      const [limited, sent] = fake.calls('POST /posts').slice(-2);
      assert.ok(sent.at - limited.at >= 1_900, `waited ${sent.at - limited.at} ms`);
      assert.equal(fake.posts.length, count + 1);
    });

    it('does not post again when the answer never comes; the user checks the group', async () => {
      const count = fake.calls('POST /posts').length;
      fake.failNext('POST /posts', { handleThenHang: true });
      const post = await settled(account, await publishNow(account, channelId, ['maybe posted'], { ...inWins, title: 'Maybe' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /may have been published/);
      assert.equal(fake.calls('POST /posts').length, count + 1, 'sent once');
      assert.equal(fake.posts.at(-1)!.title, 'Maybe');
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], { ...inWins, title: text }),
      held: (text) => fake.posts.filter((p) => p.post_type === 'generic' && p.title === text).length,
    }));

    it('sends the firewall cookie when given, and asks to reconnect when the session ends (WAF token expired)', async () => {
      const again = await account.callUntyped('POST', '/integrations', {
        identifier: 'skool',
        credentials: { authToken: SKOOL_SESSION.authToken, clientId: SKOOL_SESSION.clientId, wafToken: SKOOL_SESSION.wafToken },
      });
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.equal(again.body.id, channelId, 'the same member is the same channel');
      fake.requireWaf = true;
      const ok = await settled(account, await publishNow(account, channelId, ['through the firewall'], inWins));
      assert.equal(ok.state, 'PUBLISHED', ok.error ?? '');
      assert.match(fake.calls('POST /posts').at(-1)!.headers.cookie ?? '', new RegExp(`aws-waf-token=${SKOOL_SESSION.wafToken}$`));

      fake.expireWaf();
      const post = await settled(account, await publishNow(account, channelId, ['blocked'], inWins));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /must be reconnected/);
      assert.match(post.error!, /Skool session has ended/);
      assert.equal((await channelView(account, channelId)).needsReconnect, true);
    });
  });
}
