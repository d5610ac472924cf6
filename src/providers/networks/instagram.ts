/**
 * The `instagram` channel: an Instagram professional account linked to a
 * Facebook Page, connected with Facebook Login. The user picks which of their
 * Pages' Instagram accounts to connect; the Page's token publishes through
 * graph.facebook.com (see meta/instagram-content.ts for the publishing flow).
 */
import type { NetworkContext, Provider, PublishChannel } from '../types.ts';
import { Graph } from './meta/graph.ts';
import { graphVersion, loginDialogUrl, longLivedUserToken, managedPages, userGraph } from './meta/facebook-login.ts';
import { instagramChannel, type InstagramAccount } from './meta/instagram-content.ts';

const NAME = 'Instagram';

/** instagram_manage_insights: analytics. */
const SCOPES = [
  'instagram_basic',
  'instagram_content_publish',
  'instagram_manage_comments',
  'instagram_manage_insights',
  'pages_show_list',
  'pages_read_engagement',
  'business_management',
];

interface PageWithInstagram {
  id: string;
  name?: string;
  access_token?: string;
  instagram_business_account?: { id: string; username?: string; name?: string; profile_picture_url?: string };
}

const PAGE_FIELDS = 'id,name,access_token,instagram_business_account{id,username,name,profile_picture_url}';

interface InstagramConfig {
  accessToken: string;
  pageId?: string;
  username?: string;
  userToken?: string;
}

function account(ctx: NetworkContext & { channel: PublishChannel<InstagramConfig> }): InstagramAccount {
  const config = ctx.channel.config;
  return {
    graph: new Graph(ctx, { host: ctx.urls.api, version: graphVersion(ctx), token: config.accessToken, tokenIn: 'header', network: NAME }),
    userId: ctx.channel.externalId,
    profileUrl: `https://www.instagram.com/${config.username ?? ''}`,
  };
}

export const instagram: Provider<InstagramConfig> = {
  identifier: 'instagram',
  name: NAME,
  auth: 'oauth2',
  urls: { api: 'https://graph.facebook.com', login: 'https://www.facebook.com' },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  optionalSettings: ['API_VERSION'],
  ...instagramChannel(account),

  oauth: {
    async start(ctx) {
      return { url: loginDialogUrl(ctx, SCOPES) };
    },
    async finish(ctx) {
      const user = await longLivedUserToken(ctx, NAME);
      const pages = await managedPages<PageWithInstagram>(userGraph(ctx, NAME, user.token), PAGE_FIELDS);
      // Only Pages with a linked professional Instagram account can publish.
      return pages
        .filter((p) => p.instagram_business_account?.id && p.access_token)
        .map((p) => {
          const ig = p.instagram_business_account!;
          return {
            externalId: ig.id,
            name: ig.name || ig.username || ig.id,
            picture: ig.profile_picture_url ?? null,
            profile: ig.username ?? null,
            config: { accessToken: p.access_token!, pageId: p.id, username: ig.username, userToken: user.token, userTokenExpiresAt: user.expiresAt },
          };
        });
    },
  },

  tools: {
    accounts: {
      description: 'List the Instagram professional accounts linked to the Pages the connected login manages (to switch, connect again and pick one).',
      async run(ctx) {
        const { userToken } = ctx.channel.config;
        if (!userToken) return { accounts: [] };
        const pages = await managedPages<PageWithInstagram>(
          userGraph(ctx, NAME, userToken),
          'id,name,instagram_business_account{id,username,name,profile_picture_url}',
        );
        return {
          accounts: pages
            .filter((p) => p.instagram_business_account?.id)
            .map((p) => {
              const ig = p.instagram_business_account!;
              return {
                id: ig.id,
                username: ig.username ?? null,
                name: ig.name ?? null,
                picture: ig.profile_picture_url ?? null,
                page: { id: p.id, name: p.name ?? null },
                connected: ig.id === ctx.channel.externalId,
              };
            }),
        };
      },
    },
  },
};
