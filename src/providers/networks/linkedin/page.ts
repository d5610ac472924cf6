/**
 * LinkedIn page (`linkedin-page`): the member's OAuth 2 token acts for an
 * organization they administer; after consent the member picks the page.
 */
import { currentFigures, dailySeries, day } from '../../adapter-kit/analytics-series.ts';
import type { AnalyticsSeries, ConnectResult, NetworkContext, Provider, PublishChannel } from '../../types.ts';
import { PublishError } from '../../errors.ts';
import { exchangeCode, linkedinChannel, restJson, startAuthorization, type LinkedInConfig } from './api.ts';

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

const DAY_MS = 86_400_000;

interface ShareStatistics {
  impressionCount?: number;
  uniqueImpressionsCount?: number;
  clickCount?: number;
  likeCount?: number;
  commentCount?: number;
  shareCount?: number;
}

interface TimeRange {
  start: number;
  end: number;
}

/** Daily share figures of the page, by the field LinkedIn names them. */
const SHARE_SERIES: [keyof ShareStatistics, string][] = [
  ['impressionCount', 'Impressions'],
  ['clickCount', 'Clicks'],
  ['likeCount', 'Reactions'],
  ['commentCount', 'Comments'],
  ['shareCount', 'Reposts'],
];

/**
 * Rest.li 2.0 reads "(", ":" and "," in a query as syntax, so they stay unencoded
 * while the URNs inside are encoded: URLSearchParams would encode both.
 */
function statisticsPath(resource: string, organization: string, extra: string): string {
  return `/rest/${resource}?q=organizationalEntity&organizationalEntity=${encodeURIComponent(organization)}${extra}`;
}

/** The last `days` whole UTC days: LinkedIn counts by day, and today is not over. */
function wholeDays(days: number, now = Date.now()): string {
  const end = now - (now % DAY_MS);
  return `&timeIntervals=(timeRange:(start:${end - days * DAY_MS},end:${end}),timeGranularityType:DAY)`;
}

async function pageAnalytics(ctx: NetworkContext & { channel: PublishChannel<LinkedInConfig>; days: number }): Promise<AnalyticsSeries[]> {
  const { accessToken, author } = ctx.channel.config;
  const intervals = wholeDays(ctx.days);
  const shares = await restJson<{ elements?: { timeRange: TimeRange; totalShareStatistics?: ShareStatistics }[] }>(
    ctx,
    accessToken!,
    statisticsPath('organizationalEntityShareStatistics', author, intervals),
  );
  const followers = await restJson<{ elements?: { timeRange: TimeRange; followerGains?: { organicFollowerGain?: number; paidFollowerGain?: number } }[] }>(
    ctx,
    accessToken!,
    statisticsPath('organizationalEntityFollowerStatistics', author, intervals),
  );
  const shareDays = shares.elements ?? [];
  return [
    ...SHARE_SERIES.map(([field, label]) =>
      dailySeries(
        label,
        shareDays.map((e) => ({ date: day(e.timeRange.start), total: e.totalShareStatistics?.[field] ?? 0 })),
      ),
    ),
    // Paid follows (from sponsored content) are new followers too.
    dailySeries(
      'New followers',
      (followers.elements ?? []).map((e) => ({
        date: day(e.timeRange.start),
        total: (e.followerGains?.organicFollowerGain ?? 0) + (e.followerGains?.paidFollowerGain ?? 0),
      })),
    ),
  ];
}

/** LinkedIn gives one post's statistics only over its lifetime: they are the figures as they stand. */
async function postAnalytics(ctx: NetworkContext & { channel: PublishChannel<LinkedInConfig>; releaseId: string }): Promise<AnalyticsSeries[]> {
  const { accessToken, author } = ctx.channel.config;
  const urn = ctx.releaseId;
  const kind = /^urn:li:(share|ugcPost):\d+$/.exec(urn)?.[1];
  if (!kind) throw new PublishError('refused', `LinkedIn keeps statistics for posts (share or ugcPost URNs), not for ${urn}`);
  const finder = kind === 'share' ? 'shares' : 'ugcPosts';
  const answer = await restJson<{ elements?: { share?: string; ugcPost?: string; totalShareStatistics?: ShareStatistics }[] }>(
    ctx,
    accessToken!,
    statisticsPath('organizationalEntityShareStatistics', author, `&${finder}=List(${encodeURIComponent(urn)})`),
  );
  const stats = (answer.elements ?? []).find((e) => (e.share ?? e.ugcPost) === urn)?.totalShareStatistics;
  if (!stats) return [];
  return currentFigures({
    Impressions: stats.impressionCount,
    'Unique impressions': stats.uniqueImpressionsCount,
    Clicks: stats.clickCount,
    Reactions: stats.likeCount,
    Comments: stats.commentCount,
    Reposts: stats.shareCount,
  });
}

export const linkedinPage: Provider<LinkedInConfig> = {
  identifier: 'linkedin-page',
  name: 'LinkedIn Page',
  ...linkedinChannel,

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

  // Needs the ADMINISTRATOR role on the page (rw_organization_admin); LinkedIn refuses others with 403.
  analytics: { channel: pageAnalytics, post: postAnalytics },

  tools: {
    pages: {
      description: 'List the LinkedIn pages this member may post for (to connect another one: GET /social/linkedin-page).',
      async run(ctx) {
        const { accessToken } = ctx.channel.config;
        return pages(ctx, accessToken!);
      },
    },
  },
};
