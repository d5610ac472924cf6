/**
 * The `instagram-standalone` channel: an Instagram professional account
 * connected with Instagram Login (no Facebook Page needed). Its long-lived
 * token (60 days) renews itself through graph.instagram.com; publishing is the
 * same container flow as `instagram` (meta/instagram-content.ts).
 */
import type { NetworkContext, Provider, PublishChannel } from '../types.ts';
import { PublishError } from '../errors.ts';
import { Graph } from './meta/graph.ts';
import { graphVersion } from './meta/facebook-login.ts';
import { instagramChannel, type InstagramAccount } from './meta/instagram-content.ts';
import { authorizationCode, connectToken, renewToken, type LongLivedTokenFlow, loginUrl } from './meta/long-lived-token.ts';

const NAME = 'Instagram';

/** instagram_business_manage_insights: analytics. */
const SCOPES = ['instagram_business_basic', 'instagram_business_content_publish', 'instagram_business_manage_comments', 'instagram_business_manage_insights'];

function flow(ctx: NetworkContext): LongLivedTokenFlow {
  return {
    network: NAME,
    codeUrl: `${ctx.urls.oauth}/oauth/access_token`,
    exchangeUrl: `${ctx.urls.api}/access_token`,
    exchangeGrant: 'ig_exchange_token',
    refreshUrl: `${ctx.urls.api}/refresh_access_token`,
    refreshGrant: 'ig_refresh_token',
  };
}

function graph(ctx: NetworkContext, token: string): Graph {
  return new Graph(ctx, { host: ctx.urls.api, version: graphVersion(ctx), token, tokenIn: 'header', network: NAME });
}

function account(ctx: NetworkContext & { channel: PublishChannel }): InstagramAccount {
  const config = ctx.channel.config as { accessToken: string; username?: string };
  return { graph: graph(ctx, config.accessToken), userId: ctx.channel.externalId, profileUrl: `https://www.instagram.com/${config.username ?? ''}` };
}

export const instagramStandalone: Provider = {
  identifier: 'instagram-standalone',
  name: NAME,
  auth: 'oauth2',
  urls: { api: 'https://graph.instagram.com', oauth: 'https://api.instagram.com', login: 'https://www.instagram.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  optionalSettings: ['API_VERSION'],
  ...instagramChannel(account),

  oauth: {
    async start(ctx) {
      return { url: loginUrl(ctx, SCOPES) };
    },
    async finish(ctx) {
      const token = await connectToken(ctx, flow(ctx), authorizationCode(ctx.query, NAME), ctx.redirectUri);
      // user_id of /me (a string) is the id used in publishing paths; `id` is app-scoped.
      const me = await graph(ctx, token.accessToken).get<{ user_id?: string; username?: string; name?: string; profile_picture_url?: string }>('me', {
        fields: 'user_id,username,name,profile_picture_url,account_type',
      });
      const userId = me.user_id ?? token.userId;
      if (!userId) throw new PublishError('refused', 'Instagram did not say which account logged in');
      return [
        {
          externalId: String(userId),
          name: me.name || me.username || String(userId),
          picture: me.profile_picture_url ?? null,
          profile: me.username ?? null,
          config: { accessToken: token.accessToken, expiresAt: token.expiresAt, tokenExpiresAt: token.tokenExpiresAt, username: me.username },
        },
      ];
    },
  },

  async refresh(ctx) {
    const { accessToken } = ctx.channel.config as { accessToken: string };
    return renewToken(ctx, flow(ctx), accessToken);
  },
};
