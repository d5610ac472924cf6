import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import sharp from 'sharp';
import { eventually, PNG_1x1, startHerald, type TestAccount, type TestHerald, uploadUntyped } from '../helpers/herald.ts';
import { JPEG_1x1 } from '../helpers/jpeg.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import {
  assertRanges,
  assertRefused,
  bmp24,
  haveFfmpeg,
  mediaRows,
  mp4Header,
  mp4Video,
  multipartBody,
  noisyPng,
  plainImage,
  postRaw,
  storedFiles,
} from './support.ts';

const IMAGE_CAP = 256 * 1024;
const VIDEO_CAP = 2 * 1024 * 1024;
const withFfmpeg = await haveFfmpeg();

for (const store of await testStores()) {
  describe(`POST /upload (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;

    before(async () => {
      herald = await startHerald(store, { env: { HERALD_MAX_IMAGE_BYTES: String(IMAGE_CAP), HERALD_MAX_VIDEO_BYTES: String(VIDEO_CAP) } });
      account = await herald.newAccount();
    });
    after(() => herald.close());

    /**
     * Runs `refused` and checks that it left no row and no file (temporary files included). The
     * partial file of an upload cut off mid-body is removed as its socket closes: that is waited for.
     */
    async function leavesNothing(refused: () => Promise<void>) {
      const files = storedFiles(herald);
      const rows = await mediaRows(herald);
      await refused();
      await eventually(async () => (isDeepStrictEqual(storedFiles(herald), files) ? true : undefined), 5_000, 'the partial file to be removed').catch(() => {});
      assert.deepEqual(storedFiles(herald), files, 'no file kept');
      assert.equal(await mediaRows(herald), rows, 'no media row');
    }

    it('a file named .png that is really HTML is refused (415), judged by its bytes', async () => {
      const html = Buffer.from('<!doctype html><html><body><script>alert(document.cookie)</script></body></html>');
      await leavesNothing(async () => {
        assertRefused(await uploadUntyped(account, herald.api, html, 'photo.png'), 415, 'unsupported_media_type');
        const form = new FormData();
        form.append('file', new Blob([html], { type: 'image/png' }), 'photo.png');
        assertRefused(await account.callUntyped('POST', '/upload', form), 415, 'unsupported_media_type');
      });
    });

    it('a zero-byte file is refused (400)', async () => {
      await leavesNothing(async () => assertRefused(await uploadUntyped(account, herald.api, Buffer.alloc(0), 'empty.png'), 400, 'empty_file'));
    });

    it('a truncated image is refused (400 damaged_file), and so is a multipart body cut short', async () => {
      const png = await noisyPng(200, 150);
      const jpeg = await sharp(png).jpeg().toBuffer();
      await leavesNothing(async () => {
        assertRefused(await uploadUntyped(account, herald.api, png.subarray(0, png.length >> 1), 'half.png'), 400, 'damaged_file');
        assertRefused(await uploadUntyped(account, herald.api, jpeg.subarray(0, jpeg.length >> 1), 'half.jpg'), 400, 'damaged_file');
        // A PNG signature and nothing else is too little to be any image.
        assertRefused(await uploadUntyped(account, herald.api, png.subarray(0, 8), 'tiny.png'), 415, 'unsupported_media_type');
        const { body, contentType } = multipartBody('form-data; name="file"; filename="cut.png"', png);
        const cut = await postRaw(`${herald.api}/upload`, account.key, contentType, body.subarray(0, body.length - 40)).catch((err: Error) => ({
          status: 0,
          headers: {},
          body: err.message,
        }));
        // The body ends before the closing boundary: either a 400 naming the body, or the declared length is not met.
        assert.ok(cut.status === 400 || cut.status === 0, JSON.stringify(cut.body));
        if (cut.status === 400) assert.equal(cut.body.errors[0].path.split('.')[0], cut.body.errors[0].path.includes('content-length') ? 'headers' : 'body');
      });
    });

    it('an oversize file is cut off: 413 while the client is still sending, the connection closed, nothing stored, memory flat', async () => {
      const total = 256 * 1024 * 1024;
      const rssBefore = process.memoryUsage().rss;
      await leavesNothing(async () => {
        const outcome = await streamUpload(`${herald.api}/upload`, account.key, Buffer.concat([PNG_1x1.subarray(0, 16)]), total);
        assert.equal(outcome.status, 413, outcome.text);
        assert.equal(JSON.parse(outcome.text).code, 'file_too_large');
        assert.match(JSON.parse(outcome.text).message, /256 KB/);
        assert.equal(outcome.connection, 'close');
        assert.ok(outcome.sent < total / 4, `the server stopped the upload early (client wrote ${outcome.sent} of ${total} bytes)`);
      });
      const grown = process.memoryUsage().rss - rssBefore;
      assert.ok(grown < 64 * 1024 * 1024, `memory grew by ${Math.round(grown / 1048576)} MB`);
    });

    it('a declared Content-Length over the largest cap is refused before the body is read', async () => {
      const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        const request = http.request(`${herald.api}/upload`, {
          method: 'POST',
          headers: { authorization: account.key, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(10 * 1024 * 1024 * 1024) },
        });
        request.on('response', (response) => {
          let text = '';
          response.on('data', (c) => (text += c));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
        });
        request.on('error', reject);
        request.write('--x\r\n');
      });
      assertRefused(answer, 413, 'file_too_large');
    });

    it('a video over the video cap is refused; one under it (but over the image cap) is kept', async () => {
      await leavesNothing(async () => assertRefused(await uploadUntyped(account, herald.api, mp4Header(VIDEO_CAP + 1), 'long.mp4'), 413, 'file_too_large'));
      const fine = await uploadUntyped(account, herald.api, mp4Header(IMAGE_CAP * 2), 'clip.mp4');
      assert.equal(fine.status, 201, JSON.stringify(fine.body));
      assert.deepEqual([fine.body.mimeType, fine.body.size], ['video/mp4', IMAGE_CAP * 2]);
    });

    it('file names with ../, NUL and unicode: stored under a random name, shown cleaned, nothing written outside the media folder', async () => {
      const outside = path.dirname(herald.services.storage.root);
      const filesOutside = fs.readdirSync(outside).sort();
      const cases: [Buffer, string][] = [
        [Buffer.from('form-data; name="file"; filename="../../../../etc/passwd.png"'), 'passwd.png'],
        [Buffer.from('form-data; name="file"; filename="..\\..\\boot.ini.png"'), 'boot.ini.png'],
        [Buffer.concat([Buffer.from('form-data; name="file"; filename="evil'), Buffer.from([0]), Buffer.from('.png"')]), 'evil.png'],
        [Buffer.from('form-data; name="file"; filename="фото 📷 été.png"', 'utf8'), 'фото 📷 été.png'],
        [Buffer.from(`form-data; name="file"; filename*=UTF-8''${encodeURIComponent('日本語 ../x.png')}`), 'x.png'],
      ];
      for (const [disposition, shown] of cases) {
        const { body, contentType } = multipartBody(disposition, PNG_1x1);
        const answer = await postRaw(`${herald.api}/upload`, account.key, contentType, body);
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        assert.equal(answer.body.originalName, shown);
        assert.match(answer.body.name, /^[0-9a-f-]{36}\.png$/);
        assert.equal(new URL(answer.body.path).pathname, `/uploads/${answer.body.path.split('/uploads/')[1]}`);
        assert.match(answer.body.path, /\/uploads\/\d{4}\/\d{2}\/[0-9a-f-]{36}\.png$/);
        const served = await fetch(answer.body.path);
        assert.ok(Buffer.from(await served.arrayBuffer()).equals(PNG_1x1), 'Buffer.from(await served.arrayBuffer()).equals(PNG_1x1)');
      }
      assert.deepEqual(fs.readdirSync(outside).sort(), filesOutside);
    });

    it('answers width, height and a JPEG thumbnail for images (EXIF rotation applied), BMP included', async () => {
      const wide = await uploadUntyped(account, herald.api, await plainImage(1200, 800, 'png'), 'wide.png');
      assert.equal(wide.status, 201, JSON.stringify(wide.body));
      assert.deepEqual([wide.body.mimeType, wide.body.width, wide.body.height, wide.body.duration], ['image/png', 1200, 800, null]);
      const thumb = await fetch(wide.body.thumbnail);
      assert.equal(thumb.headers.get('content-type'), 'image/jpeg');
      const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 400, 267]);

      const turned = await sharp(await plainImage(300, 100, 'png'))
        .jpeg()
        .withMetadata({ orientation: 6 })
        .toBuffer();
      const portrait = await uploadUntyped(account, herald.api, turned, 'phone.jpg');
      assert.deepEqual([portrait.body.mimeType, portrait.body.width, portrait.body.height], ['image/jpeg', 100, 300]);

      const bitmap = await uploadUntyped(account, herald.api, bmp24(64, 48), 'old.bmp');
      assert.equal(bitmap.status, 201, JSON.stringify(bitmap.body));
      assert.deepEqual([bitmap.body.mimeType, bitmap.body.width, bitmap.body.height], ['image/bmp', 64, 48]);
      const bmpThumb = await sharp(Buffer.from(await (await fetch(bitmap.body.thumbnail)).arrayBuffer())).metadata();
      assert.deepEqual([bmpThumb.width, bmpThumb.height], [64, 48]);

      for (const [bytes, type] of [
        [JPEG_1x1, 'image/jpeg'],
        [await plainImage(20, 10, 'gif'), 'image/gif'],
        [await plainImage(20, 10, 'webp'), 'image/webp'],
      ] as const) {
        const answer = await uploadUntyped(account, herald.api, bytes, 'no-extension');
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        assert.equal(answer.body.mimeType, type);
        assert.ok(answer.body.width > 0 && answer.body.thumbnail, JSON.stringify(answer.body));
      }
    });

    it(
      'videos: ' +
        (withFfmpeg ? 'width, height, duration and a poster read with ffprobe and ffmpeg' : 'kept without dimensions (ffmpeg is not installed here)'),
      async () => {
        if (withFfmpeg) {
          const clip = await uploadUntyped(account, herald.api, await mp4Video(), 'clip.mov');
          assert.equal(clip.status, 201, JSON.stringify(clip.body));
          assert.deepEqual([clip.body.mimeType, clip.body.width, clip.body.height], ['video/mp4', 320, 240]);
          assert.ok(Math.abs(clip.body.duration - 1) < 0.2, `duration ${clip.body.duration}`);
          const poster = await sharp(Buffer.from(await (await fetch(clip.body.thumbnail)).arrayBuffer())).metadata();
          assert.deepEqual([poster.format, poster.width, poster.height], ['jpeg', 320, 240]);
        } else {
          const clip = await uploadUntyped(account, herald.api, mp4Header(4096), 'clip.mp4');
          assert.deepEqual([clip.status, clip.body.width, clip.body.duration, clip.body.thumbnail], [201, null, null, null]);
        }
      },
    );

    it('serves files with their type, nosniff, long caching and byte ranges', async () => {
      const png = await noisyPng(64, 64);
      const stored = await uploadUntyped(account, herald.api, png, 'ranges.png');
      const whole = await fetch(stored.body.path);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('content-type'), 'image/png');
      assert.equal(whole.headers.get('x-content-type-options'), 'nosniff');
      assert.match(whole.headers.get('cache-control') ?? '', /max-age=31536000/);
      assert.equal(whole.headers.get('accept-ranges'), 'bytes');
      assert.ok(Buffer.from(await whole.arrayBuffer()).equals(png), 'Buffer.from(await whole.arrayBuffer()).equals(png)');
      await assertRanges(stored.body.path, png);
    });
  });
}

/**
 * Streams a multipart upload of `total` bytes (starting with `head`) as fast as
 * the connection takes it, and reports the answer and how much was written
 * before the server closed the connection.
 */
function streamUpload(url: string, key: string, head: Buffer, total: number): Promise<{ status: number; text: string; connection?: string; sent: number }> {
  const boundary = 'herald-stream-boundary';
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answer: { status: number; text: string; connection?: string } | undefined;
    let closed = false;
    const request = http.request(url, { method: 'POST', headers: { authorization: key, 'content-type': `multipart/form-data; boundary=${boundary}` } });
    const finish = () => {
      if (answer && closed) resolve({ ...answer, sent });
    };
    request.on('response', (response) => {
      let text = '';
      response.on('data', (c) => (text += c));
      response.on('end', () => {
        answer = { status: response.statusCode ?? 0, text, connection: response.headers.connection };
        // The client stops too, as curl and browsers do on an early answer.
        request.destroy();
        finish();
      });
    });
    request.on('error', () => {});
    request.on('close', () => {
      closed = true;
      if (!answer) return reject(new Error(`the connection closed without an answer after ${sent} bytes`));
      finish();
    });
    request.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.png"\r\n\r\n`);
    request.write(head);
    const chunk = Buffer.alloc(64 * 1024, 0x5a);
    const pump = () => {
      while (sent < total && !request.destroyed) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      if (!request.destroyed) request.end(`\r\n--${boundary}--\r\n`);
    };
    pump();
  });
}
