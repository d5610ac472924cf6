/**
 * Reddit (Data API): OAuth 2 with the client in HTTP Basic and duration=permanent
 * for a refresh token. A post is submitted to each subreddit in the settings
 * (self, link or media post); thread items become comments. Reddit answers 200
 * even when it refuses, with json.errors; those are classified here. Every
 * request carries the descriptive User-Agent Reddit requires.
 */
import { z } from 'zod';
import { mediaBlob, mediaFilename } from '../adapter-kit/media-bytes.ts';
import type { NetworkAnswer, Verdict } from '../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../adapter-kit/network-http.ts';
import { authorizationUrl, needRefreshToken, requestToken, tokenFields } from '../adapter-kit/oauth2-tokens.ts';
import { waitForProcessing } from '../adapter-kit/processing-wait.ts';
import type { MediaRef, NetworkContext, Provider, PublishChannel, PublishContext, PublishResult, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';

// history: the user's submitted listing (finding media posts, recent posts) needs it.
const SCOPES = ['identity', 'submit', 'read', 'flair', 'history'];
const MEDIA_BYTES = 1024 * 1024 * 1024;

const target = z
  .object({
    subreddit: z.string().regex(/^(?:\/?r\/)?[A-Za-z0-9_]{2,21}$/, { error: 'must be a subreddit name such as "test" or "r/test"' }),
    title: z.string().min(1).max(300),
    type: z.enum(['self', 'link', 'media']).default('self'),
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    is_flair_required: z.boolean().optional(),
    flair: z.object({ id: z.string().min(1), name: z.string().optional() }).nullish(),
  })
  .refine((t) => t.type !== 'link' || t.url, { error: 'a link post needs url', path: ['url'] })
  .refine((t) => !t.is_flair_required || t.flair, { error: 'this subreddit requires a flair', path: ['flair'] });

const settings = z.object({
  subreddit: z
    .array(z.object({ value: target }))
    .min(1, { error: 'needs at least one subreddit' })
    .max(10)
    .describe('Subreddits to submit to, each with its title and post type'),
});

type Target = z.infer<typeof target>;

/** The tokens and account a Reddit channel stores at connect. */
interface RedditConfig extends TokenConfig {
  accessToken: string;
  username: string;
}

/** Reddit's required form "<platform>:<app ID>:<version> (by /u/<username>)": this server's app id, Herald's agent version, the account as contact. */
function userAgent(ctx: NetworkContext, username?: string): string {
  return `web:herald-${ctx.app.CLIENT_ID}:v1 (by /u/${username ?? 'herald'})`;
}

function api(ctx: NetworkContext, channel: PublishChannel<RedditConfig>, path: string, request: NetworkRequest = {}) {
  const config = channel.config;
  const headers = { authorization: `bearer ${config.accessToken}`, 'user-agent': userAgent(ctx, config.username), ...request.headers };
  return ctx.http.json(`${ctx.urls.api}${path}`, { ...request, headers });
}

/** Reddit's json.errors, in a 200 answer: [[CODE, message, field], ...]. RATELIMIT waits as long as Reddit says. */
function readAnswer({ status, headers, body }: NetworkAnswer): Verdict | undefined {
  // A channel connected before Herald asked for a scope: only connecting again grants it.
  if (status === 403 && /insufficient_scope/.test(headers.get('www-authenticate') ?? '')) {
    return {
      kind: 'refused',
      code: 'insufficient_scope',
      detail: 'insufficient_scope: the channel was connected without a permission this needs; connect it again',
    };
  }
  const errors: [string, string, string?][] = body?.json?.errors ?? [];
  if (errors.length === 0) return undefined;
  const [code, message, field] = errors[0];
  const detail = `${code}: ${message}${field ? ` (${field})` : ''}`;
  if (code === 'RATELIMIT') {
    const m = /(\d+)\s*(second|minute)/i.exec(message);
    return { kind: 'retryable', detail, code, retryAfterMs: m ? Number(m[1]) * (m[2].toLowerCase() === 'minute' ? 60_000 : 1000) : 60_000 };
  }
  return { kind: 'refused', detail, code };
}

/** Uploads a file to Reddit's media store; the answer is the URL to submit. */
async function uploadMedia(ctx: PublishContext<RedditConfig>, media: MediaRef): Promise<string> {
  const lease = await api(ctx, ctx.channel, '/api/media/asset.json', {
    method: 'POST',
    form: { filepath: mediaFilename(media), mimetype: media.mimeType },
    repeatable: true,
  });
  const action: string = lease?.args?.action;
  if (!action) throw new PublishError('refused', 'Reddit gave no upload target for the media');
  // The action is protocol-relative ("//bucket.s3..."): it takes the API's scheme.
  const uploadUrl = new URL(action, ctx.urls.api).toString();
  const form = new FormData();
  for (const { name, value } of lease.args.fields as { name: string; value: string }[]) form.append(name, value);
  form.append('file', await mediaBlob(media, MEDIA_BYTES, 'Reddit'), mediaFilename(media));
  // The media store holds the file; nothing is posted until submit.
  const stored = await ctx.http.call(uploadUrl, { method: 'POST', body: form, timeoutMs: 300_000, repeatable: true });
  const location = /<Location>([^<]+)<\/Location>/.exec(stored.raw)?.[1];
  const key = (lease.args.fields as { name: string; value: string }[]).find((f) => f.name === 'key')?.value;
  const url = location ? decodeURIComponent(location) : key ? `${uploadUrl.replace(/\/$/, '')}/${key}` : undefined;
  if (!url) throw new PublishError('refused', 'Reddit’s media store did not say where the file is');
  return url;
}

function subredditName(t: Target): string {
  return t.subreddit.replace(/^\/?r\//, '');
}

interface Submission {
  name: string;
  subreddit: string;
  title: string;
  permalink: string;
  created_utc: number;
}

/** The user's latest submissions, newest first (GET /user/<name>/submitted). */
async function submitted(ctx: NetworkContext, channel: PublishChannel<RedditConfig>, limit: number): Promise<Submission[]> {
  const config = channel.config;
  const listing = await api(ctx, channel, `/user/${encodeURIComponent(config.username)}/submitted`, { query: { sort: 'new', limit, raw_json: 1 } });
  return (listing?.data?.children ?? []).map((c: { data: Submission }) => c.data).filter(Boolean);
}

/** Media posts are created asynchronously: find the new post among the user's latest submissions. */
async function findSubmitted(ctx: PublishContext<RedditConfig>, sr: string, title: string, since: number): Promise<{ name: string; url: string }> {
  const config = ctx.channel.config;
  let found: { name: string; url: string } | undefined;
  try {
    await waitForProcessing(
      async () => {
        const post = (await submitted(ctx, ctx.channel, 10)).find(
          (d) => d.subreddit?.toLowerCase() === sr.toLowerCase() && d.title === title && d.created_utc * 1000 >= since - 60_000,
        );
        if (post) found = { name: post.name, url: `https://www.reddit.com${post.permalink}` };
        return found ? { done: true } : { done: false, checkAfterMs: 2_000 };
      },
      { network: 'Reddit', what: 'the media post', signal: ctx.signal },
    );
  } catch (err) {
    // Reddit accepted the submission: sending it again could post it twice, whatever went wrong while looking for it.
    if (!(err instanceof PublishError) || err.kind === 'auth') throw err;
    throw new PublishError(
      'unknown',
      `Reddit accepted the media post to r/${sr} but it has not appeared among u/${config.username}'s posts yet (${err.message}). ` +
        `It may still appear: check r/${sr} before publishing it again.`,
    );
  }
  return found!;
}

type Made = { name: string; url: string };

/**
 * What an earlier attempt of this item got from Reddit for a subreddit: the post,
 * or only that Reddit accepted it (when). An attempt cut short after that (a token
 * that expired while the post was looked for) must not submit it again.
 */
const submittedKey = (sr: string) => `reddit-submitted:${sr.toLowerCase()}`;
type Kept = Made | { acceptedAt: number };

async function submit(ctx: PublishContext<RedditConfig>, t: Target): Promise<Made> {
  const sr = subredditName(t);
  const key = submittedKey(sr);
  const kept = await ctx.progress.get(key);
  if (kept) {
    const earlier = JSON.parse(kept) as Kept;
    if ('name' in earlier) return earlier;
    const found = await findSubmitted(ctx, sr, t.title, earlier.acceptedAt);
    await ctx.progress.set(key, JSON.stringify(found));
    return found;
  }
  const made = await submitOnce(ctx, t, sr, key);
  await ctx.progress.set(key, JSON.stringify(made));
  return made;
}

async function submitOnce(ctx: PublishContext<RedditConfig>, t: Target, sr: string, key: string): Promise<Made> {
  const form: Record<string, string | undefined> = {
    api_type: 'json',
    sr,
    title: t.title,
    flair_id: t.flair?.id,
    flair_text: t.flair?.name,
    sendreplies: 'true',
    resubmit: 'true',
  };
  const media = ctx.item.media;
  if (t.type === 'link') Object.assign(form, { kind: 'link', url: t.url });
  else if (t.type === 'media') {
    const video = media.find((m) => m.mimeType.startsWith('video/'));
    const image = media.find((m) => m.mimeType.startsWith('image/'));
    if (video) {
      if (!image) throw new PublishError('refused', 'A Reddit video post needs an image as its poster: add one image with the video');
      Object.assign(form, { kind: 'video', url: await uploadMedia(ctx, video), video_poster_url: await uploadMedia(ctx, image) });
    } else if (image) Object.assign(form, { kind: 'image', url: await uploadMedia(ctx, image) });
    else throw new PublishError('refused', `A media post to r/${sr} needs an image or a video`);
    if (ctx.item.content.trim()) form.text = ctx.item.content;
  } else Object.assign(form, { kind: 'self', text: ctx.item.content });

  const since = Date.now();
  const answer = await api(ctx, ctx.channel, '/api/submit', { method: 'POST', form });
  const data = answer?.json?.data ?? {};
  if (data.name && data.url) return { name: data.name, url: data.url };
  if (data.id) return { name: `t3_${data.id}`, url: data.url ?? `https://redd.it/${data.id}` };
  await ctx.progress.set(key, JSON.stringify({ acceptedAt: since } satisfies Kept));
  return findSubmitted(ctx, sr, t.title, since);
}

/** A comment under each post (or comment) the previous item made. */
async function commentOn(ctx: PublishContext<RedditConfig>, parents: string[]): Promise<PublishResult> {
  const made: { name: string; url: string }[] = [];
  for (const parent of parents) {
    const answer = await api(ctx, ctx.channel, '/api/comment', { method: 'POST', form: { api_type: 'json', thing_id: parent, text: ctx.item.content } });
    const thing = answer?.json?.data?.things?.[0]?.data;
    if (!thing?.name) throw new PublishError('unknown', 'Reddit took the comment but did not say its id');
    made.push({ name: thing.name, url: `https://www.reddit.com${thing.permalink ?? ''}` });
  }
  return { releaseId: made.map((m) => m.name).join(','), releaseUrl: made[0]?.url ?? null };
}

export const reddit: Provider<RedditConfig> = {
  identifier: 'reddit',
  name: 'Reddit',
  readAnswer,
  auth: 'oauth2',
  urls: { auth: 'https://www.reddit.com', api: 'https://oauth.reddit.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  settings,
  // Postiz caps text at 10,000 (a comment's limit); a media post carries one file (a video with its poster image).
  rules: {
    maxLength: 10_000,
    maxMedia: 2,
    mediaKinds: ['image', 'video'],
    threads: true,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/gif'], maxImageBytes: 20 * 1024 * 1024 },
  },
  // 100 API requests per minute per OAuth client; a publish takes up to five.
  pacing: { perWindow: { count: 20, windowMs: 60_000 } },

  oauth: {
    async start(ctx) {
      return {
        url: authorizationUrl(`${ctx.urls.auth}/api/v1/authorize`, {
          clientId: ctx.app.CLIENT_ID,
          redirectUri: ctx.redirectUri,
          state: ctx.state,
          scopes: SCOPES,
          extra: { duration: 'permanent' },
        }),
      };
    },
    async finish(ctx) {
      if (!ctx.query.code) throw new PublishError('refused', 'Reddit sent no authorization code');
      const tokens = tokenFields(
        await requestToken(
          ctx,
          `${ctx.urls.auth}/api/v1/access_token`,
          { grant_type: 'authorization_code', code: ctx.query.code, redirect_uri: ctx.redirectUri },
          {
            basic: { id: ctx.app.CLIENT_ID, secret: ctx.app.CLIENT_SECRET },
            headers: { 'user-agent': userAgent(ctx) },
          },
        ),
      );
      const me = await ctx.http.json<{ id: string; name: string; icon_img?: string; snoovatar_img?: string }>(`${ctx.urls.api}/api/v1/me`, {
        headers: { authorization: `bearer ${tokens.accessToken}`, 'user-agent': userAgent(ctx) },
      });
      // icon_img comes HTML-escaped with a signed query string.
      const picture = (me.snoovatar_img || me.icon_img || '').replace(/&amp;/g, '&') || null;
      return [{ externalId: me.id, name: me.name, picture, profile: me.name, config: { ...tokens, username: me.name } }];
    },
  },

  async refresh(ctx) {
    const refreshToken = needRefreshToken(ctx.channel.config, 'Reddit');
    const answer = await requestToken(
      ctx,
      `${ctx.urls.auth}/api/v1/access_token`,
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      {
        basic: { id: ctx.app.CLIENT_ID, secret: ctx.app.CLIENT_SECRET },
        headers: { 'user-agent': userAgent(ctx, String(ctx.channel.config.username)) },
      },
    );
    return tokenFields(answer);
  },

  async publish(ctx) {
    if (ctx.replyTo) return commentOn(ctx, ctx.replyTo.releaseId.split(','));
    const targets = (ctx.item.settings.subreddit as { value: Target }[] | undefined)?.map((s) => s.value) ?? [];
    if (targets.length === 0) throw new PublishError('refused', 'Reddit needs a subreddit: set settings.subreddit');
    const made: { name: string; url: string }[] = [];
    for (const t of targets) {
      try {
        made.push(await submit(ctx, t));
      } catch (err) {
        // Some subreddits already have the post: retrying would post there again. After a token
        // renewal it would not (each subreddit's post is recorded), so an auth failure stays one.
        if (made.length > 0 && err instanceof PublishError && err.kind !== 'auth') {
          throw new PublishError('refused', `Published to ${made.map((m) => m.url).join(', ')}, but r/${subredditName(t)} failed: ${err.message}`);
        }
        throw err;
      }
    }
    return { releaseId: made.map((m) => m.name).join(','), releaseUrl: made[0].url };
  },

  // Reddit's API gives ordinary apps no post or account analytics, so there is no `analytics`.

  /** The user's recent submissions (ids as publish returns them: t3_…). */
  async recentPosts(ctx) {
    return (await submitted(ctx, ctx.channel, 25)).map((post) => ({
      id: post.name,
      url: `https://www.reddit.com${post.permalink}`,
      text: post.title,
      at: post.created_utc * 1000,
    }));
  },

  tools: {
    subreddits: {
      description: 'Search subreddits by name: data {word} → [{name, title, subscribers, submissionType}]',
      async run(ctx) {
        const word = String((ctx.data as { word?: unknown })?.word ?? '').trim();
        if (!word) throw new PublishError('refused', 'data.word is required: the text to search subreddits for');
        const answer = await api(ctx, ctx.channel, '/subreddits/search', { query: { q: word, show: 'public', limit: 25, raw_json: 1 } });
        return (answer?.data?.children ?? []).map(({ data: d }: any) => ({
          name: d.display_name,
          title: d.title,
          subscribers: d.subscribers,
          submissionType: d.submission_type,
        }));
      },
    },
    restrictions: {
      description: 'What a subreddit allows: data {subreddit} → {submissionType, allowImages, allowVideos, isFlairRequired, flairs: [{id, name}]}',
      async run(ctx) {
        const sr = String((ctx.data as { subreddit?: unknown })?.subreddit ?? '').replace(/^\/?r\//, '');
        if (!/^[A-Za-z0-9_]{2,21}$/.test(sr)) throw new PublishError('refused', 'data.subreddit must be a subreddit name');
        const about = await api(ctx, ctx.channel, `/r/${sr}/about`, { query: { raw_json: 1 } });
        const requirements = await api(ctx, ctx.channel, `/api/v1/${sr}/post_requirements`);
        // Subreddits without link flair answer 403 here; that means "no flairs".
        const flairs = await api(ctx, ctx.channel, `/r/${sr}/api/link_flair_v2`).catch(() => []);
        return {
          submissionType: about?.data?.submission_type ?? 'any',
          allowImages: about?.data?.allow_images ?? false,
          allowVideos: about?.data?.allow_videos ?? false,
          isFlairRequired: requirements?.is_flair_required ?? false,
          flairs: (Array.isArray(flairs) ? flairs : []).map((f: any) => ({ id: f.id, name: f.text })),
        };
      },
    },
  },
};
