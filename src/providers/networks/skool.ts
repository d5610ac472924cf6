/**
 * Skool community posts. Skool has no public API and no OAuth: Herald drives
 * the private web API (api2.skool.com) with the person's browser session
 * cookies, as Skool's own web app does. Nothing of it is documented, so it may
 * change without notice; the connect form says so (`connectNote`).
 *
 * A post goes to the group in the `group` setting, under the category in
 * `label` ("none" for none), with a `title`; later thread items become comments
 * on it. Images are uploaded first (POST /files, then the bytes to the
 * presigned URL it returns) and attached by id. A dead session (logged out,
 * password changed, expired WAF token) cannot be renewed: the channel must be
 * connected again with fresh cookies.
 */
import { z } from 'zod';
import { postSettings } from '../adapter-kit/post-settings.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import { readMedia } from '../adapter-kit/media-bytes.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishContext } from '../types.ts';
import { PublishError, NetworkRefusal } from '../errors.ts';

const NETWORK = 'Skool';
const WEB = 'https://www.skool.com';
const MAX_IMAGE_BYTES = 25 * 1024 * 1024;
/** Skool throttles writes above about 20–30 a minute per user, for minutes: wait this long without a Retry-After. */
const THROTTLE_WAIT_MS = 2 * 60_000;
/** Answers that say the person may not post there: no retry or reconnect helps. */
const NOT_ALLOWED = /must be admin or level|cannot post to this label|MISSING_CATEGORY/i;

const credentials = z.object({
  authToken: z.string().trim().min(20, 'must be the value of the auth_token cookie').describe('The auth_token cookie of skool.com, from a logged-in browser'),
  clientId: z.string().trim().min(8, 'must be the value of the client_id cookie').describe('The client_id cookie of skool.com'),
  wafToken: z
    .string()
    .trim()
    .optional()
    .describe('The aws-waf-token cookie of skool.com, when the browser has one (it lasts about 3.5 days; connect again when it expires)'),
});

const settings = z.object({
  group: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'must be a Skool group id (the "groups" tool lists them)')
    .describe('The group (community) to post in'),
  label: z
    .string()
    .regex(/^(none|[0-9a-f]{32})$/, 'must be a category id of the group (the "groups" tool lists them) or "none"')
    .describe('The category of the post, or "none" where the group has none'),
  title: z.string().trim().min(1).max(200).describe('The title of the post'),
});

interface SkoolConfig {
  authToken: string;
  clientId: string;
  wafToken?: string;
  userId: string;
}

interface Group {
  id: string;
  name: string;
  metadata?: { display_name?: string; labels?: string };
}

/**
 * A session Skool no longer accepts answers 401, or 403 from its firewall:
 * the channel must be connected again. A 403 that names a permission or a
 * category is a refusal of this post; 429 waits minutes.
 */
function readAnswer({ status, body, raw, headers }: NetworkAnswer): Verdict | undefined {
  if (status === 429) return headers.get('retry-after') ? undefined : { kind: 'retryable', retryAfterMs: THROTTLE_WAIT_MS };
  if (status === 401 || status === 403) {
    if (NOT_ALLOWED.test(raw)) return { kind: 'refused' };
    // The image storage's own refusal (S3 XML) is about the upload, not the session.
    if (/^<\?xml|^<Error>/.test(raw)) return { kind: 'refused', detail: `the image storage refused the upload: ${raw.slice(0, 300)}` };
    return {
      kind: 'auth',
      detail: `${errorText(body) ?? 'the session was refused'}: the Skool session has ended; connect the channel again with fresh cookies`,
    };
  }
  // Skool's web deploys move private endpoints: a page or a missing route means the integration needs updating, not a retry.
  if ((status === 404 || status === 405) && typeof body === 'string' && /<html/i.test(body)) {
    return { kind: 'refused', detail: `Skool answered with a web page instead of its API (its private API may have changed)` };
  }
  return undefined;
}

