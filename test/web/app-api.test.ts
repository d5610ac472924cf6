/**
 * What the web application stands on, over HTTP without a browser: the public
 * API's routes reached with a session, moving a post, the network catalogue,
 * alt text, the live stream across processes, and the pages and assets served
 * beside the API.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { WebClient } from '../accounts/web-client.ts';
import { appRoutes } from '../../src/contract/routes/app.ts';
import { startHerald, PNG_1x1, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { ensureWebBuilt } from '../helpers/browser.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { teardown } from '../helpers/teardown.ts';

const HOUR = 3_600_000;

/** Reads Server-Sent Events from Herald with a session cookie; `events` fills as they arrive. */
function listen(url: string, cookie: string): Promise<{ events: string[]; close: () => void }> {
  return new Promise((resolve, reject) => {
    const events: string[] = [];
    const request = http.get(url, { headers: { cookie, accept: 'text/event-stream' } }, (response) => {
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['content-type']), /^text\/event-stream/);
      let buffer = '';
      response.on('data', (chunk) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const type = /^event: (.+)$/m.exec(block)?.[1];
          if (type) events.push(type);
        }
      });
      resolve({ events, close: () => request.destroy() });
    });
    request.on('error', reject);
  });
}

const cookieOf = (web: WebClient) => [...web.jar].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('; ');

