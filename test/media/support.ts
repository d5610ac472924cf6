/**
 * Fixtures for the media suites: real image and video files, multipart bodies
 * written byte by byte (to control file names exactly), and a listing of the
 * files a Herald keeps, to prove that a refused upload left nothing behind.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { TestHerald } from '../helpers/herald.ts';

/** A PNG of the given size filled with noise (so it does not compress to nothing). */
export async function noisyPng(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7919 + ((i * i) >> 3)) & 255;
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** A flat-coloured image of the given size and type. */
export async function plainImage(width: number, height: number, format: 'png' | 'jpeg' | 'webp' | 'gif' = 'png'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    [format]()
    .toBuffer();
}

/** An uncompressed 24-bit BMP, assembled by hand: each pixel's colour follows from its position. */
export function bmp24(width: number, height: number): Buffer {
  const stride = Math.ceil((width * 3) / 4) * 4;
  const pixelBytes = stride * height;
  const out = Buffer.alloc(54 + pixelBytes);
  out.write('BM', 0, 'latin1');
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(54, 10);
  out.writeUInt32LE(40, 14);
  out.writeInt32LE(width, 18);
  out.writeInt32LE(height, 22);
  out.writeUInt16LE(1, 26);
  out.writeUInt16LE(24, 28);
  out.writeUInt32LE(pixelBytes, 34);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = 54 + y * stride + x * 3;
      out[at] = 255; // blue
      out[at + 1] = (x * 255) / width; // green
      out[at + 2] = (y * 255) / height; // red
    }
  }
  return out;
}

/** Whether ffmpeg is installed. In CI it must be (the video checks are never skipped there). */
export async function haveFfmpeg(): Promise<boolean> {
  const works = await new Promise<boolean>((resolve) => execFile('ffmpeg', ['-version'], (err) => resolve(!err)));
  if (!works && process.env.CI === 'true') throw new Error("CI=true requires ffmpeg (.ci/run installs Debian's ffmpeg package)");
  return works;
}

/** A real one-second 320x240 H.264 MP4 made by ffmpeg. */
export async function mp4Video(): Promise<Buffer> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'herald-video-')), 'clip.mp4');
  await new Promise<void>((resolve, reject) =>
    execFile(
      'ffmpeg',
      ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10', '-t', '1', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-y', file],
      (err) => (err ? reject(err) : resolve()),
    ),
  );
  const bytes = fs.readFileSync(file);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  return bytes;
}

/** The start of an MP4 ("ftyp" box, brand isom) followed by filler: detected as video/mp4 by its bytes. */
export function mp4Header(totalBytes: number): Buffer {
  const out = Buffer.alloc(totalBytes);
  Buffer.from('00000020667479706973736f6d0000020069736f6d69736f32617663316d703431', 'hex').copy(out);
  return out;
}

/** Every file under the Herald's local media folder (temporary files included), relative names. */
export function storedFiles(herald: TestHerald): string[] {
  const root = herald.services.storage.root;
  const walk = (dir: string): string[] =>
    fs.existsSync(dir)
      ? fs
          .readdirSync(dir, { withFileTypes: true })
          .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.relative(root, path.join(dir, e.name))]))
      : [];
  return walk(root).sort();
}

export async function mediaRows(herald: TestHerald): Promise<number> {
  return (await herald.services.store.db.selectFrom('media').select('id').execute()).length;
}

/** A multipart body with one part "file"; `disposition` is the raw Content-Disposition value (bytes as given). */
export function multipartBody(disposition: Buffer | string, bytes: Buffer, boundary = 'herald-test-boundary'): { body: Buffer; contentType: string } {
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: `),
    Buffer.from(disposition),
    Buffer.from('\r\nContent-Type: application/octet-stream\r\n\r\n'),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface PostResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** POSTs raw bytes; the answer must be JSON. */
export function postRaw(url: string, key: string, contentType: string, body: Buffer): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', headers: { authorization: key, 'content-type': contentType, 'content-length': body.length } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c) => chunks.push(c));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) });
          } catch {
            reject(new Error(`answer is not JSON: ${text.slice(0, 200)}`));
          }
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

export function assertRefused(answer: { status: number; body: any }, status: number, code: string, field = 'file'): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body.code, code, JSON.stringify(answer.body));
  assert.ok(
    answer.body.errors.some((e: { path: string }) => e.path === field),
    `names ${field}: ${JSON.stringify(answer.body)}`,
  );
}

/** Checks the range forms players and networks send: first bytes, a middle slice, the tail, and past the end. */
export async function assertRanges(url: string, bytes: Buffer): Promise<void> {
  const get = (range: string) => fetch(url, { headers: { range } });
  const first = await get('bytes=0-9');
  assert.equal(first.status, 206);
  assert.equal(first.headers.get('content-range'), `bytes 0-9/${bytes.length}`);
  assert.ok(Buffer.from(await first.arrayBuffer()).equals(bytes.subarray(0, 10)), 'Buffer.from(await first.arrayBuffer()).equals(bytes.subarray(0, 10))');
  const middle = await get('bytes=100-199');
  assert.equal(middle.headers.get('content-length'), '100');
  assert.ok(
    Buffer.from(await middle.arrayBuffer()).equals(bytes.subarray(100, 200)),
    'Buffer.from(await middle.arrayBuffer()).equals(bytes.subarray(100, 200))',
  );
  const tail = await get('bytes=-16');
  assert.equal(tail.headers.get('content-range'), `bytes ${bytes.length - 16}-${bytes.length - 1}/${bytes.length}`);
  assert.ok(
    Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 16)),
    'Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 16))',
  );
  const open = await get(`bytes=${bytes.length - 5}-`);
  assert.ok(
    Buffer.from(await open.arrayBuffer()).equals(bytes.subarray(bytes.length - 5)),
    'Buffer.from(await open.arrayBuffer()).equals(bytes.subarray(bytes.length - 5))',
  );
  const beyond = await get(`bytes=${bytes.length + 10}-`);
  assert.equal(beyond.status, 416);
  assert.equal(beyond.headers.get('content-range'), `bytes */${bytes.length}`);
  await beyond.arrayBuffer();
}
