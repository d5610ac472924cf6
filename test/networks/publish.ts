/** Real PNG uploads for the network suites; publishing helpers come from support.ts. */
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { upload, type TestAccount } from '../helpers/herald.ts';

export { publishNow, settled, listedChannel as channelView } from './support.ts';

/** A real 4x3 PNG made by sharp. */
export const PNG_4x3 = await sharp({ create: { width: 4, height: 3, channels: 3, background: '#c03020' } })
  .png()
  .toBuffer();

/** Uploads a real PNG and returns the {id, path} a post item references, with the bytes sent. */
export async function uploadPng(account: TestAccount, api: string, name = 'photo.png'): Promise<{ id: string; path: string; bytes: Buffer }> {
  const uploaded = await upload(account, api, PNG_4x3, name);
  assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
  return { id: uploaded.body.id, path: uploaded.body.path, bytes: PNG_4x3 };
}
