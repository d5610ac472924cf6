/**
 * What the network suites share: publishing through the public API and waiting
 * until the engine has settled the post, and media files of the kinds networks
 * take (a PNG, an MP4 container of a chosen size).
 */
import assert from 'node:assert/strict';
import { eventually, PNG_1x1, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { entry, postBody, type ItemInput } from '../helpers/api-fixtures.ts';

/** A thread item: `media` (uploads) or `image` (as the API names it), and a delay. */
export interface Item extends ItemInput {
  media?: { id: string; path: string }[];
}

/** POST /posts type "now" with one thread on one channel; returns the post id. */
export async function publishNow(account: TestAccount, channelId: string, items: (string | Item)[], settings?: Record<string, unknown>): Promise<string> {
  const values = items.map((i) =>
    typeof i === 'string' ? i : { content: i.content, delay: i.delay, id: i.id, image: (i.image ?? i.media ?? []).map(({ id, path }) => ({ id, path })) },
  );
  const created = await account.call(
    'POST',
    '/posts',
    postBody('now', [entry(channelId, values, settings ? { settings } : {})], { date: new Date().toISOString() }),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body[0].postId;
}

/** Saves a draft (a post never sent) on the channel and returns its id, e.g. to look for its match on the network. */
export async function saveDraft(account: TestAccount, channelId: string, content: string, settings?: Record<string, unknown>): Promise<string> {
  const created = await account.call(
    'POST',
    '/posts',
    postBody('draft', [entry(channelId, [content], settings ? { settings } : {})], { date: new Date().toISOString() }),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body[0].postId;
}

// Errors and release ids are strings once settled (or null); tests compare them as such.
export interface SettledItem {
  id: string;
  state: string;
  error: any;
  releaseId: any;
  releaseURL: any;
  attempts: { outcome: string; detail: any }[];
  [field: string]: any;
}

/** GET /posts/{id}, with its thread. */
export interface Settled {
  id: string;
  state: string;
  error: any;
  releaseId: any;
  releaseURL: any;
  thread: SettledItem[];
  [field: string]: any;
}

/** GET /posts/{id} once every item of the thread is PUBLISHED or ERROR. */
export async function settled(account: TestAccount, postId: string, ms = 15_000): Promise<Settled> {
  return eventually(
    async () => {
      const r = await account.call('GET', `/posts/${postId}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.thread.every((t: { state: string }) => t.state === 'PUBLISHED' || t.state === 'ERROR') ? r.body : undefined;
    },
    ms,
    `post ${postId} settled`,
  );
}

export async function uploadPng(account: TestAccount, herald: TestHerald): Promise<{ id: string; path: string }> {
  const uploaded = await upload(account, herald.api, PNG_1x1, 'photo.png');
  assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
  return uploaded.body;
}

/** An MP4 container (ftyp box, then an mdat box) of `size` bytes: typed video/mp4 by its bytes. */
export function mp4Bytes(size: number): Buffer {
  const ftyp = Buffer.from('0000001866747970697336360000000069736f6d61766331', 'hex');
  const mdat = Buffer.alloc(size - ftyp.length);
  mdat.writeUInt32BE(mdat.length, 0);
  mdat.write('mdat', 4, 'latin1');
  for (let i = 8; i < mdat.length; i++) mdat[i] = (i * 31) & 0xff;
  return Buffer.concat([ftyp, mdat]);
}

export async function uploadMp4(account: TestAccount, herald: TestHerald, size: number): Promise<{ id: string; path: string; bytes: Buffer }> {
  const bytes = mp4Bytes(size);
  const uploaded = await upload(account, herald.api, bytes, 'clip.mp4');
  assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
  return { ...uploaded.body, bytes };
}

/** The channel as GET /integrations shows it. */
export async function listedChannel(account: TestAccount, id: string): Promise<any> {
  const list = await account.call('GET', '/integrations');
  assert.equal(list.status, 200);
  const found = list.body.find((c: { id: string }) => c.id === id);
  assert.ok(found, `channel ${id} is listed`);
  return found;
}
