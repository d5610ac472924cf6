/**
 * Uploaded media: streamed to a temporary file while the type is read from the
 * first bytes and the size cap is enforced, inspected there (dimensions,
 * duration, thumbnail; a damaged image is refused), then moved into storage
 * under a random name. Nothing is kept when anything fails. Also the media
 * library: listing, and deleting what no scheduled post or repeating post
 * (series) still needs.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Database, MediaRow, MediaVariantRow, PostRow, PostSeriesRow } from '../db/schema.ts';
import { iso } from '../lib/time.ts';
import { newId } from '../lib/ids.ts';
import { DamagedFile, inspectImage, inspectVideo, type Inspection } from '../media/inspect.ts';
import type { MediaStorage } from '../media/storage.ts';
import { ApiError, notFound } from './errors.ts';
import { MEDIA_PAGE_SIZE } from '../contract/media.ts';
import type { MediaLookup } from './posts/posts.ts';
import { nextOccurrences, type RepeatRule } from './series/series-rule.ts';

export type MediaKind = 'image' | 'video';

const ACCEPTED: Record<string, MediaKind> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/gif': 'image',
  'image/webp': 'image',
  'image/avif': 'image',
  'image/bmp': 'image',
  'image/tiff': 'image',
  'video/mp4': 'video',
  'video/quicktime': 'video',
  'video/webm': 'video',
};
/** How the types are named to people, in the order ACCEPTED lists them. */
const TYPE_NAMES: Record<string, string> = {
  'image/jpeg': 'JPEG',
  'image/png': 'PNG',
  'image/gif': 'GIF',
  'image/webp': 'WebP',
  'image/avif': 'AVIF',
  'image/bmp': 'BMP',
  'image/tiff': 'TIFF',
  'video/mp4': 'MP4',
  'video/quicktime': 'MOV',
  'video/webm': 'WebM',
};
const ALL_KINDS: readonly MediaKind[] = ['image', 'video'];

/** "JPEG, PNG, … or WebM": the types of these kinds. */
function typeList(kinds: readonly MediaKind[]): string {
  const names = Object.keys(ACCEPTED)
    .filter((mime) => kinds.includes(ACCEPTED[mime]))
    .map((mime) => TYPE_NAMES[mime]);
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}
const SNIFF_BYTES = 4100;

/** file-type, loaded with the first upload: it is costly to load, and most processes never sniff a file. */
const loadFileType = () => import('file-type');
const WRITE_BUFFER_BYTES = 1024 * 1024;
// The library's page size is part of the contract (the route's default limit).
export { MEDIA_PAGE_SIZE } from '../contract/media.ts';
/** URLs looked up per query (SQLite and PostgreSQL cap the parameters of one statement). */
const LOOKUP_SLICE = 500;

/** One place a file is used, as the library shows it: a post (the root of its thread), or a series still to come. */
export type MediaUse =
  | { kind: 'post'; id: string; state: PostRow['state']; publishDate: string; channel: string }
  | { kind: 'series'; id: string; name: string | null; nextDate: string };

/** The part of a series' stored post (series.ts) that names its files. */
interface SeriesMedia {
  posts: { value: { image: { path: string }[] }[] }[];
}

