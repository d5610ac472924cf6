/**
 * Media as a network needs it. At publish time the engine hands each image to
 * `prepareForNetwork` with the network's requirements; an image that already fits
 * goes out as it is, any other is converted (type) and shrunk (sides, bytes) with
 * sharp into a copy stored next to the original. The original is never changed,
 * and the copy is remembered (media_variants), so the next post to a network with
 * the same requirements reuses it. Videos pass through unchanged.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Sharp } from 'sharp';
import type { Database, MediaRow, MediaVariantRow } from '../db/schema.ts';
import { newId } from '../lib/ids.ts';
import type { MediaRef, MediaRequirements } from '../providers/types.ts';
import { PublishError } from '../providers/errors.ts';
import { openImage } from './inspect.ts';
import type { MediaStorage } from './storage.ts';

/** What prepareForNetwork needs; the app's Services has all of it. */
export interface PrepareDeps {
  store: { db: Kysely<Database> };
  storage: MediaStorage;
  media: { urlOf(key: string): string };
}

/** Types sharp can write, with the extension Herald stores them under; the first ones are preferred. */
const WRITABLE: Record<string, { ext: string; lossy: boolean; encode: (image: Sharp, quality: number) => Sharp }> = {
  'image/jpeg': { ext: 'jpg', lossy: true, encode: (image, quality) => image.flatten({ background: '#ffffff' }).jpeg({ quality }) },
  'image/png': { ext: 'png', lossy: false, encode: (image) => image.png({ compressionLevel: 9 }) },
  'image/webp': { ext: 'webp', lossy: true, encode: (image, quality) => image.webp({ quality }) },
  'image/avif': { ext: 'avif', lossy: true, encode: (image, quality) => image.avif({ quality }) },
  'image/gif': { ext: 'gif', lossy: false, encode: (image) => image.gif() },
  'image/tiff': { ext: 'tiff', lossy: false, encode: (image) => image.tiff({ compression: 'lzw' }) },
};
/** Qualities tried in turn when a lossy copy must fit a byte limit. */
const QUALITIES = [85, 70, 55];
/** Then the sides shrink (at least by this factor per try), at most this many times. */
const SHRINK = 0.8;
const MAX_SHRINKS = 10;

/** A ref to a stored row's bytes: the original upload or one of its copies. */
export function mediaRef(
  deps: Pick<PrepareDeps, 'storage'>,
  row: Pick<MediaRow, 'id' | 'url' | 'mime_type' | 'size' | 'width' | 'height' | 'storage_key'> & { duration?: number | null; alt?: string | null },
): MediaRef {
  return {
    id: row.id,
    url: row.url,
    mimeType: row.mime_type,
    size: row.size,
    width: row.width,
    height: row.height,
    duration: row.duration ?? null,
    alt: row.alt ?? null,
    open: () => deps.storage.open(row.storage_key),
  };
}

/**
 * Returns `ref` when the file already meets `needs`, otherwise a ref to a copy that
 * does (made now, or found from an earlier publish). The copy's ref keeps the
 * original's id, so the network adapter still knows which upload it is.
 */
