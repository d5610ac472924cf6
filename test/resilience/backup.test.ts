/**
 * `herald backup` copies a running embedded store (database, media, secret) into
 * one file; `herald restore` puts it into an empty data folder, where a new
 * Herald opens the sealed channel tokens, serves the media and publishes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { untypedCaller, eventually, PNG_1x1, startHerald, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { verifiedByStandardWebhooks } from '../helpers/standard-webhooks.ts';
import { runHerald } from '../cli/run-herald.ts';

/** `herald <args>` as a user runs it, on the data folder given. */
function herald(args: string[], dataDir: string) {
  return runHerald(args, { HERALD_DATA_DIR: dataDir, HERALD_SECRET: 'test-secret-2f9c4e7a1b3d5f8e0a6c9b2d4f7e1a3c' });
}

describe('backup and restore of the embedded store (sqlite)', () => {
  const folders = [fs.mkdtempSync(path.join(os.tmpdir(), 'herald-a-')), fs.mkdtempSync(path.join(os.tmpdir(), 'herald-b-'))];
  const [first, second] = folders;
  const file = path.join(os.tmpdir(), `herald-backup-${process.pid}.tar.gz`);
  let running: TestHerald;
  let restored: TestHerald | undefined;
  let receiver: WebhookReceiver;
  let account: TestAccount;
  let channelId: string;
  let signingSecret: string;
  let media: { path: string };

  before(async () => {
    receiver = await startWebhookReceiver();
    running = await startHerald('sqlite', { dataDir: first, engine: true, env: { HERALD_POSTS_PER_HOUR: '1000' } });
    account = await running.newAccount();
    const channel = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: receiver.url } });
    channelId = channel.body.id;
    signingSecret = channel.body.secrets.signingSecret;
    media = (await uploadUntyped(account, running.api, PNG_1x1)).body;
  });
  after(async () => {
    await restored?.close();
    await running?.close();
    await receiver?.close();
    for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
    fs.rmSync(file, { force: true });
  });

  it('backs up while Herald runs and keeps writing, and restores into an empty folder only', async () => {
    // A busy store: posts being written while the backup is taken.
    const writes = Array.from({ length: 20 }, (_, i) =>
      account.callUntyped('POST', '/posts', {
        type: 'draft',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channelId }, value: [{ content: `draft ${i}`, image: [] }], settings: { __type: 'webhook' } }],
      }),
    );
    const backedUp = await herald(['backup', file], first);
    await Promise.all(writes);
    assert.equal(backedUp.code, 0, backedUp.stderr);
    assert.match(backedUp.stdout, /Backed up \d+ files/);
    assert.equal(fs.statSync(file).mode & 0o077, 0, 'only its owner may read it');

    const put = await herald(['restore', file], second);
    assert.equal(put.code, 0, put.stderr);
    const again = await herald(['restore', file], second);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already holds a store/);
  });

  it('a Herald on the restored folder has the account, the channel with its sealed secret, the media, and publishes', async () => {
    restored = await startHerald('sqlite', { dataDir: second, engine: true });
    const call = untypedCaller(restored.api, account.key);
    const channels = await call('GET', '/integrations');
    assert.deepEqual(
      channels.body.map((c: any) => c.id),
      [channelId],
    );
    const served = await fetch(media.path.replace(running.url, restored.url));
    assert.equal(served.status, 200);
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG_1x1);

    const sent = await call('POST', '/posts', {
      type: 'now',
      shortLink: false,
      tags: [],
      posts: [{ integration: { id: channelId }, value: [{ content: 'after the restore', image: [] }], settings: { __type: 'webhook' } }],
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const delivery = await eventually(async () => receiver.deliveries.find((d) => d.json?.post?.content === 'after the restore'), 15_000, 'the delivery');
    // Signed with the channel's secret, which the restored store unsealed.
    assert.ok(verifiedByStandardWebhooks(signingSecret, delivery.headers, delivery.body), 'signed with the secret the receiver holds');
  });
});
