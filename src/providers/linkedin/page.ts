/**
 * LinkedIn page (`linkedin-page`): the member's OAuth 2 token acts for an
 * organization they administer; after consent the member picks the page.
 */
import type { ConnectResult, NetworkContext, Provider } from '../types.ts';
import { exchangeCode, LINKEDIN_URLS, linkedinRules, linkedinSettings, publishPost, readAnswer, refreshTokens, restJson, startAuthorization, type LinkedInConfig } from './api.ts';

/** Roles that may post for a page (Postiz and LinkedIn's docs agree on these two). */
const POSTING_ROLES = new Set(['ADMINISTRATOR', 'CONTENT_ADMINISTRATOR']);

interface Acl {
  organization: string;
  role: string;
  state: string;
}

async function pages(ctx: NetworkContext, accessToken: string): Promise<{ id: string; name: string; vanityName?: string }[]> {
  const found = new Map<string, { id: string; name: string; vanityName?: string }>();
  for (let start = 0; ; ) {
    const acls = await restJson<{ elements: Acl[]; paging?: { total?: number; count?: number } }>(ctx, accessToken, '/rest/organizationAcls', {
      query: { q: 'roleAssignee', state: 'APPROVED', start, count: 100 },
    });
    for (const acl of acls.elements ?? []) {
      if (!POSTING_ROLES.has(acl.role) || acl.state !== 'APPROVED') continue;
      const id = acl.organization.split(':').pop()!;
      if (found.has(id)) continue;
      const org = await restJson<{ localizedName?: string; vanityName?: string }>(ctx, accessToken, `/rest/organizations/${encodeURIComponent(id)}`);
      found.set(id, { id, name: org.localizedName ?? `Organization ${id}`, vanityName: org.vanityName });
    }
    start += acls.elements?.length ?? 0;
    if (!acls.elements?.length || acls.paging?.total === undefined || start >= acls.paging.total) break;
  }
  return [...found.values()];
}

export const linkedinPage: Provider = {
  identifier: 'linkedin-page',
  name: 'LinkedIn Page',
  auth: 'oauth2',
  urls: LINKEDIN_URLS,
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  optionalSettings: ['API_VERSION'],
  readAnswer,
  settings: linkedinSettings,
  rules: linkedinRules,

  oauth: {
    async start(ctx) {
      return { url: startAuthorization(ctx, ['openid', 'profile', 'w_organization_social', 'r_organization_social', 'rw_organization_admin']) };
    },
    async finish(ctx): Promise<ConnectResult[]> {
      const tokens = await exchangeCode(ctx);
      return (await pages(ctx, tokens.accessToken!)).map((page) => {
        const config: LinkedInConfig = { ...tokens, author: `urn:li:organization:${page.id}` };
        return {
          externalId: page.id,
          name: page.name,
          picture: null,
          profile: page.vanityName ? `https://www.linkedin.com/company/${page.vanityName}` : null,
          config: { ...config },
        };
      });
    },
  },

  refresh: refreshTokens,
  publish: publishPost,

  tools: {
    pages: {
      description: 'List the LinkedIn pages this member may post for (to connect another one: GET /social/linkedin-page).',
      async run(ctx) {
        const { accessToken } = ctx.channel.config as unknown as LinkedInConfig;
        return pages(ctx, accessToken!);
      },
    },
  },
};