function errorText(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  const text = b.message ?? b.error;
  return typeof text === 'string' ? text : undefined;
}

function cookie(config: Pick<SkoolConfig, 'authToken' | 'clientId' | 'wafToken'>): string {
  return [`auth_token=${config.authToken}`, `client_id=${config.clientId}`, ...(config.wafToken ? [`aws-waf-token=${config.wafToken}`] : [])].join('; ');
}

/** A call as Skool's web app makes it: the session cookies, and its origin for writes. */
function api<T = any>(
  ctx: NetworkContext,
  config: Pick<SkoolConfig, 'authToken' | 'clientId' | 'wafToken'>,
  path: string,
  request: NetworkRequest = {},
): Promise<T> {
  return ctx.http.json<T>(`${ctx.urls.api}${path}`, {
    ...request,
    headers: { cookie: cookie(config), origin: WEB, referer: `${WEB}/`, accept: 'application/json', ...request.headers },
  });
}

function configOf(channel: PublishChannel<SkoolConfig>): SkoolConfig {
  return channel.config;
}

/** The groups the person belongs to (a few pages of 30 cover anyone's list). */
async function groupsOf(ctx: NetworkContext, config: SkoolConfig): Promise<Group[]> {
  const groups: Group[] = [];
  for (let offset = 0; offset < 300; offset += 30) {
    const page = await api<{ groups?: Group[] }>(ctx, config, `/users/${encodeURIComponent(config.userId)}/groups`, { query: { offset, limit: 30 } });
    groups.push(...(page?.groups ?? []));
    if ((page?.groups?.length ?? 0) < 30) break;
  }
  return groups;
}

/** Uploads one image: Skool makes a file record and a presigned URL, the bytes go there; nothing is posted yet. */
async function uploadImage(ctx: PublishContext<SkoolConfig>, config: SkoolConfig, media: MediaRef): Promise<string> {
  const bytes = await readMedia(media, MAX_IMAGE_BYTES, NETWORK);
  const name = `${media.id}.${media.mimeType.split('/')[1] ?? 'bin'}`;
  const target = await api<{ file?: { id?: string }; write_url?: string; content_type?: string; acl?: string }>(ctx, config, '/files', {
    method: 'POST',
    json: {
      file_name: name,
      content_type: media.mimeType,
      content_length: bytes.length,
      content_disposition: '',
      ref: '',
      owner_id: config.userId,
      large_thumbnail: false,
    },
    repeatable: true,
  });
  if (!target?.file?.id || !target.write_url) throw new PublishError('refused', 'Skool gave no place to upload the image (its private API may have changed)');
  await ctx.http.call(target.write_url, {
    method: 'PUT',
    headers: {
      'content-type': target.content_type ?? media.mimeType,
      'content-length': String(bytes.length),
      ...(target.acl ? { 'x-amz-acl': target.acl } : {}),
    },
    body: new Uint8Array(bytes),
    timeoutMs: 5 * 60_000,
  });
  return target.file.id;
}

/** A comment's release id carries its post's: "<post id>/<comment id>". */
function rootOf(releaseId: string): string {
  return releaseId.split('/')[0];
}