/** "1 scheduled post", "3 scheduled posts". */
function counted(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/** Up to ten ids, then "...". */
function someIds(ids: string[]): string {
  return `${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', ...' : ''}`;
}

export interface StoredUpload {
  media: MediaRow;
  /** SHA-256 of the bytes and name, for Idempotency-Key comparison (when asked for). */
  contentHash?: string;
}

export function mediaView(row: MediaRow) {
  return {
    id: row.id,
    name: row.name,
    originalName: row.original_name,
    path: row.url,
    thumbnail: row.thumbnail_url,
    alt: row.alt,
    mimeType: row.mime_type,
    size: row.size,
    width: row.width,
    height: row.height,
    duration: row.duration,
    tags: JSON.parse(row.tags) as string[],
  };
}

/** Reads the type from the first bytes, then holds the stream to that type's size cap. */
class SniffAndCap extends Transform {
  private head: Buffer[] = [];
  private headLength = 0;
  private cap: number;
  /** Bytes seen so far. */
  seen = 0;
  mime?: string;
  /** Only when a fingerprint is wanted (Idempotency-Key): hashing costs about as much as the rest of an upload. */
  readonly hash: crypto.Hash | undefined;

  /**
   * `declared`: the length the sender announced, refused as soon as the type (and so the cap) is known;
   * `kinds`: the kinds taken here (a feed item's image: only images).
   */
  constructor(
    private readonly caps: { image: number; video: number },
    private readonly declared?: number,
    withHash = true,
    private readonly kinds: readonly MediaKind[] = ALL_KINDS,
  ) {
    super({ highWaterMark: WRITE_BUFFER_BYTES });
    this.cap = Math.max(...kinds.map((k) => caps[k]));
    this.hash = withHash ? crypto.createHash('sha256') : undefined;
  }

  private async decide(): Promise<void> {
    const head = Buffer.concat(this.head);
    const { fileTypeFromBuffer } = await loadFileType();
    const type = await fileTypeFromBuffer(head);
    const kind = type && ACCEPTED[type.mime];
    if (!type || !kind || !this.kinds.includes(kind)) {
      throw new ApiError(
        'unsupported_media_type',
        `file: ${type ? `type ${type.mime} is` : 'this content is'} not accepted${this.kinds.length < ALL_KINDS.length ? ' here' : ''}; upload ${typeList(this.kinds)}`,
        [{ path: 'file', message: 'unsupported file type (detected from its bytes)' }],
      );
    }
    this.mime = type.mime;
    this.cap = this.caps[kind];
    this.checkCap(Math.max(this.seen, this.declared ?? 0));
    this.push(head);
    this.head = [];
  }

  private checkCap(size = this.seen): void {
    if (size > this.cap) {
      throw new ApiError('file_too_large', `file: larger than the ${describeBytes(this.cap)} allowed for this type`, [
        { path: 'file', message: `must be at most ${this.cap} bytes` },
      ]);
    }
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    this.hash?.update(chunk);
    if (this.mime) {
      try {
        this.checkCap();
      } catch (err) {
        done(err as Error);
        return;
      }
      done(null, chunk);
      return;
    }
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < SNIFF_BYTES) {
      done();
      return;
    }
    this.decide().then(() => done(), done);
  }

  override _flush(done: (err?: Error | null) => void): void {
    if (this.mime) {
      done();
      return;
    }
    if (this.headLength === 0) {
      done(new ApiError('empty_file', 'file: is empty', [{ path: 'file', message: 'must not be empty' }]));
      return;
    }
    this.decide().then(() => done(), done);
  }
}

/** "10 MB", "1 GB", "512 KB": caps as people say them. */
export function describeBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GB', 1024 ** 3],
    ['MB', 1024 ** 2],
    ['KB', 1024],
  ] as const) {
    if (bytes >= size) return `${Math.round((bytes / size) * 10) / 10} ${unit}`;
  }
  return `${bytes} bytes`;
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
  'video/webm': 'webm',
};

/** A display name that is safe to show: no folders, control characters or NULs. */
export function cleanName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255);
  return cleaned || 'upload';
}

/** An upload's fingerprint for Idempotency-Key: its bytes (already in `hash`) and its cleaned name. */
function fingerprint(hash: crypto.Hash, originalName: string | undefined): string {
  return hash.update(`\0${cleanName(originalName)}`).digest('hex');
}

/** The fingerprint `store` computes, without storing anything (for a repeated Idempotency-Key). */
export async function uploadFingerprint(stream: Readable, originalName: string | undefined): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return fingerprint(hash, originalName);
}

export interface MediaOptions {
  uploadUrl: string;
  maxImageBytes: number;
  maxVideoBytes: number;
}

export class Media implements MediaLookup {
  constructor(
    private readonly db: Kysely<Database>,
    readonly storage: MediaStorage,
    private readonly options: MediaOptions,
  ) {}

  /** The address of a stored key on the upload host. */
  urlOf(key: string): string {
    return `${this.options.uploadUrl}/${key}`;
  }

