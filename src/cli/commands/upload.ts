/** Uploading media, from a file or from a URL. */
import path from 'node:path';
import type { Media } from '../../sdk/index.ts';
import type { Command } from '../command.ts';
import { str, UsageError } from '../command.ts';
import { formatBytes, type Output } from '../output.ts';
import type { Client } from '../session.ts';
import { clientFor, requireSession } from '../session.ts';

/** Uploads one file with a progress bar on the terminal. */
export async function uploadFile(client: Client, out: Output, file: string, idempotencyKey?: string): Promise<Media> {
  const bar = out.progress(path.basename(file));
  try {
    return await client.upload(file, { onProgress: bar, idempotencyKey });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`no such file: ${file}`);
    throw err;
  } finally {
    bar.done();
  }
}

export function describeMedia(media: Media): string {
  const size = [media.mimeType, formatBytes(media.size), media.width && media.height ? `${media.width}x${media.height}` : ''].filter(Boolean).join(', ');
  return [`Uploaded ${media.originalName || media.name} (${size})`, `  id:   ${media.id}`, `  path: ${media.path}`].join('\n');
}

const upload: Command = {
  name: 'upload',
  summary: 'upload a file (or --url) and print its media object',
  help: `Usage: herald upload <file> [--idempotency-key KEY]
       herald upload --url <url> [--idempotency-key KEY]

Uploads media to Herald; posts reference it by the printed path. The type is
read from the bytes. With --url the server fetches a public http(s) address.

Options:
  --url URL               fetch the file from this address instead
  --idempotency-key KEY   a repeat with the same key uploads nothing new
  --json                  the media object as JSON

Examples:
  herald upload ./photo.jpg
  herald upload --url https://example.com/banner.png --json`,
  options: { url: { type: 'string' }, 'idempotency-key': { type: 'string' } },
  async run(invocation) {
    const { out, config, positionals } = invocation;
    const url = str(invocation, 'url');
    if (url && positionals.length > 0) throw new UsageError('give either a file or --url, not both');
    if (!url && positionals.length !== 1) throw new UsageError('give one file to upload (or --url <url>)');
    const client = clientFor(requireSession(config));
    const idempotencyKey = str(invocation, 'idempotency-key');
    const media = url ? await client.uploadFromUrl(url, { idempotencyKey }) : await uploadFile(client, out, positionals[0], idempotencyKey);
    out.result(media, describeMedia);
  },
};

export const uploadCommands = [upload];