export async function prepareForNetwork(deps: PrepareDeps, ref: MediaRef, needs: MediaRequirements | undefined): Promise<MediaRef> {
  if (!needs || !ref.mimeType.startsWith('image/')) return ref;
  const db = deps.store.db;
  const original = await db.selectFrom('media').selectAll().where('id', '=', ref.id).executeTakeFirst();
  if (!original) throw new PublishError('refused', `The media ${ref.id} no longer exists; upload it again.`);
  if (fits(original, needs)) return ref;

  const target = targetType(original.mime_type, needs);
  const spec = `${target};side=${needs.maxImageSide ?? '-'};bytes=${needs.maxImageBytes ?? '-'}`;
  const cached = await db.selectFrom('media_variants').selectAll().where('media_id', '=', original.id).where('spec', '=', spec).executeTakeFirst();
  if (cached && (await deps.storage.stat(cached.storage_key))) return variantRef(deps, original, cached);

  const made = await convert(deps, original, target, needs, spec);
  const inserted = await db
    .insertInto('media_variants')
    .values(made)
    .onConflict((oc) => oc.columns(['media_id', 'spec']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) {
    // Another worker made the same copy meanwhile (or a stale row pointed to a lost file): keep one.
    const existing = await db.selectFrom('media_variants').selectAll().where('media_id', '=', original.id).where('spec', '=', spec).executeTakeFirstOrThrow();
    if (await deps.storage.stat(existing.storage_key)) {
      await deps.storage.remove(made.storage_key).catch(() => {});
      return variantRef(deps, original, existing);
    }
    await db
      .updateTable('media_variants')
      .set({ ...made, id: existing.id })
      .where('id', '=', existing.id)
      .execute();
  }
  return variantRef(deps, original, made);
}

function fits(row: MediaRow, needs: MediaRequirements): boolean {
  if (needs.imageTypes && !needs.imageTypes.includes(row.mime_type)) return false;
  if (needs.maxImageBytes !== undefined && row.size > needs.maxImageBytes) return false;
  if (needs.maxImageSide !== undefined) {
    // Without known sides (an image sharp could not measure) it cannot be shown to fit.
    if (row.width === null || row.height === null) return false;
    if (Math.max(row.width, row.height) > needs.maxImageSide) return false;
  }
  return true;
}

/** Keeps the type when the network takes it and sharp can write it; else JPEG, PNG or WebP, as the network accepts. */
function targetType(mime: string, needs: MediaRequirements): string {
  const accepted = (type: string) => !needs.imageTypes || needs.imageTypes.includes(type);
  if (WRITABLE[mime] && accepted(mime)) return mime;
  const choice = Object.keys(WRITABLE).find(accepted);
  if (!choice) throw new PublishError('refused', `The network accepts only ${needs.imageTypes!.join(', ')}, which Herald cannot convert images to.`);
  return choice;
}

function variantRef(deps: PrepareDeps, original: MediaRow, variant: MediaVariantRow): MediaRef {
  return mediaRef(deps, { ...variant, id: original.id, alt: original.alt, duration: null });
}

/** Writes the converted copy, smaller and smaller until it fits the byte limit, and stores it. */
async function convert(deps: PrepareDeps, original: MediaRow, target: string, needs: MediaRequirements, spec: string): Promise<MediaVariantRow> {
  const { ext } = WRITABLE[target];
  const work = path.join(deps.storage.tempDir, newId());
  const source = `${work}-source`;
  const output = `${work}-out.${ext}`;
  try {
    // A local copy of the original: sharp reads files, and the store may be a bucket.
    try {
      await pipeline(await deps.storage.open(original.storage_key), fs.createWriteStream(source));
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT')
        throw new PublishError('refused', `The file of media ${original.id} is missing from storage; upload it again.`);
      throw new PublishError('retryable', `Reading media ${original.id} from storage failed: ${(err as Error).message}`);
    }
    let info;
    try {
      info = await shrinkToFit(source, original, target, needs, output);
    } catch (err) {
      throw new PublishError('refused', `The image ${original.original_name} could not be converted for this network (${(err as Error).message}).`);
    }
    if (needs.maxImageBytes !== undefined && info.size > needs.maxImageBytes) {
      throw new PublishError('refused', `The image ${original.original_name} could not be made smaller than the network's ${needs.maxImageBytes} bytes.`);
    }
    const key = `${path.posix.dirname(original.storage_key)}/${original.id}-${crypto.createHash('sha256').update(spec).digest('hex').slice(0, 12)}.${ext}`;
    try {
      await deps.storage.put(output, key, target);
    } catch (err) {
      throw new PublishError('retryable', `Storing the converted copy of media ${original.id} failed: ${(err as Error).message}`);
    }
    return {
      id: newId(),
      media_id: original.id,
      spec,
      storage_key: key,
      url: deps.media.urlOf(key),
      mime_type: target,
      size: info.size,
      width: info.width,
      height: info.height,
      created_at: Date.now(),
    };
  } finally {
    await Promise.all([fs.promises.rm(source, { force: true }), fs.promises.rm(output, { force: true })]);
  }
}

/** Lower quality first, then smaller sides, until the copy fits `maxImageBytes` (or the tries run out). */
async function shrinkToFit(source: string, original: MediaRow, target: string, needs: MediaRequirements, output: string) {
  const { lossy, encode } = WRITABLE[target];
  const limit = needs.maxImageBytes ?? Infinity;
  let side = needs.maxImageSide ?? 0;
  let info = { size: 0, width: 0, height: 0 };
  for (let shrink = 0; shrink <= MAX_SHRINKS; shrink++) {
    for (const quality of lossy ? QUALITIES : [100]) {
      let image = (await openImage(source, original.mime_type)).rotate();
      if (side > 0) image = image.resize(side, side, { fit: 'inside', withoutEnlargement: true });
      info = await encode(image, quality).toFile(output);
      if (info.size <= limit) return info;
      // Far over the limit: lower quality alone will not do, go straight to smaller sides.
      if (info.size > limit * 3) break;
    }
    // Bytes grow roughly with the area, so the sides shrink with the square root of the excess.
    side = Math.floor(Math.max(info.width, info.height) * Math.min(SHRINK, Math.sqrt(limit / info.size)));
    if (side < 16) break;
  }
  return info;
}
