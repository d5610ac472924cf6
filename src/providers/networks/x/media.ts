/**
 * Uploading media to X (v2 media endpoints): images in one request; GIFs and
 * videos in chunks (initialize, append each segment, finalize), then polling the
 * status until X has processed them, since a post may only use processed media.
 */
import { mediaBlob, mediaFilename } from '../../adapter-kit/media-bytes.ts';
import { mediaChunks } from '../../adapter-kit/media-chunks.ts';
import type { OAuth1Keys } from '../../adapter-kit/oauth1.ts';
import { waitForProcessing, type ProcessingState } from '../../adapter-kit/processing-wait.ts';
import type { MediaRef, PublishContext } from '../../types.ts';
import { PublishError } from '../../errors.ts';
import { signedJson } from './api.ts';

/** X's limits (media best practices): images 5 MB; GIFs 15 MB; videos 512 MB for standard accounts. */
export const X_IMAGE_BYTES = 5 * 1024 * 1024;
const X_GIF_BYTES = 15 * 1024 * 1024;
const X_VIDEO_BYTES = 512 * 1024 * 1024;
/** Segments of 4 MB (X recommends at most 5 MB). */
const SEGMENT_BYTES = 4 * 1024 * 1024;

interface ProcessingInfo {
  state?: 'pending' | 'in_progress' | 'succeeded' | 'failed';
  check_after_secs?: number;
  error?: { message?: string; name?: string };
}

function processingState(info: ProcessingInfo | undefined): ProcessingState {
  if (!info || info.state === 'succeeded') return { done: true };
  if (info.state === 'failed') return { done: false, failed: info.error?.message ?? info.error?.name ?? 'processing failed' };
  return { done: false, checkAfterMs: (info.check_after_secs ?? 2) * 1000 };
}

async function uploadImage(ctx: PublishContext<unknown>, keys: OAuth1Keys, media: MediaRef): Promise<string> {
  const form = new FormData();
  form.append('media_category', 'tweet_image');
  form.append('media_type', media.mimeType);
  form.append('media', await mediaBlob(media, X_IMAGE_BYTES, 'X'), mediaFilename(media));
  const answer = await signedJson<{ data: { id: string } }>(ctx, keys, `${ctx.urls.api}/2/media/upload`, {
    method: 'POST',
    body: form,
    timeoutMs: 120_000,
    repeatable: true,
  });
  return answer.data.id;
}

async function uploadChunked(ctx: PublishContext<unknown>, keys: OAuth1Keys, media: MediaRef, category: 'tweet_gif' | 'tweet_video'): Promise<string> {
  const limit = category === 'tweet_gif' ? X_GIF_BYTES : X_VIDEO_BYTES;
  if (media.size > limit)
    throw new PublishError(
      'refused',
      `X accepts ${category === 'tweet_gif' ? 'GIFs' : 'videos'} up to ${limit / 1024 / 1024} MB; ${mediaFilename(media)} is larger`,
    );
  const base = `${ctx.urls.api}/2/media/upload`;
  const init = await signedJson<{ data: { id: string } }>(ctx, keys, `${base}/initialize`, {
    method: 'POST',
    json: { media_type: media.mimeType, total_bytes: media.size, media_category: category },
    // Media is published only by a tweet that names it.
    repeatable: true,
  });
  const id = init.data.id;
  let index = 0;
  for await (const segment of mediaChunks(media, SEGMENT_BYTES)) {
    const form = new FormData();
    form.append('segment_index', String(index++));
    form.append('media', new Blob([new Uint8Array(segment)], { type: 'application/octet-stream' }), mediaFilename(media));
    await signedJson(ctx, keys, `${base}/${id}/append`, { method: 'POST', body: form, timeoutMs: 120_000, repeatable: true });
  }
  const finalized = await signedJson<{ data: { processing_info?: ProcessingInfo } }>(ctx, keys, `${base}/${id}/finalize`, { method: 'POST', repeatable: true });
  let first = true;
  await waitForProcessing(
    async () => {
      if (first) {
        first = false;
        return processingState(finalized.data?.processing_info);
      }
      const status = await signedJson<{ data: { processing_info?: ProcessingInfo } }>(ctx, keys, base, { query: { command: 'STATUS', media_id: id } });
      return processingState(status.data?.processing_info);
    },
    { network: 'X', what: `the ${category === 'tweet_gif' ? 'GIF' : 'video'}`, signal: ctx.signal },
  );
  return id;
}

/** X keeps alt text of up to 1,000 characters, on images and GIFs. */
const X_ALT_TEXT_LENGTH = 1000;

/** Attaches the file's alt text to the uploaded image or GIF (POST /2/media/metadata), before the post uses it. */
async function describe(ctx: PublishContext<unknown>, keys: OAuth1Keys, id: string, alt: string): Promise<void> {
  const text = [...alt].slice(0, X_ALT_TEXT_LENGTH).join('');
  await signedJson(ctx, keys, `${ctx.urls.api}/2/media/metadata`, { method: 'POST', json: { id, metadata: { alt_text: { text } } }, repeatable: true });
}

/** Uploads the item's media and returns X's media ids, in order. */
export async function uploadMedia(ctx: PublishContext<unknown>, keys: OAuth1Keys): Promise<string[]> {
  const ids: string[] = [];
  for (const media of ctx.item.media) {
    if (media.mimeType.startsWith('video/')) {
      ids.push(await uploadChunked(ctx, keys, media, 'tweet_video'));
      continue;
    }
    const id = media.mimeType === 'image/gif' ? await uploadChunked(ctx, keys, media, 'tweet_gif') : await uploadImage(ctx, keys, media);
    if (media.alt) await describe(ctx, keys, id, media.alt);
    ids.push(id);
  }
  return ids;
}
