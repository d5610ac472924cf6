/**
 * Bluesky against the AT Protocol's own PDS and PLC directory (@atproto/dev-env),
 * not a stand-in: app-password sessions, facets with a resolved mention, link
 * cards and pictures as blobs the PDS checks, record keys it validates as TIDs,
 * reply refs, and a session renewed with refreshSession.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TestNetworkNoAppView } from '@atproto/dev-env';
import { PNG_1x1, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { listedChannel, publishNow, settled, uploadPng, saveDraft } from './support.ts';

const DAY = 24 * 60 * 60_000;

for (const store of await testStores()) {
  describe(`bluesky on a real PDS (${store})`, storeSuite(store), () => {
    let network: TestNetworkNoAppView;
    let herald: TestHerald;
    let account: TestAccount;
    let pages: http.Server;
    let pagesUrl: string;
    let channelId: string;
    let alice: string;
    let bob: string;

    /** A record as the PDS holds it. */
    const record = async (uri: string) => {
      const [, repo, collection, rkey] = /^at:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(uri)!;
      const response = await fetch(`${network.pds.url}/xrpc/com.atproto.repo.getRecord?${new URLSearchParams({ repo, collection, rkey })}`);
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()) as { uri: string; cid: string; value: any };
    };
    const blobBytes = async (cid: string) => {
      const response = await fetch(`${network.pds.url}/xrpc/com.atproto.sync.getBlob?${new URLSearchParams({ did: alice, cid })}`);
      assert.equal(response.status, 200);
      return Buffer.from(await response.arrayBuffer());
    };

    before(async () => {
      network = await TestNetworkNoAppView.create({});
      const seed = network.getSeedClient();
      await seed.createAccount('alice', { email: 'alice@herald.test', handle: 'alice.test', password: 'alice-main-password' });
      await seed.createAccount('bob', { email: 'bob@herald.test', handle: 'bob.test', password: 'bob-main-password' });
      alice = seed.dids.alice;
      bob = seed.dids.bob;
      pages = http.createServer((req, res) => {
        if (req.url === '/article') {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(
            '<html><head><meta property="og:title" content="A real card"><meta property="og:description" content="Built by Herald">' +
              '<meta property="og:image" content="/cover.png"></head></html>',
          );
        } else if (req.url === '/cover.png') {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(PNG_1x1);
        } else res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
      pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
      herald = await startHerald(store, {
        engine: { pollMs: 50, renewEveryMs: DAY },
        // The PDS names itself http://localhost:<port>.
        env: { HERALD_ALLOW_PRIVATE_HOSTS: 'localhost,127.0.0.1', HERALD_BLUESKY_SERVICE_URL: network.pds.url, HERALD_POSTS_PER_HOUR: '1000' },
      });
      account = await herald.newAccount();
    });
    after(async () => {
      await herald?.close();
      await network?.close();
      pages?.close();
    });

    it('connects with an app password the PDS issued', async () => {
      const session = await fetch(`${network.pds.url}/xrpc/com.atproto.server.createSession`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ identifier: 'alice.test', password: 'alice-main-password' }),
      }).then((r) => r.json());
      const appPassword = await fetch(`${network.pds.url}/xrpc/com.atproto.server.createAppPassword`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session.accessJwt}` },
        body: JSON.stringify({ name: 'Herald' }),
      }).then((r) => r.json());
      const connected = await account.call('POST', '/integrations', {
        identifier: 'bluesky',
        credentials: { identifier: 'alice.test', password: appPassword.password, service: network.pds.url },
      });
      assert.equal(connected.status, 201, JSON.stringify(connected.body));
      channelId = connected.body.id;
      const channel = await listedChannel(account, channelId);
      assert.equal(channel.profile, 'alice.test');
    });

    it('publishes a post the PDS accepts: a mention resolved to its DID, a link, a tag, and the link card with its thumbnail', async () => {
      const text = `Hello @bob.test, read ${pagesUrl}/article #herald`;
      const post = await settled(account, await publishNow(account, channelId, [text], { __type: 'bluesky', langs: ['en'] }));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const stored = await record(post.releaseId);
      assert.equal(stored.value.text, text);
      assert.deepEqual(stored.value.langs, ['en']);
      const features = stored.value.facets.map((f: any) => f.features[0]);
      assert.deepEqual(features, [
        { $type: 'app.bsky.richtext.facet#mention', did: bob },
        { $type: 'app.bsky.richtext.facet#link', uri: `${pagesUrl}/article` },
        { $type: 'app.bsky.richtext.facet#tag', tag: 'herald' },
      ]);
      const bytes = Buffer.from(text, 'utf8');
      assert.equal(bytes.subarray(stored.value.facets[0].index.byteStart, stored.value.facets[0].index.byteEnd).toString(), '@bob.test');
      const external = stored.value.embed.external;
      assert.deepEqual(
        { uri: external.uri, title: external.title, description: external.description },
        { uri: `${pagesUrl}/article`, title: 'A real card', description: 'Built by Herald' },
      );
      assert.deepEqual(await blobBytes(external.thumb.ref.$link ?? external.thumb.ref.toString()), PNG_1x1);
    });

    it('publishes a thread with a picture: the reply names the first post as root and parent, with their CIDs', async () => {
      const png = await uploadPng(account, herald);
      await herald.services.media.describe(account.id, png.id, { alt: 'A white square' });
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'First, with a picture', media: [png] }, { content: 'Second' }]));
      assert.ok(
        post.thread.every((t: any) => t.state === 'PUBLISHED'),
        JSON.stringify(post.thread),
      );
      const first = await record(post.thread[0].releaseId);
      const second = await record(post.thread[1].releaseId);
      assert.equal(first.value.embed.images[0].alt, 'A white square');
      assert.deepEqual(await blobBytes(first.value.embed.images[0].image.ref.$link ?? first.value.embed.images[0].image.ref.toString()), PNG_1x1);
      assert.deepEqual(second.value.reply, { root: { uri: first.uri, cid: first.cid }, parent: { uri: first.uri, cid: first.cid } });
    });

    it("lists the account's recent posts from the PDS (listRecords) for a post published by hand", async () => {
      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'bluesky' });
      const missing = await account.call('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const texts = missing.body.map((p: any) => p.text);
      assert.deepEqual(texts.slice(0, 2), ['Second', 'First, with a picture'], 'newest first');
      assert.match(missing.body[0].url, /^https:\/\/bsky\.app\/profile\/did:plc:[a-z0-9]+\/post\/[a-z0-9]{13}$/);
    });

    it('keeps the session alive with refreshSession, and publishes with the new one', async () => {
      const before = herald.services.channels.publishView(
        await herald.services.store.db.selectFrom('channels').selectAll().where('id', '=', channelId).executeTakeFirstOrThrow(),
      ).config;
      assert.equal(await herald.engine!.renewal.run(Date.now() + 8 * DAY), 1);
      const after = herald.services.channels.publishView(
        await herald.services.store.db.selectFrom('channels').selectAll().where('id', '=', channelId).executeTakeFirstOrThrow(),
      ).config;
      assert.notEqual(after.refreshToken, before.refreshToken, 'the PDS rotated the refresh token');
      const post = await settled(account, await publishNow(account, channelId, ['After the renewal']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal((await record(post.releaseId)).value.text, 'After the renewal');
    });
  });
}