  /** The largest file of these kinds the library takes. */
  largestBytes(kinds: readonly MediaKind[] = ALL_KINDS): number {
    return Math.max(...kinds.map((k) => (k === 'image' ? this.options.maxImageBytes : this.options.maxVideoBytes)));
  }

  /**
   * `options.declaredBytes`: the sender's announced length; `options.fingerprint`: compute `contentHash` (for Idempotency-Key);
   * `options.kinds`: take only these kinds (415 for the others, before anything is kept).
   */
  async store(
    accountId: string,
    source: Readable,
    originalName: string | undefined,
    options: { declaredBytes?: number; fingerprint?: boolean; kinds?: readonly MediaKind[] } = {},
  ): Promise<StoredUpload> {
    const id = newId();
    const temp = path.join(this.storage.tempDir, id);
    const thumbTemp = `${temp}-thumb.jpg`;
    const sniff = new SniffAndCap(
      { image: this.options.maxImageBytes, video: this.options.maxVideoBytes },
      options.declaredBytes,
      options.fingerprint ?? true,
      options.kinds ?? ALL_KINDS,
    );
    const stored: string[] = [];
    try {
      // Large write buffers: each file write is a round trip to libuv's thread pool, and the
      // socket is paused while one is pending (the memory use stays bounded by these sizes).
      // Opened before the pipeline starts, so a failure can never leave it to be created after the clean-up.
      const file = await fs.promises.open(temp, 'wx', 0o640);
      await pipeline(source, sniff, file.createWriteStream({ highWaterMark: WRITE_BUFFER_BYTES }));
      const mime = sniff.mime!;
      const seen = await inspect(mime, temp, thumbTemp);
      const now = new Date();
      const name = `${id}.${EXTENSIONS[mime]}`;
      const folder = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
      const key = `${folder}/${name}`;
      await this.storage.put(temp, key, mime);
      stored.push(key);
      let thumbnail: MediaVariantRow | null = null;
      if (seen.thumbnail) {
        const thumbKey = `${folder}/${id}-thumb.jpg`;
        await this.storage.put(seen.thumbnail.file, thumbKey, 'image/jpeg');
        stored.push(thumbKey);
        thumbnail = {
          id: newId(),
          media_id: id,
          spec: THUMBNAIL_SPEC,
          storage_key: thumbKey,
          url: this.urlOf(thumbKey),
          mime_type: 'image/jpeg',
          size: seen.thumbnail.size,
          width: seen.thumbnail.width,
          height: seen.thumbnail.height,
          created_at: now.getTime(),
        };
      }
      const row: MediaRow = {
        id,
        account_id: accountId,
        name,
        original_name: cleanName(originalName),
        storage_key: key,
        url: this.urlOf(key),
        mime_type: mime,
        size: sniff.seen,
        width: seen.width,
        height: seen.height,
        duration: seen.duration,
        alt: null,
        tags: '[]',
        thumbnail_url: thumbnail?.url ?? null,
        created_at: now.getTime(),
        deleted_at: null,
      };
      await this.db.transaction().execute(async (tx) => {
        await tx.insertInto('media').values(row).execute();
        if (thumbnail) await tx.insertInto('media_variants').values(thumbnail).execute();
      });
      return { media: row, contentHash: sniff.hash ? fingerprint(sniff.hash, originalName) : undefined };
    } catch (err) {
      await Promise.all([
        fs.promises.rm(temp, { force: true }),
        fs.promises.rm(thumbTemp, { force: true }),
        ...stored.map((key) => this.storage.remove(key).catch(() => {})),
      ]);
      throw err;
    }
  }

