/**
 * Publishing through the public API for the network suites: post now, wait for
 * the whole thread to settle, read the channel's state.
 */
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { eventually, upload, type TestAccount } from '../helpers/herald.ts';
import { entry, postBody, type ItemInput } from '../helpers/api-fixtures.ts';

export interface Settled {
  id: string;
  state: string;
  error: string | null;
  releaseId: string | null;
  releaseURL: string | null;
  thread: { state: string; error: string | null; releaseId: string | null; releaseURL: string | null; attempts: { outcome: string; detail: string | null }[] }[];
}

/** POST /posts type "now" for one channel; returns the post id. */
export async function publishNow(account: TestAccount, channelId: string, items: (string | ItemInput)[], settings?: Record<string, unknown>): Promise<string> {
  const body = postBody('now', [entry(channelId, items, settings ? { settings } : {})], { date: new Date().toISOString() });
  const created = await account.call('POST', '/posts', body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body[0].postId;
}

/** Waits until every item of the thread is PUBLISHED or ERROR and returns GET /posts/{id}. */
export async function settled(account: TestAccount, postId: string, ms = 15_000): Promise<Settled> {
  return eventually(
    async () => {
      const r = await account.call('GET', `/posts/${postId}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.thread.every((t: { state: string }) => t.state === 'PUBLISHED' || t.state === 'ERROR') ? r.body : undefined;
    },
    ms,
    `post ${postId} to settle`,
  );
}

/** A real 4x3 PNG made by sharp. */
export const PNG_4x3 = await sharp({ create: { width: 4, height: 3, channels: 3, background: '#c03020' } }).png().toBuffer();

/** Uploads a real PNG and returns the {id, path} a post item references, with the bytes sent. */
export async function uploadPng(account: TestAccount, api: string, name = 'photo.png'): Promise<{ id: string; path: string; bytes: Buffer }> {
  const uploaded = await upload(account, api, PNG_4x3, name);
  assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
  return { id: uploaded.body.id, path: uploaded.body.path, bytes: PNG_4x3 };
}

/** The channel as GET /integrations shows it. */
export async function channelView(account: TestAccount, id: string): Promise<{ id: string; needsReconnect: boolean; name: string; identifier: string }> {
  const list = await account.call('GET', '/integrations');
  assert.equal(list.status, 200);
  const found = list.body.find((c: { id: string }) => c.id === id);
  assert.ok(found, `channel ${id} is listed`);
  return found;
}
