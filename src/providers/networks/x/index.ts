/**
 * X (Twitter): connects with OAuth 1.0a (request token, the user authorizes,
 * access token); every request is signed. Posts go to POST /2/tweets; a thread
 * replies to the previous post. User tokens never expire, so a 401 means the
 * user revoked access and the channel must be connected again.
 */
import { z } from 'zod';
import type { Provider, PublishContext } from '../../types.ts';
import { PublishError } from '../../errors.ts';
import { consumerKeys, postUrl, readAnswer, signedForm, signedJson, type XConfig } from './api.ts';
import { uploadMedia, X_IMAGE_BYTES } from './media.ts';
import { analytics, recentPosts } from './reads.ts';

const COMMUNITY_URL = /^https:\/\/(?:x|twitter)\.com\/i\/communities\/(\d+)\/?$/;

const settings = z.object({
  // X's own default: anyone may reply unless the author narrows it.
  who_can_reply_post: z.enum(['everyone', 'following', 'mentionedUsers', 'subscribers', 'verified']).default('everyone').describe('Who may reply to the post'),
  community: z
    .string()
    .regex(COMMUNITY_URL, { error: 'must be a community URL such as https://x.com/i/communities/1234567890' })
    .optional()
    .describe('Post into this X community (its URL)'),
  made_with_ai: z.boolean().optional().describe('Accepted for client compatibility; X documents no API field for it, so it is not sent'),
  paid_partnership: z.boolean().optional().describe('Label the post as a paid partnership'),
});

type XSettings = z.infer<typeof settings>;

function tweetBody(ctx: PublishContext<XConfig>, mediaIds: string[]): Record<string, unknown> {
  const s = ctx.item.settings as Partial<XSettings>;
  const body: Record<string, unknown> = { text: ctx.item.content };
  if (mediaIds.length > 0) body.media = { media_ids: mediaIds };
  if (ctx.replyTo) body.reply = { in_reply_to_tweet_id: ctx.replyTo.releaseId };
  // Replies follow the conversation's own settings; only the first post sets them.
  if (!ctx.replyTo && s.who_can_reply_post && s.who_can_reply_post !== 'everyone') body.reply_settings = s.who_can_reply_post;
  const community = s.community ? COMMUNITY_URL.exec(s.community)?.[1] : undefined;
  if (community && !ctx.replyTo) body.community_id = community;
  if (s.paid_partnership) body.paid_partnership = true;
  return body;
}

const MEDIA_MIX = 'X takes up to 4 images, or one GIF, or one video per post; not a mix';

/** X's media rule beyond the count: a video or a GIF stands alone in its post. */
function breaksMediaMix(media: { mimeType: string }[]): boolean {
  const moving = media.filter((m) => m.mimeType.startsWith('video/') || m.mimeType === 'image/gif');
  return moving.length > 0 && media.length > 1;
}

export const x: Provider<XConfig> = {
  identifier: 'x',
  name: 'X',
  readAnswer,
  auth: 'oauth1',
  urls: { api: 'https://api.x.com' },
  appSettings: ['API_KEY', 'API_SECRET'],
  settings,
  rules: {
    maxLength: 280,
    counting: 'x',
    maxMedia: 4,
    mediaKinds: ['image', 'video'],
    threads: true,
    media: { imageTypes: ['image/jpeg', 'image/png', 'image/webp', 'image/gif'], maxImageBytes: X_IMAGE_BYTES },
    check: (item) => (breaksMediaMix(item.media) ? [{ field: 'image', message: MEDIA_MIX }] : []),
  },
  // X's app-wide cap on creating posts (rate-limit table): 10,000 per 24 hours.
  pacing: { perWindow: { count: 10_000, windowMs: 24 * 60 * 60_000 } },

  oauth: {
    async start(ctx) {
      // X hands back only oauth_token and oauth_verifier; the state rides in the callback URL.
      const callback = new URL(ctx.redirectUri);
      callback.searchParams.set('state', ctx.state);
      const answer = await signedForm(ctx, consumerKeys(ctx), `${ctx.urls.api}/oauth/request_token`, { oauth_callback: callback.toString() });
      if (answer.oauth_callback_confirmed !== 'true' || !answer.oauth_token || !answer.oauth_token_secret) {
        throw new PublishError('refused', 'X did not confirm the callback URL; register it in the X developer portal (see README, "Networks")');
      }
      const url = new URL(`${ctx.urls.api}/oauth/authorize`);
      url.searchParams.set('oauth_token', answer.oauth_token);
      return { url: url.toString(), stash: { requestToken: answer.oauth_token, requestSecret: answer.oauth_token_secret } };
    },

    async finish(ctx) {
      const { query, stash } = ctx;
      if (query.denied) throw new PublishError('refused', 'the user did not authorize Herald');
      if (!query.oauth_verifier || query.oauth_token !== stash.requestToken)
        throw new PublishError('refused', 'X sent back a different or missing request token');
      const access = await signedForm(
        ctx,
        consumerKeys(ctx, { token: String(stash.requestToken), tokenSecret: String(stash.requestSecret) }),
        `${ctx.urls.api}/oauth/access_token`,
        { oauth_verifier: query.oauth_verifier },
      );
      if (!access.oauth_token || !access.oauth_token_secret) throw new PublishError('refused', 'X gave no access token');
      const user = { token: access.oauth_token, tokenSecret: access.oauth_token_secret };
      const me = await signedJson<{ data: { id: string; name: string; username: string; profile_image_url?: string } }>(
        ctx,
        consumerKeys(ctx, user),
        `${ctx.urls.api}/2/users/me`,
        {
          query: { 'user.fields': 'profile_image_url,verified' },
        },
      );
      const config: XConfig = { ...user, userId: me.data.id, username: me.data.username };
      return [{ externalId: me.data.id, name: me.data.name, picture: me.data.profile_image_url ?? null, profile: me.data.username, config: { ...config } }];
    },
  },

  async publish(ctx) {
    const config = ctx.channel.config;
    const keys = consumerKeys(ctx, config);
    // Checked when the post was accepted too; a post queued before that check still meets it here.
    if (breaksMediaMix(ctx.item.media)) throw new PublishError('refused', MEDIA_MIX);
    const mediaIds = await uploadMedia(ctx, keys);
    const answer = await signedJson<{ data: { id: string } }>(ctx, keys, `${ctx.urls.api}/2/tweets`, { method: 'POST', json: tweetBody(ctx, mediaIds) });
    const id = answer.data.id;
    return { releaseId: id, releaseUrl: postUrl(config, id) };
  },

  /**
   * After an unknown outcome (X answered 5xx to the tweet, or nothing): the item is the
   * channel's latest post with its text made since it was due (X shortens links, so
   * they are left out of the comparison). Sending it again would post twice, or end as
   * a false "duplicate content" refusal.
   */
  async findPublished(ctx) {
    const since = ctx.item.publishAt.getTime() - 60_000;
    const found = (await recentPosts(ctx)).find((p) => (p.at === undefined || p.at >= since) && withoutLinks(p.text ?? '') === withoutLinks(ctx.item.content));
    return found ? { releaseId: found.id, releaseUrl: found.url } : null;
  },

  analytics,
  recentPosts,
};

function withoutLinks(text: string): string {
  return text
    .replace(/https?:\/\/\S+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