  /** One page of the account's media library, newest first. */
  async page(
    accountId: string,
    page: number,
    limit = MEDIA_PAGE_SIZE,
    tag?: string,
  ): Promise<{ media: MediaRow[]; total: number; page: number; limit: number; hasMore: boolean }> {
    let live = this.db.selectFrom('media').where('account_id', '=', accountId).where('deleted_at', 'is', null);
    // tags is JSON text of names that MEDIA_TAG (contract/media.ts) allows: no quote, %, _ or backslash to escape.
    if (tag !== undefined) live = live.where('tags', 'like', `%${JSON.stringify(tag)}%`);
    const [rows, count] = await Promise.all([
      live
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(limit)
        .offset(page * limit)
        .execute(),
      live.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    const total = Number(count.n);
    return { media: rows, total, page, limit, hasMore: (page + 1) * limit < total };
  }

  /** The account's media with this id, or a 404. Another account's media is as absent as a missing one. */
  async get(accountId: string, id: string): Promise<MediaRow> {
    const row = await this.db
      .selectFrom('media')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('Media', id);
    return row;
  }

  /** Sets the file's description for people who cannot see it (alt text; empty clears it) and its tags. */
  async describe(accountId: string, id: string, change: { alt?: string; tags?: string[] }): Promise<MediaRow> {
    const row = await this.get(accountId, id);
    const set: Partial<Pick<MediaRow, 'alt' | 'tags'>> = {};
    if (change.alt !== undefined) set.alt = change.alt.trim() || null;
    if (change.tags !== undefined) set.tags = JSON.stringify([...new Set(change.tags.map((t) => t.trim()))].sort());
    if (Object.keys(set).length > 0) await this.db.updateTable('media').set(set).where('id', '=', row.id).execute();
    return { ...row, ...set };
  }

  /**
   * Deletes the file, its thumbnail and converted copies. Refused while a scheduled
   * post uses it, since that post would go out without it, and while a series with
   * occurrences still to come repeats a post that carries it, since those could
   * not be created.
   */
  async remove(accountId: string, id: string): Promise<MediaRow> {
    const row = await this.get(accountId, id);
    const [posts, series] = await Promise.all([this.postsUsing(accountId, row.id, 'QUEUE'), this.seriesUsing(accountId, row.url)]);
    if (posts.length > 0 || series.length > 0) {
      const seriesIds = series.map((s) => s.id);
      const users = [
        ...(posts.length > 0 ? [`${counted(posts.length, 'scheduled post')} (${someIds(posts)})`] : []),
        ...(series.length > 0 ? [`${counted(series.length, 'repeating post')} (series ${someIds(seriesIds)})`] : []),
      ];
      const fixes = [
        ...(posts.length > 0 ? ['delete those posts or remove the media from them'] : []),
        ...(series.length > 0 ? ['stop those series or change the post they repeat'] : []),
      ];
      throw new ApiError('media_in_use', `Media ${row.id} is used by ${users.join(' and ')}; ${fixes.join(', and ')} first`, [
        ...(posts.length > 0 ? [{ path: 'id', message: `is used by scheduled posts: ${someIds(posts)}` }] : []),
        ...(series.length > 0 ? [{ path: 'id', message: `is used by repeating posts (series): ${someIds(seriesIds)}` }] : []),
      ]);
    }
    const now = Date.now();
    const marked = await this.db.updateTable('media').set({ deleted_at: now }).where('id', '=', row.id).where('deleted_at', 'is', null).executeTakeFirst();
    if (Number(marked.numUpdatedRows) === 0) throw notFound('Media', id);
    const variants = await this.variants(row.id);
    await this.db.deleteFrom('media_variants').where('media_id', '=', row.id).execute();
    await Promise.all([row.storage_key, ...variants.map((v) => v.storage_key)].map((key) => this.storage.remove(key)));
    return { ...row, deleted_at: now };
  }

  /**
   * Where a file is used: the series still to come whose post carries it (next
   * occurrence first), then the posts (thread roots) whose items carry it, newest
   * first, with their channel.
   */
  async usage(accountId: string, mediaId: string): Promise<MediaUse[]> {
    const media = await this.get(accountId, mediaId);
    const [roots, series] = await Promise.all([this.postsUsing(accountId, mediaId), this.seriesUsing(accountId, media.url)]);
    const rows =
      roots.length === 0
        ? []
        : await this.db
            .selectFrom('posts')
            .innerJoin('channels', 'channels.id', 'posts.channel_id')
            .select(['posts.id', 'posts.state', 'posts.publish_at', 'channels.name'])
            .where('posts.id', 'in', roots)
            .orderBy('posts.publish_at', 'desc')
            .execute();
    return [
      ...series.sort((a, b) => a.next - b.next).map((s) => ({ kind: 'series' as const, id: s.id, name: s.name, nextDate: iso(s.next) })),
      ...rows.map((r) => ({ kind: 'post' as const, id: r.id, state: r.state, publishDate: iso(r.publish_at), channel: r.name })),
    ];
  }

  /** The account's series with occurrences still to come whose post carries the file at `url`, with their next occurrence. */
  private async seriesUsing(accountId: string, url: string, now = Date.now()): Promise<{ id: string; name: string | null; next: number }[]> {
    // A series' post names its files by path (the media's URL), as POST /posts takes them. LIKE only narrows
    // (a URL may hold "_", a wildcard); the path is then compared exactly.
    const rows: Pick<PostSeriesRow, 'id' | 'name' | 'rule' | 'template'>[] = await this.db
      .selectFrom('post_series')
      .select(['id', 'name', 'rule', 'template'])
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .where('template', 'like', `%${JSON.stringify(url)}%`)
      .execute();
    return rows.flatMap((row) => {
      const template = JSON.parse(row.template) as SeriesMedia;
      if (!template.posts.some((p) => p.value.some((v) => v.image.some((m) => m.path === url)))) return [];
      // A series that ended creates nothing more: it no longer needs the file.
      const [next] = nextOccurrences(JSON.parse(row.rule) as RepeatRule, now, 1);
      return next ? [{ id: row.id, name: row.name, next: next.at }] : [];
    });
  }

  /** Ids of the posts (thread roots) whose items carry the file, optionally only items in `state`. */
  private async postsUsing(accountId: string, mediaId: string, state?: PostRow['state']): Promise<string[]> {
    // posts.media is JSON text written by Herald: [{"id":"...","path":"..."}]; ids are UUIDs, so no LIKE wildcards.
    let query = this.db
      .selectFrom('posts')
      .select(['id', 'root_id'])
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .where('media', 'like', `%"id":${JSON.stringify(mediaId)}%`);
    if (state) query = query.where('state', '=', state);
    return [...new Set((await query.execute()).map((r) => r.root_id ?? r.id))];
  }

  async variants(mediaId: string): Promise<MediaVariantRow[]> {
    return this.db.selectFrom('media_variants').selectAll().where('media_id', '=', mediaId).execute();
  }

  async byUrls(accountId: string, urls: string[]) {
    const found = new Map<string, { id: string; url: string; mime_type: string; width: number | null; height: number | null }>();
    // In slices: one body may name tens of thousands of URLs, more than a statement may bind.
    for (let start = 0; start < urls.length; start += LOOKUP_SLICE) {
      const rows = await this.db
        .selectFrom('media')
        .select(['id', 'url', 'mime_type', 'width', 'height'])
        .where('account_id', '=', accountId)
        .where('deleted_at', 'is', null)
        .where('url', 'in', urls.slice(start, start + LOOKUP_SLICE))
        .execute();
      for (const row of rows) found.set(row.url, row);
    }
    return found;
  }

  async byIds(ids: string[]): Promise<MediaRow[]> {
    if (ids.length === 0) return [];
    return this.db.selectFrom('media').selectAll().where('id', 'in', ids).execute();
  }
}

export const THUMBNAIL_SPEC = 'thumbnail';

/** Reads dimensions and makes the thumbnail; a damaged image is the uploader's 400. */
async function inspect(mime: string, file: string, thumbnailFile: string): Promise<Inspection> {
  try {
    return ACCEPTED[mime] === 'image' ? await inspectImage(file, mime, thumbnailFile) : await inspectVideo(file, thumbnailFile);
  } catch (err) {
    if (!(err instanceof DamagedFile)) throw err;
    throw new ApiError('damaged_file', `file: ${err.message}`, [{ path: 'file', message: 'is damaged or cut short; upload the complete file' }]);
  }
}
