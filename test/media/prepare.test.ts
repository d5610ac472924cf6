import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startHerald, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { mediaRef, prepareForNetwork } from '../../src/media/prepare.ts';
import type { MediaRef } from '../../src/providers/types.ts';
import { PublishError } from '../../src/providers/errors.ts';
import { bmp24, mp4Header, noisyPng, plainImage, storedFiles } from './support.ts';

async function bytesOf(ref: MediaRef): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await ref.open()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

for (const store of await testStores()) {
  describe(`prepareForNetwork: media converted per network at publish time (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;

    before(async () => {
      herald = await startHerald(store);
      account = await herald.newAccount();
    });
    after(() => herald.close());

    async function refOf(bytes: Buffer, name: string): Promise<MediaRef> {
      const answer = await upload(account, herald.api, bytes, name);
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      const row = await herald.services.store.db.selectFrom('media').selectAll().where('id', '=', answer.body.id).executeTakeFirstOrThrow();
      return mediaRef(herald.services, row);
    }

    const variants = async (mediaId: string) =>
      herald.services.store.db.selectFrom('media_variants').selectAll().where('media_id', '=', mediaId).where('spec', '!=', 'thumbnail').execute();

    it('returns the same ref when the file already fits (or the network states no needs)', async () => {
      const ref = await refOf(await plainImage(300, 200, 'jpeg'), 'fits.jpg');
      assert.equal(await prepareForNetwork(herald.services, ref, undefined), ref);
      assert.equal(await prepareForNetwork(herald.services, ref, { imageTypes: ['image/jpeg', 'image/png'], maxImageSide: 300, maxImageBytes: ref.size }), ref);
      assert.equal((await variants(ref.id)).length, 0);
    });

    it('converts a PNG to JPEG within the longest side, keeps the original, and reuses the copy next time', async () => {
      const original = await plainImage(1200, 800, 'png');
      const ref = await refOf(original, 'big.png');
      const needs = { imageTypes: ['image/jpeg'], maxImageSide: 500 };
      const prepared = await prepareForNetwork(herald.services, ref, needs);
      assert.equal(prepared.id, ref.id, 'still names the upload');
      assert.notEqual(prepared.url, ref.url);
      assert.equal(prepared.mimeType, 'image/jpeg');
      assert.deepEqual([prepared.width, prepared.height], [500, 333]);
      const bytes = await bytesOf(prepared);
      assert.equal(bytes.length, prepared.size);
      const meta = await sharp(bytes).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 500, 333]);
      // The copy is on the upload host too (networks that fetch by URL), with its own type.
      const served = await fetch(prepared.url);
      assert.equal(served.headers.get('content-type'), 'image/jpeg');
      assert.ok(Buffer.from(await served.arrayBuffer()).equals(bytes), 'Buffer.from(await served.arrayBuffer()).equals(bytes)');
      // The original is untouched.
      assert.ok((await bytesOf(ref)).equals(original), '(await bytesOf(ref)).equals(original)');
      assert.ok(
        Buffer.from(await (await fetch(ref.url)).arrayBuffer()).equals(original),
        'Buffer.from(await (await fetch(ref.url)).arrayBuffer()).equals(original)',
      );

      const files = storedFiles(herald);
      const again = await prepareForNetwork(herald.services, ref, needs);
      assert.equal(again.url, prepared.url);
      assert.equal((await variants(ref.id)).length, 1);
      assert.deepEqual(storedFiles(herald), files, 'no second copy');
      // Other needs, another copy.
      const smaller = await prepareForNetwork(herald.services, ref, { imageTypes: ['image/jpeg'], maxImageSide: 100 });
      assert.deepEqual([smaller.width, smaller.height], [100, 67]);
      assert.equal((await variants(ref.id)).length, 2);
    });

    it('brings a file under a byte limit, keeping a type the network accepts', async () => {
      const ref = await refOf(
        await sharp(await noisyPng(900, 900))
          .jpeg({ quality: 95 })
          .toBuffer(),
        'heavy.jpg',
      );
      const limit = Math.floor(ref.size / 4);
      const prepared = await prepareForNetwork(herald.services, ref, { imageTypes: ['image/jpeg', 'image/png'], maxImageBytes: limit });
      assert.equal(prepared.mimeType, 'image/jpeg');
      assert.ok(prepared.size <= limit, `${prepared.size} <= ${limit}`);
      assert.equal((await bytesOf(prepared)).length, prepared.size);
    });

    it('converts a BMP for a network that takes only JPEG; videos pass through unchanged', async () => {
      const bmp = await refOf(bmp24(120, 90), 'scan.bmp');
      const prepared = await prepareForNetwork(herald.services, bmp, { imageTypes: ['image/jpeg'] });
      const meta = await sharp(await bytesOf(prepared)).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 120, 90]);

      const video = await refOf(mp4Header(8192), 'clip.mp4');
      assert.equal(await prepareForNetwork(herald.services, video, { imageTypes: ['image/jpeg'], maxImageBytes: 10 }), video);
    });

    it('refuses (PublishError "refused") what cannot be made to fit, and deleting media removes its copies', async () => {
      const ref = await refOf(await noisyPng(300, 300), 'noise.png');
      await assert.rejects(
        prepareForNetwork(herald.services, ref, { imageTypes: ['image/heic'] }),
        (err: unknown) => err instanceof PublishError && err.kind === 'refused',
      );
      const prepared = await prepareForNetwork(herald.services, ref, { imageTypes: ['image/webp'], maxImageSide: 50 });
      assert.equal((await fetch(prepared.url)).status, 200);
      assert.equal((await account.call('DELETE', `/media/${ref.id}`)).status, 200);
      assert.equal((await fetch(prepared.url)).status, 404);
      assert.equal((await herald.services.store.db.selectFrom('media_variants').select('id').where('media_id', '=', ref.id).execute()).length, 0);
    });
  });
}
