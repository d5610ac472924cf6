/**
 * Dribbble (API v2): a post is a shot, one image with a title and a description.
 * OAuth 2 with the client secret (no PKCE); tokens never expire and there is no
 * refresh, so a 401 means the person revoked Herald and must connect again.
 *
 * A shot is uploaded as multipart to POST /v2/shots; Dribbble answers 202 with
 * the shot's URL in Location and processes the image afterwards (the shot reads
 * 404 meanwhile), so the post is followed until Dribbble shows it, for its
 * final link. There is no idempotency key: after an unknown outcome the
 * account's latest shots are matched on title.
 */
import { z } from 'zod';
import { errorMessage, retryAfterMs, type NetworkAnswer, type Verdict } from '../adapter-kit/http-failures.ts';
import { mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import { authorizationUrl, requestToken } from '../adapter-kit/oauth2-tokens.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishResult, RecentPost, RuleItem } from '../types.ts';
import { PublishError } from '../errors.ts';

const SCOPES = ['public', 'upload'];
/** Dribbble's limit for a shot's image. */
const MAX_IMAGE_BYTES = 8 * 1024 * 1024;
/** How soon a processed shot is looked for. */
const PROCESSING_CHECK_MS = 3_000;
const CLOCK_SLACK_MS = 60_000;

const settings = z.object({
  title: z.string().trim().min(1).describe('Title of the shot (required)'),
  team: z
    .string()
    .min(1)
    .optional()
    .describe('Post the shot for a team you belong to: its id (see the teams tool), login or dribbble.com address; your own profile without it'),
});
type Settings = z.infer<typeof settings>;

interface Config {
  accessToken: string;
  userId: string;
  login: string;
}

interface Team {
  id: number | string;
  name?: string;
  login?: string;
  html_url?: string;
  avatar_url?: string;
}

interface User {
  id: number | string;
  name?: string;
  login: string;
  avatar_url?: string;
  html_url?: string;
  can_upload_shot?: boolean;
  teams?: Team[];
}

interface Shot {
  id: number | string;
  title?: string;
  description?: string | null;
  html_url?: string;
  published_at?: string;
}

/** Dribbble's 429 gives the end of the window as X-RateLimit-Reset (epoch seconds); its 422 lists the fields at fault. */
function readAnswer({ ok, status, headers, body }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  if (status === 429) {
    const reset = Number(headers.get('x-ratelimit-reset'));
    const wait = retryAfterMs(headers.get('retry-after')) ?? (Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - Date.now()) : undefined);
    return { kind: 'retryable', retryAfterMs: wait };
  }
  const fields = (Array.isArray(body?.errors) ? body.errors : [])
    .map((e: { attribute?: string; message?: string }) => [e.attribute, e.message].filter(Boolean).join(' '))
    .filter(Boolean);
  const message = typeof body?.message === 'string' ? body.message : errorMessage(body);
  const detail = fields.length > 0 ? `${message ?? 'Validation failed.'} (${fields.join('; ')})` : message;
  if (status === 403) {
    return {
      kind: 'refused',
      detail:
        `${detail ?? 'Forbidden'}. Dribbble lets only accounts allowed to upload shots post through its API, ` +
        'with the "upload" permission, and for a team only its members.',
    };
  }
  return detail ? { detail } : undefined;
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

function config(channel: PublishChannel<Config>): Config {
  return channel.config;
}

async function me(ctx: NetworkContext, token: string): Promise<User> {
  return ctx.http.json<User>(`${ctx.urls.api}/v2/user`, { headers: bearer(token) });
}

/**
 * The team_id to send: a number as given, else the team of the user's whose
 * login or address it is (older clients send the team's URL).
 */
async function teamId(ctx: NetworkContext, cfg: Config, team: string | undefined): Promise<string | undefined> {
  const wanted = team?.trim();
  if (!wanted) return undefined;
  if (/^\d+$/.test(wanted)) return wanted;
  const login = wanted.replace(/^https?:\/\/(www\.)?dribbble\.com\//i, '').replace(/\/+$/, '');
  const found = ((await me(ctx, cfg.accessToken)).teams ?? []).find((t) => t.login === login || t.html_url === wanted);
  if (!found) throw new PublishError('refused', `the Dribbble team "${wanted}" is not one of yours; pick one of the teams tool's ids`);
  return String(found.id);
}

/**
 * Dribbble takes 4:3 images of 400×300, 800×600 and larger multiples. Checked when
 * the post is accepted (the library knows the size), and again before uploading.
 */
function dimensionsProblem(image: { width?: number | null; height?: number | null }): string | undefined {
  const { width, height } = image;
  if (!width || !height) return undefined;
  if (width * 3 === height * 4 && width % 400 === 0) return undefined;
  return `is ${width}×${height}, but Dribbble takes 4:3 images of 400×300, 800×600 or a larger multiple`;
}

function checkDimensions(image: MediaRef): void {
  const problem = dimensionsProblem(image);
  if (problem) throw new PublishError('refused', `The image ${problem}`);
}

function check(item: RuleItem): { field: 'image'; message: string }[] {
  return item.media.flatMap((m) => {
    const problem = m.mimeType.startsWith('image/') ? dimensionsProblem(m) : undefined;
    return problem ? [{ field: 'image' as const, message: problem }] : [];
  });
}

function shotUrl(id: string): string {
  return `https://dribbble.com/shots/${id}`;
}

/** The account's latest shots, newest first. */
async function latestShots(ctx: NetworkContext, cfg: Config, perPage: number): Promise<Shot[]> {
  return (await ctx.http.json<Shot[]>(`${ctx.urls.api}/v2/user/shots`, { headers: bearer(cfg.accessToken), query: { per_page: perPage } })) ?? [];
}

export const dribbble: Provider<Config> = {
  identifier: 'dribbble',
  name: 'Dribbble',
  auth: 'oauth2',
  readAnswer,
  urls: { auth: 'https://dribbble.com', api: 'https://api.dribbble.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  connectNote:
    'Only Dribbble accounts allowed to upload shots (players and teams) can post through its API, and the Herald app needs the "upload" permission from ' +
    'Dribbble. Each post is one 4:3 image (400×300, 800×600 or a larger multiple) with a title.',
  settings,
  rules: {
    maxLength: 40_000,
    maxMedia: 1,
    minMedia: 1,
    mediaKinds: ['image'],
    threads: false,
    media: { imageTypes: ['image/gif', 'image/jpeg', 'image/png'], maxImageBytes: MAX_IMAGE_BYTES },
    check,
  },
  // Per user: 60 requests a minute, 1,440 a day.
  pacing: { concurrent: 3, perChannel: { count: 60, windowMs: 60_000 } },

  oauth: {
    async start({ urls, app, state, redirectUri }) {
      return { url: authorizationUrl(`${urls.auth}/oauth/authorize`, { clientId: app.CLIENT_ID, redirectUri, state, scopes: SCOPES }) };
    },

    async finish(ctx) {
      const answer = await requestToken(ctx, `${ctx.urls.auth}/oauth/token`, {
        client_id: ctx.app.CLIENT_ID,
        client_secret: ctx.app.CLIENT_SECRET,
        code: ctx.query.code,
        redirect_uri: ctx.redirectUri,
      });
      const token = String(answer.access_token);
      if (
        !String(answer.scope ?? '')
          .split(/[\s+]+/)
          .includes('upload')
      ) {
        throw new PublishError(
          'refused',
          'Dribbble did not grant the "upload" permission, so Herald could not post shots; the Dribbble app must be allowed to upload',
        );
      }
      const user = await me(ctx, token);
      if (user.can_upload_shot === false) {
        throw new PublishError('refused', `the Dribbble account ${user.login} is not allowed to upload shots`);
      }
      const cfg: Config = { accessToken: token, userId: String(user.id), login: user.login };
      return [{ externalId: String(user.id), name: user.name || user.login, picture: user.avatar_url ?? null, profile: user.login, config: { ...cfg } }];
    },
  },

  async publish(ctx) {
    const cfg = config(ctx.channel);
    const image = ctx.item.media[0];
    if (!image?.mimeType.startsWith('image/')) throw new PublishError('refused', 'a Dribbble shot needs one image');
    checkDimensions(image);
    const s = ctx.item.settings as Partial<Settings>;
    const team = await teamId(ctx, cfg, s.team);
    const form = new FormData();
    form.append('image', await mediaBlob(image, MAX_IMAGE_BYTES, 'Dribbble'), mediaFilename(image));
    form.append('title', s.title ?? '');
    if (ctx.item.content) form.append('description', ctx.item.content);
    if (team) form.append('team_id', team);
    const answer = await ctx.http.call(`${ctx.urls.api}/v2/shots`, { method: 'POST', headers: bearer(cfg.accessToken), body: form, timeoutMs: 5 * 60_000 });
    const id = /\/shots\/([^/?#]+)/.exec(answer.headers.get('location') ?? '')?.[1];
    if (!id) throw new PublishError('unknown', `Dribbble answered ${answer.status} without the new shot's Location, so whether it was created is unknown.`);
    // Processed afterwards: followed until Dribbble shows the shot.
    return { releaseId: id, releaseUrl: shotUrl(id), followUp: { afterMs: PROCESSING_CHECK_MS } };
  },

  async followUp(ctx) {
    try {
      const shot = await ctx.http.json<Shot>(`${ctx.urls.api}/v2/shots/${encodeURIComponent(ctx.releaseId)}`, {
        headers: bearer(config(ctx.channel).accessToken),
      });
      return { state: 'done', releaseId: ctx.releaseId, releaseUrl: shot?.html_url ?? shotUrl(ctx.releaseId) };
    } catch (err) {
      // 404 while the image is processed.
      if (err instanceof PublishError && err.kind === 'refused') return { state: 'waiting', checkAfterMs: PROCESSING_CHECK_MS };
      throw err;
    }
  },

  async findPublished(ctx) {
    const cfg = config(ctx.channel);
    const title = ((ctx.item.settings as Partial<Settings>).title ?? '').trim();
    const since = ctx.item.publishAt.getTime() - CLOCK_SLACK_MS;
    const found = (await latestShots(ctx, cfg, 5)).find((s) => s.title?.trim() === title && (!s.published_at || Date.parse(s.published_at) >= since));
    if (!found) return null;
    const id = String(found.id);
    return { releaseId: id, releaseUrl: found.html_url ?? shotUrl(id) } satisfies PublishResult;
  },

  async recentPosts(ctx): Promise<RecentPost[]> {
    return (await latestShots(ctx, config(ctx.channel), 30)).map((s) => ({
      id: String(s.id),
      url: s.html_url ?? shotUrl(String(s.id)),
      text: s.title,
      ...(s.published_at ? { at: Date.parse(s.published_at) } : {}),
    }));
  },

  tools: {
    teams: {
      description: 'The Dribbble teams the account belongs to (id, name, login), for the team setting.',
      async run(ctx) {
        const user = await me(ctx, config(ctx.channel).accessToken);
        return (user.teams ?? []).map((t) => ({ id: String(t.id), name: t.name ?? t.login ?? String(t.id), login: t.login ?? null }));
      },
    },
  },
};
