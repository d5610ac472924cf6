/**
 * `herald move-store --to postgres://...` copies a busy embedded store into an
 * empty PostgreSQL database: refused while a Herald uses the store, every row
 * and checksum the same on both sides, the source untouched, and a Herald on
 * PostgreSQL then carries on where the embedded one stopped.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { untypedCaller, eventually, PNG_1x1, startHerald, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { createTestDatabase, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { verifiedByStandardWebhooks } from '../helpers/standard-webhooks.ts';
import { runHerald } from '../cli/run-herald.ts';
import { sqliteContents } from './sqlite-contents.ts';

const SECRET = 'test-secret-2f9c4e7a1b3d5f8e0a6c9b2d4f7e1a3c';

function herald(args: string[], dataDir: string) {
  return runHerald(args, { HERALD_DATA_DIR: dataDir, HERALD_SECRET: SECRET });
}

function post(channelId: string, type: string, content: string, extra: Record<string, unknown> = {}) {
  return { type, shortLink: false, tags: [], posts: [{ integration: { id: channelId }, value: [{ content, image: [] }] }], ...extra };
}

describe('move-store from the embedded store to PostgreSQL', storeSuite('postgres'), () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-move-'));
  let embedded: TestHerald | undefined;
  let moved: TestHerald | undefined;
  let target: { url: string; drop: () => Promise<void> };
  let receiver: WebhookReceiver;
  let account: TestAccount;
  let channelId: string;
  let signingSecret: string;
  let media: { path: string };
  let hookId: string;
  let publishedBefore: string;

  before(async () => {
    receiver = await startWebhookReceiver();
    target = await createTestDatabase();
    embedded = await startHerald('sqlite', { dataDir, engine: true, webhooks: { pollMs: 100 }, env: { HERALD_POSTS_PER_HOUR: '1000' } });
    account = await embedded.newAccount();
    const channel = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: `${receiver.url}/channel` } });
    channelId = channel.body.id;
    signingSecret = channel.body.secrets.signingSecret;
    assert.equal((await account.callUntyped('POST', '/groups', { name: 'A customer' })).status, 201);
    const hook = await account.callUntyped('POST', '/webhooks', { url: `${receiver.url}/events`, events: ['post.published'] });
    hookId = hook.body.id;
    media = (await uploadUntyped(account, embedded.api, PNG_1x1)).body;
  });
  after(async () => {
    await moved?.close();
    await embedded?.close();
    await receiver?.close();
    await target?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses while a Herald uses the store', async () => {
    // A busy store: published posts with their attempts and webhook deliveries, drafts, a post for later.
    const now = await account.callUntyped('POST', '/posts', post(channelId, 'now', 'published before the move', { date: new Date().toISOString() }));
    assert.equal(now.status, 201, JSON.stringify(now.body));
    publishedBefore = now.body[0].postId;
    // Due a little after the move, so the Herald on PostgreSQL is the one that sends it.
    const laterAt = new Date(Date.now() + 20_000);
    for (let i = 0; i < 30; i++) await account.callUntyped('POST', '/posts', post(channelId, 'draft', `draft ${i}`, { date: new Date().toISOString() }));
    const later = await account.callUntyped(
      'POST',
      '/posts',
      post(channelId, 'schedule', 'due after the move https://example.com/a', { date: laterAt.toISOString(), shortLink: true }),
    );
    assert.equal(later.status, 201, JSON.stringify(later.body));
    await eventually(async () => receiver.deliveries.find((d) => d.path === '/hook/events'), 15_000, 'the post.published event');

    const refused = await herald(['move-store', '--to', target.url], dataDir);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`Herald processes use the store in .* \\(pid ${process.pid}\\): stop them first`));
  });

  it('copies every table, checks each, and leaves the source as it was', async () => {
    await embedded!.close();
    embedded = undefined;
    const file = path.join(dataDir, 'herald.db');
    const before = sqliteContents(file);

    const done = await herald(['move-store', '--to', target.url], dataDir);
    assert.equal(done.code, 0, done.stderr);
    const lines = new Map(
      [...done.stdout.matchAll(/^(\w+)\s+(\d+) rows {2}checksum ([0-9a-f]{16}) {2}same on both sides$/gm)].map((m) => [m[1], Number(m[2])]),
    );
    for (const table of ['accounts', 'api_keys', 'channels', 'customers', 'posts', 'post_attempts', 'media', 'webhooks', 'webhook_deliveries', 'short_links']) {
      assert.ok(lines.has(table), `${table} is listed:\n${done.stdout}`);
    }
    assert.equal(lines.get('posts'), 32);
    assert.ok((lines.get('post_attempts') ?? 0) >= 1 && (lines.get('webhook_deliveries') ?? 0) >= 1, done.stdout);
    assert.equal(sqliteContents(file), before, 'the embedded store is unchanged');

    const again = await herald(['move-store', '--to', target.url], dataDir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already holds data/);
  });

  it('a Herald on PostgreSQL has everything and publishes what falls due', async () => {
    moved = await startHerald('postgres', {
      databaseUrl: target.url,
      dataDir,
      engine: true,
      webhooks: { pollMs: 100 },
      env: { HERALD_POSTS_PER_HOUR: '1000' },
    });
    const call = untypedCaller(moved.api, account.key);
    const channels = await call('GET', '/integrations');
    assert.equal(channels.status, 200, 'the API key moved');
    assert.deepEqual(
      channels.body.map((c: { id: string }) => c.id),
      [channelId],
    );
    assert.deepEqual(
      (await call('GET', '/groups')).body.map((g: { name: string }) => g.name),
      ['A customer'],
    );
    const listed = await call(
      'GET',
      `/posts?startDate=${new Date(Date.now() - 3_600_000).toISOString()}&endDate=${new Date(Date.now() + 3_600_000).toISOString()}`,
    );
    assert.equal(listed.body.posts.length, 32);
    const deliveries = await call('GET', `/webhooks/${hookId}/deliveries`);
    assert.ok(
      deliveries.body.deliveries.some((d: { payload: unknown }) => JSON.stringify(d.payload).includes(publishedBefore)),
      'the delivery log moved',
    );
    const served = await fetch(media.path.replace(/^http:\/\/127\.0\.0\.1:\d+/, moved.url));
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG_1x1);

    // The post scheduled on the embedded store goes out from PostgreSQL, signed with the secret its receiver holds.
    const scheduled = listed.body.posts.find((p: { content: string }) => p.content.startsWith('due after the move'));
    assert.match(scheduled.content, /\/s\/\w+/, 'its short link moved with it');
    assert.equal(scheduled.state, 'QUEUE');
    const delivery = await eventually(
      async () => receiver.deliveries.find((d) => d.path === '/hook/channel' && d.json?.post?.id === scheduled.id),
      40_000,
      'the scheduled post',
    );
    assert.ok(verifiedByStandardWebhooks(signingSecret, delivery.headers, delivery.body), 'signed with the moved channel secret');
    const link = await fetch(`${moved.url}${new URL(scheduled.content.match(/https?:\/\/\S+\/s\/\w+/)[0]).pathname}`, { redirect: 'manual' });
    assert.equal(link.headers.get('location'), 'https://example.com/a');
  });
});