for (const store of await testStores()) {
  describe(`the web application's API (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let other: TestHerald;
    let receiver: WebhookReceiver;
    let web: WebClient;
    let owner: { id: string; key: string };
    let channel: string;

    before(async () => {
      ensureWebBuilt();
      receiver = await startWebhookReceiver();
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '1000' } });
      // A second server on the same store: what another process does must reach this one's stream.
      other = await startHerald(store, {
        databaseUrl: store === 'postgres' ? herald.services.config.databaseUrl : undefined,
        dataDir: store === 'sqlite' ? herald.dataDir : undefined,
      });
      web = new WebClient(herald.url);
      await web.signUp('owner@example.com');
      const user = await herald.services.store.db.selectFrom('users').select('account_id').where('email', '=', 'owner@example.com').executeTakeFirstOrThrow();
      owner = { id: user.account_id, key: (await herald.services.accounts.createKey(user.account_id, 'test')).key };
    });
    after(() =>
      teardown(
        () => other?.close(),
        () => herald?.close(),
        () => receiver?.close(),
      ),
    );

    it('serves the public API to a session under /api/app/public/v1, with the CSRF token for every change', async () => {
      const refused = await web.app('POST', '/public/v1/integrations', { identifier: 'webhook', credentials: { url: receiver.url } }, { csrf: false });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'csrf_failed');
      const created = await web.app('POST', '/public/v1/integrations', { identifier: 'webhook', name: 'Receiver', credentials: { url: receiver.url } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      channel = created.body.id;
      const listed = await web.app('GET', '/public/v1/integrations');
      assert.deepEqual(
        listed.body.map((c: { id: string }) => c.id),
        [channel],
      );
      // The same channel through the API key: one implementation behind both doors.
      const byKey = await fetch(`${herald.api}/integrations`, { headers: { authorization: owner.key } });
      assert.deepEqual(
        (await byKey.json()).map((c: { id: string }) => c.id),
        [channel],
      );
    });

    it('takes no API key there, and no session on the public API', async () => {
      const withKey = await fetch(`${herald.url}/api/app/public/v1/integrations`, { headers: { authorization: owner.key } });
      assert.equal(withKey.status, 401);
      assert.equal((await withKey.json()).code, 'not_signed_in');
      const withCookie = await fetch(`${herald.api}/integrations`, { headers: { cookie: cookieOf(web) } });
      assert.equal(withCookie.status, 401);
    });

    it('keeps the session routes out of the OpenAPI document', async () => {
      const doc = await (await fetch(`${herald.url}/api/docs/json`)).json();
      const paths = Object.keys(doc.paths);
      assert.ok(paths.includes('/api/public/v1/posts'), 'the public API is documented');
      assert.deepEqual(
        paths.filter((p) => p.startsWith('/api/app')),
        [],
      );
    });

    it("moves a queued post to another time, and refuses one being sent, the past, a bad date, a published post and another account's post", async () => {
      const at = Date.now() + 24 * HOUR;
      const created = await web.app('POST', '/public/v1/posts', {
        type: 'schedule',
        date: new Date(at).toISOString(),
        posts: [{ integration: { id: channel }, value: [{ content: 'first' }, { content: 'second', delay: 5 }] }],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body[0].postId;
      const later = at + 2 * HOUR;
      const moved = await web.route(appRoutes.routes.reschedule, { params: { id }, body: { date: new Date(later).toISOString() } });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal(moved.body.publishDate, new Date(later).toISOString());
      const rows = await herald.services.store.db
        .selectFrom('posts')
        .select(['thread_index', 'publish_at'])
        .where('group_id', '=', (await herald.services.posts.root(owner.id, id)).group_id)
        .orderBy('thread_index')
        .execute();
      assert.deepEqual(
        rows.map((r) => r.publish_at),
        [later, later],
        'the whole thread moved',
      );

      // A worker holding the reply's lease: the thread is being sent, shown as such, and cannot move.
      assert.deepEqual((await web.app('GET', '/posts/publishing')).body, []);
      await herald.services.store.db
        .updateTable('posts')
        .set({ lease_owner: 'worker-1', lease_until: Date.now() + 60_000 })
        .where('content', '=', 'second')
        .execute();
      assert.deepEqual((await web.app('GET', '/posts/publishing')).body, [id]);
      const sending = await web.app('PUT', `/posts/${id}/date`, { date: new Date(later + HOUR).toISOString() });
      assert.equal(sending.status, 409);
      assert.equal(sending.body.code, 'publishing');
      await herald.services.store.db
        .updateTable('posts')
        .set({ lease_owner: 'worker-1', lease_until: Date.now() - 1 })
        .where('content', '=', 'second')
        .execute();
      assert.deepEqual((await web.app('GET', '/posts/publishing')).body, [], 'an expired lease is no longer "publishing"');

      const past = await web.app('PUT', `/posts/${id}/date`, { date: new Date(Date.now() - HOUR).toISOString() });
      assert.equal(past.status, 400);
      assert.deepEqual(past.body.errors, [{ path: 'date', message: 'must not be in the past' }]);
      const garbled = await web.app('PUT', `/posts/${id}/date`, { date: 'tomorrow' });
      assert.equal(garbled.status, 400);
      assert.equal(garbled.body.errors[0].path, 'date');

      await herald.services.store.db.updateTable('posts').set({ state: 'PUBLISHED' }).where('id', '=', id).execute();
      const published = await web.app('PUT', `/posts/${id}/date`, { date: new Date(later + HOUR).toISOString() });
      assert.equal(published.status, 409);
      assert.equal(published.body.code, 'already_published');

      const otherAccount = await herald.services.accounts.create('Elsewhere');
      const theirChannel = await herald.services.channels.addWithCredentials(otherAccount, { identifier: 'webhook', credentials: { url: receiver.url } });
      const theirs = await fetch(`${herald.api}/posts`, {
        method: 'POST',
        headers: { authorization: (await herald.services.accounts.createKey(otherAccount, 'theirs')).key, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'draft', posts: [{ integration: { id: theirChannel.channel.id }, value: [{ content: 'theirs' }] }] }),
      });
      const foreign = await theirs.json();
      const notYours = await web.app('PUT', `/posts/${foreign[0]!.postId}/date`, { date: new Date(later).toISOString() });
      assert.equal(notYours.status, 404);
    });

    it('describes every network for the composer: rules, how it counts text, settings and credentials as JSON Schema', async () => {
      const networks = (await web.route(appRoutes.routes.networks, {})).body;
      const byId = new Map(networks.map((n) => [n.identifier, n]));
      assert.equal(byId.get('x')!.rules.counting, 'x');
      assert.equal(byId.get('bluesky')!.rules.counting, 'graphemes');
      assert.equal(byId.get('bluesky')!.rules.maxLength, 300);
      assert.deepEqual(Object.keys(byId.get('webhook')!.credentials!.properties!), ['url']);
      assert.deepEqual(Object.keys(byId.get('mastodon')!.startOptions!.properties!), ['instance']);
      assert.ok(byId.get('pinterest')!.settings.required!.includes('board'), 'required settings are marked');
      assert.equal(byId.get('pinterest')!.configured, false);
      assert.ok(byId.get('pinterest')!.missing.includes('HERALD_PINTEREST_CLIENT_ID'), 'what the server lacks is named');
    });

    it("sets a file's alt text and tags and says where it is used, for this account's files only", async () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(PNG_1x1)]), 'dot.png');
      const uploaded = await fetch(`${herald.url}/api/app/public/v1/upload`, {
        method: 'POST',
        body: form,
        headers: { cookie: cookieOf(web), 'x-csrf-token': web.csrf! },
      });
      assert.equal(uploaded.status, 201);
      const file = { body: await uploaded.json() };
      const set = await web.route(appRoutes.routes.describeMedia, { params: { id: file.body.id }, body: { alt: '  A white dot  ' } });
      assert.equal(set.status, 200);
      assert.equal(set.body.alt, 'A white dot');
      const listed = await web.app('GET', '/public/v1/media');
      assert.equal(listed.body.media[0].alt, 'A white dot');
      const tooLong = await web.app('PATCH', `/media/${file.body.id}`, { alt: 'x'.repeat(1501) });
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.errors[0].path, 'alt');
      const missing = await web.app('PATCH', '/media/no-such-file', { alt: 'x' });
      assert.equal(missing.status, 404);

      assert.deepEqual((await web.app('GET', `/media/${file.body.id}/usage`)).body, [], 'no post uses it yet');
      const at = new Date(Date.now() + 48 * HOUR).toISOString();
      const post = await web.app('POST', '/public/v1/posts', {
        type: 'schedule',
        date: at,
        posts: [
          {
            integration: { id: channel },
            value: [{ content: 'with a dot' }, { content: 'and the dot again', image: [{ id: file.body.id, path: file.body.path }] }],
          },
        ],
      });
      assert.equal(post.status, 201, JSON.stringify(post.body));
      const usage = await web.app('GET', `/media/${file.body.id}/usage`);
      assert.deepEqual(
        usage.body,
        [{ kind: 'post', id: post.body[0].postId, state: 'QUEUE', publishDate: at, channel: 'Receiver' }],
        'a reply carrying the file names its thread',
      );
      assert.equal((await web.app('GET', '/media/no-such-file/usage')).status, 404);

      const tagged = await web.app('PATCH', `/media/${file.body.id}`, { tags: ['Summer 2026', 'logo', 'logo '] });
      assert.equal(tagged.status, 200, JSON.stringify(tagged.body));
      assert.deepEqual(tagged.body.tags, ['Summer 2026', 'logo'], 'trimmed, once each, sorted');
      assert.equal(tagged.body.alt, 'A white dot', 'the alt text stays');
      const badTag = await web.app('PATCH', `/media/${file.body.id}`, { tags: ['50%_off'] });
      assert.equal(badTag.status, 400);
      assert.equal(badTag.body.errors[0].path, 'tags.0');
      const byTag = async (tag: string) =>
        (await web.app('GET', `/public/v1/media?tag=${encodeURIComponent(tag)}`)).body.media.map((m: { id: string }) => m.id);
      assert.deepEqual(await byTag('logo'), [file.body.id]);
      assert.deepEqual(await byTag('log'), [], 'a tag matches whole, not in part');
      assert.equal((await web.app('GET', '/public/v1/media?tag=%25')).status, 400);
    });

    it('keeps templates and signatures for the whole account, and refuses bad ones naming the field', async () => {
      const template = await web.app('POST', '/templates', { kind: 'template', name: 'Launch', content: 'We launch {product} today.' });
      assert.equal(template.status, 201, JSON.stringify(template.body));
      const signature = await web.app('POST', '/templates', { kind: 'signature', name: 'Team', content: '— the Herald team' });
      assert.equal(signature.status, 201);
      const listed = await web.app('GET', '/templates');
      assert.deepEqual(
        listed.body.map((x: { kind: string; name: string }) => `${x.kind}:${x.name}`),
        ['signature:Team', 'template:Launch'],
      );
      for (const [body, path] of [
        [{ kind: 'footer', name: 'x', content: 'y' }, 'kind'],
        [{ kind: 'template', name: '  ', content: 'y' }, 'name'],
        [{ kind: 'template', name: 'x', content: '' }, 'content'],
      ] as const) {
        const refused = await web.app('POST', '/templates', body);
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(refused.body.errors[0].path, path);
      }
      const renamed = await web.app('PATCH', `/templates/${template.body.id}`, { name: 'Product launch' });
      assert.equal(renamed.body.name, 'Product launch');
      assert.equal(renamed.body.content, 'We launch {product} today.');
      // Another account sees none of them and cannot touch them; without a session there is nothing to see.
      const otherAccount = await herald.services.accounts.create('Elsewhere');
      assert.deepEqual(await herald.services.templates.list(otherAccount), []);
      assert.equal((await new WebClient(herald.url).app('GET', '/templates')).status, 401);
      assert.equal((await web.app('DELETE', `/templates/${signature.body.id}`)).status, 200);
      assert.equal((await web.app('DELETE', `/templates/${signature.body.id}`)).status, 404);
      await assert.rejects(herald.services.templates.remove(otherAccount, template.body.id), /does not exist in this account/);
    });

    it('streams "change" when posts change in another process on the same store', async () => {
      const stream = await listen(`${herald.url}/api/app/events`, cookieOf(web));
      try {
        await waitFor(() => stream.events.includes('ready'), 'the ready event');
        const before = stream.events.length;
        const created = await fetch(`${other.api}/posts`, {
          method: 'POST',
          headers: { authorization: owner.key, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'draft', posts: [{ integration: { id: channel }, value: [{ content: 'from the other process' }] }] }),
        });
        assert.equal(created.status, 201);
        await waitFor(() => stream.events.slice(before).includes('change'), 'a change event within 2 s', 2000);
      } finally {
        stream.close();
      }
      const anonymous = await fetch(`${herald.url}/api/app/events`);
      assert.equal(anonymous.status, 401);
    });

    it('serves the application for its own paths, JSON 404s for unknown server paths, and hashed assets for a year', async () => {
      const page = await fetch(`${herald.url}/settings/developers`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
      const html = await page.text();
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(asset, 'the page loads its script from /assets');
      const script = await fetch(herald.url + asset, { headers: { 'accept-encoding': 'br' } });
      assert.equal(script.status, 200);
      assert.match(script.headers.get('cache-control') ?? '', /immutable/);
      assert.equal(script.headers.get('content-encoding'), 'br', 'sent compressed');
      assert.match(await script.text(), /createRoot|react/i, 'and it is the script');
      for (const path of ['/api/nothing-here', '/api/app/nothing-here', '/favicon.ico', '/assets/missing.js', '/no-such-page']) {
        const answer = await fetch(herald.url + path);
        assert.equal(answer.status, 404, path);
        assert.match(answer.headers.get('content-type') ?? '', /json/, `${path} answers JSON`);
      }
    });
  });
}

async function waitFor(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