export const skool: Provider<SkoolConfig> = {
  identifier: 'skool',
  name: NETWORK,
  auth: 'credentials',
  urls: { api: 'https://api2.skool.com' },
  credentials,
  connectNote:
    'Skool has no official API. Herald posts with your browser session: copy the auth_token and client_id cookies (and aws-waf-token, if present) of ' +
    'skool.com from a logged-in browser. Skool may change its private API or end the session at any time (logging out, a password change, or the ' +
    'firewall token expiring after a few days), and automated posting may be against Skool’s terms; connect again when Herald asks.',
  readAnswer,
  settings,
  rules: {
    maxLength: 5000,
    // Images are attached by id; videos go through a separate flow Herald does not use.
    maxMedia: 10,
    mediaKinds: ['image'],
    // Later items become comments on the post.
    threads: true,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'], maxImageBytes: MAX_IMAGE_BYTES },
  },
  pacing: { perChannel: { count: 20, windowMs: 60_000 } },

  async connect(input, ctx) {
    const given = credentials.parse(input);
    let me: { id?: string; name?: string; first_name?: string; last_name?: string; metadata?: { picture_profile?: string } };
    try {
      me = await api(ctx, given, '/self');
    } catch (err) {
      if (err instanceof PublishError && err.kind === 'auth') {
        throw new NetworkRefusal(
          'credentials.authToken',
          `Skool did not accept these cookies (${err.message}); copy them again from a browser logged in to skool.com`,
        );
      }
      throw err;
    }
    if (!me?.id) throw new PublishError('refused', 'Skool did not say who is logged in (its private API may have changed)');
    const config: SkoolConfig = { ...given, userId: me.id };
    const fullName = [me.first_name, me.last_name].filter(Boolean).join(' ');
    return {
      externalId: me.id,
      name: fullName || me.name || 'Skool member',
      picture: me.metadata?.picture_profile ?? null,
      profile: me.name ?? null,
      config: { ...config },
    };
  },

  async publish(ctx) {
    const config = configOf(ctx.channel);
    const s = postSettings(settings, ctx.item, NETWORK);
    const attachments: string[] = [];
    for (const media of ctx.item.media) attachments.push(await uploadImage(ctx, config, media));

    if (ctx.replyTo) {
      const root = rootOf(ctx.replyTo.releaseId);
      const comment = await api<{ id?: string }>(ctx, config, '/posts', {
        method: 'POST',
        query: { follow: 'true' },
        json: {
          post_type: 'comment',
          group_id: s.group,
          root_id: root,
          parent_id: root,
          metadata: { title: '', content: ctx.item.content, attachments: attachments.join(','), action: 0, video_ids: '' },
        },
      });
      if (!comment?.id) throw new PublishError('unknown', 'Skool took the comment but did not say its id. Check the post before retrying.');
      return { releaseId: `${root}/${comment.id}`, releaseUrl: null };
    }

    const post = await api<{ id?: string; name?: string }>(ctx, config, '/posts', {
      method: 'POST',
      query: { follow: 'true' },
      json: {
        post_type: 'generic',
        group_id: s.group,
        metadata: {
          title: s.title,
          content: ctx.item.content,
          attachments: attachments.join(','),
          ...(s.label !== 'none' ? { labels: s.label } : {}),
          action: 0,
          video_ids: '',
        },
      },
    });
    if (!post?.id) throw new PublishError('unknown', 'Skool took the post but did not say its id. Check the group before retrying.');
    // The link uses the group's slug, which only the group list tells; without it the post still went out.
    const slug = await groupsOf(ctx, config)
      .then((groups) => groups.find((g) => g.id === s.group)?.name)
      .catch(() => undefined);
    return { releaseId: post.id, releaseUrl: slug && post.name ? `${WEB}/${slug}/${post.name}` : null };
  },

  tools: {
    groups: {
      description: 'List the Skool groups of the connected member with their categories (ids for the `group` and `label` settings).',
      async run(ctx) {
        const config = configOf(ctx.channel);
        const groups = await groupsOf(ctx, config);
        const result: { id: string; name: string; slug: string; labels: { id: string; name: string }[] }[] = [];
        for (const group of groups) {
          const full = await api<Group>(ctx, config, `/groups/${encodeURIComponent(group.id)}`);
          const ids = (full?.metadata?.labels ?? '').split(',').filter(Boolean);
          const labels: { id: string; name: string }[] = [];
          for (const id of ids) {
            const label = await api<{ id: string; metadata?: { display_name?: string } }>(ctx, config, `/labels/${encodeURIComponent(id)}`);
            labels.push({ id, name: label?.metadata?.display_name ?? id });
          }
          result.push({ id: group.id, name: group.metadata?.display_name ?? group.name, slug: group.name, labels });
        }
        return result;
      },
    },
  },
};
