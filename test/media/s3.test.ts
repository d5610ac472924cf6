/**
 * Media in an S3-compatible bucket, against a real S3-compatible server (s3rver)
 * on 127.0.0.1: the upload lands in the bucket (nothing stays on disk), Herald
 * serves it with ranges, conversions read from the bucket, deleting removes the
 * objects, and a bucket with a public address is linked to directly.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import sharp from 'sharp';
import { startHerald, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { mediaRef, prepareForNetwork } from '../../src/media/prepare.ts';
import { assertRanges, mp4Header, noisyPng, storedFiles } from './support.ts';

const BUCKET = 'herald-media';
const PREFIX = 'herald/';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

let s3rver: S3rver;
let s3Dir: string;
let endpoint: string;
let client: S3Client;

before(async () => {
  s3Dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-s3-'));
  s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir });
  const { port } = (await s3rver.run()) as { port: number };
  endpoint = `http://127.0.0.1:${port}`;
  client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
});
after(async () => {
  client.destroy();
  await s3rver.close();
  fs.rmSync(s3Dir, { recursive: true, force: true });
});

const s3Env = (extra: Record<string, string> = {}) => ({
  HERALD_S3_BUCKET: BUCKET,
  HERALD_S3_ENDPOINT: endpoint,
  HERALD_S3_REGION: 'us-east-1',
  HERALD_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
  HERALD_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
  HERALD_S3_PREFIX: PREFIX,
  ...extra,
});

async function objectKeys(): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (listed.Contents ?? []).map((o) => o.Key!).sort();
}

async function objectExists(key: string): Promise<boolean> {
  try {
    await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    return true;
  } catch {
    return false;
  }
}

const keyOf = (url: string) => PREFIX + url.split('/').slice(-3).join('/');

for (const store of await testStores()) {
  describe(`S3 storage, served by Herald (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;

    before(async () => {
      herald = await startHerald(store, { env: s3Env() });
      account = await herald.newAccount();
    });
    after(() => herald.close());

    it('round trip: the upload lands in the bucket, is served with its type, nosniff and ranges, and deleting removes it', async () => {
      const png = await noisyPng(120, 80);
      const stored = await uploadUntyped(account, herald.api, png, 'bucket.png');
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      assert.ok(stored.body.path.startsWith(`${herald.url}/uploads/`), stored.body.path);
      assert.deepEqual([stored.body.width, stored.body.height], [120, 80]);

      const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: keyOf(stored.body.path) }));
      assert.equal(object.ContentType, 'image/png');
      assert.match(object.CacheControl ?? '', /immutable/);
      assert.ok(Buffer.from(await object.Body!.transformToByteArray()).equals(png), 'the bucket holds the exact bytes');
      assert.ok(await objectExists(keyOf(stored.body.thumbnail)), 'the thumbnail is in the bucket too');
      assert.deepEqual(storedFiles(herald), [], 'nothing is left on the local disk');

      const served = await fetch(stored.body.path);
      assert.equal(served.headers.get('content-type'), 'image/png');
      assert.equal(served.headers.get('x-content-type-options'), 'nosniff');
      assert.match(served.headers.get('cache-control') ?? '', /max-age=31536000/);
      assert.ok(Buffer.from(await served.arrayBuffer()).equals(png), 'Buffer.from(await served.arrayBuffer()).equals(png)');
      const head = await fetch(stored.body.path, { method: 'HEAD' });
      assert.equal(head.headers.get('content-length'), String(png.length));
      const revalidated = await fetch(stored.body.path, { headers: { 'if-none-match': served.headers.get('etag')! } });
      assert.equal(revalidated.status, 304);
      await assertRanges(stored.body.path, png);

      assert.equal((await account.callUntyped('DELETE', `/media/${stored.body.id}`)).status, 200);
      assert.equal(await objectExists(keyOf(stored.body.path)), false);
      assert.equal(await objectExists(keyOf(stored.body.thumbnail)), false);
      assert.equal((await fetch(stored.body.path)).status, 404);
    });

    it('a file larger than one part goes up in parts and comes back byte for byte', async () => {
      const video = mp4Header(20 * 1024 * 1024);
      for (let i = 64; i < video.length; i += 4096) video[i] = i & 255;
      const stored = await uploadUntyped(account, herald.api, video, 'long.mp4');
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      const served = Buffer.from(await (await fetch(stored.body.path)).arrayBuffer());
      assert.ok(served.equals(video), 'served.equals(video)');
      const late = await fetch(stored.body.path, { headers: { range: 'bytes=15000000-15000099' } });
      assert.equal(late.status, 206);
      assert.ok(
        Buffer.from(await late.arrayBuffer()).equals(video.subarray(15_000_000, 15_000_100)),
        'Buffer.from(await late.arrayBuffer()).equals(video.subarray(15_000_000, 15_000_100))',
      );
    });

    it('a refused upload leaves no object; a conversion reads from and writes to the bucket', async () => {
      const before = await objectKeys();
      const refused = await uploadUntyped(account, herald.api, Buffer.from('<html>not an image</html>'), 'x.png');
      assert.equal(refused.status, 415);
      const damaged = await uploadUntyped(account, herald.api, await noisyPng(100, 100).then((png) => png.subarray(0, png.length >> 1)), 'cut.png');
      assert.equal(damaged.status, 400);
      assert.deepEqual(await objectKeys(), before);

      const stored = await uploadUntyped(account, herald.api, await noisyPng(600, 400), 'convert.png');
      const row = await herald.services.store.db.selectFrom('media').selectAll().where('id', '=', stored.body.id).executeTakeFirstOrThrow();
      const prepared = await prepareForNetwork(herald.services, mediaRef(herald.services, row), { imageTypes: ['image/jpeg'], maxImageSide: 300 });
      assert.ok(await objectExists(keyOf(prepared.url)), 'await objectExists(keyOf(prepared.url))');
      const meta = await sharp(Buffer.from(await (await fetch(prepared.url)).arrayBuffer())).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 300, 200]);
    });
  });

  describe(`S3 storage with a public bucket address (${store})`, storeSuite(store), () => {
    let herald: TestHerald;

    before(async () => {
      herald = await startHerald(store, { env: s3Env({ HERALD_S3_PUBLIC_URL: `${endpoint}/${BUCKET}/herald` }) });
    });
    after(() => herald.close());

    it('media paths point at the bucket, which serves the bytes and ranges itself; posts accept them', async () => {
      const account = await herald.newAccount();
      const png = await noisyPng(64, 64);
      const stored = await uploadUntyped(account, herald.api, png, 'public.png');
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      assert.ok(stored.body.path.startsWith(`${endpoint}/${BUCKET}/herald/`), stored.body.path);
      const served = await fetch(stored.body.path);
      assert.equal(served.headers.get('content-type'), 'image/png');
      assert.ok(Buffer.from(await served.arrayBuffer()).equals(png), 'Buffer.from(await served.arrayBuffer()).equals(png)');
      const first = await fetch(stored.body.path, { headers: { range: 'bytes=0-9' } });
      assert.equal(first.status, 206);
      assert.ok(Buffer.from(await first.arrayBuffer()).equals(png.subarray(0, 10)), 'Buffer.from(await first.arrayBuffer()).equals(png.subarray(0, 10))');
      const listed = await account.callUntyped('GET', '/media');
      assert.equal(listed.body.media[0].path, stored.body.path);
    });
  });
}
