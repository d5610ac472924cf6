/**
 * Google Business Profile: a post is a "local post" (an update, an event or an
 * offer) on one business location. Google OAuth 2 with PKCE and offline access;
 * after consent the person picks one of the locations their Google accounts
 * manage (listed by the v1 account-management and business-information APIs),
 * and the channel is that location, named by its v4 parent
 * `accounts/{a}/locations/{l}` because local posts still live in the v4 API.
 *
 * Google fetches a post's photo itself from its public URL (no upload call).
 * There is no idempotency key: after an unknown outcome the location's latest
 * posts are read and matched on text, topic and time.
 */
import { z } from 'zod';
import { errorMessage, retryAfterMs, type NetworkAnswer, type Verdict } from '../adapter-kit/http-failures.ts';
import { googleConsentUrl, refreshTokens, requestToken, tokenFields } from '../adapter-kit/oauth2-tokens.ts';
import type { ConnectResult, NetworkContext, Provider, PublishChannel, PublishContext, PublishResult, RecentPost, RuleItem, TokenConfig } from '../types.ts';
import { PublishError } from '../errors.ts';

const MANAGE_SCOPE = 'https://www.googleapis.com/auth/business.manage';
/** Accepted by Google in place of business.manage (older consent screens). */
const OLD_MANAGE_SCOPE = 'https://www.googleapis.com/auth/plus.business.manage';
const SCOPES = [MANAGE_SCOPE, 'https://www.googleapis.com/auth/userinfo.profile'];
/** The business-information API answers nothing without a read mask. */
const LOCATION_MASK = 'name,title,storefrontAddress,metadata,languageCode';
/** Google's quota is per minute and it documents no Retry-After. */
const QUOTA_WAIT_MS = 60_000;
/** A post listed on the location before the item was due (less clock slack) cannot be it. */
const CLOCK_SLACK_MS = 60_000;

const ACTIONS = ['NONE', 'BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'GET_OFFER', 'CALL'] as const;
const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)), 'must be a real date');
const clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time as HH:MM (24 hours)');

const settings = z.object({
  topicType: z.enum(['STANDARD', 'EVENT', 'OFFER']).optional().describe('What the post is: an update (STANDARD, the default), an event or an offer'),
  callToActionType: z
    .enum(ACTIONS)
    .optional()
    .describe('The button under an update or event; CALL dials the phone number of the profile; GET_OFFER is retired (use an OFFER post)'),
  callToActionUrl: z.url().optional().describe('Where the button leads (every button but CALL needs one)'),
  eventTitle: z.string().min(1).optional().describe('Title of the event or offer (required for EVENT and OFFER)'),
  eventStartDate: isoDate.optional().describe('First day of the event or offer, YYYY-MM-DD (required for EVENT and OFFER)'),
  eventEndDate: isoDate.optional().describe('Last day of the event or offer, YYYY-MM-DD (required for EVENT and OFFER)'),
  eventStartTime: clock.optional().describe('Start time on the first day, HH:MM (the whole day without it)'),
  eventEndTime: clock.optional().describe('End time on the last day, HH:MM'),
  offerCouponCode: z.string().optional().describe('Coupon code to show with an offer'),
  offerRedeemUrl: z.url().optional().describe('Where the offer is redeemed online'),
  offerTerms: z.string().optional().describe('Terms and conditions of the offer'),
  languageCode: z
    .string()
    .regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'must be a language code such as en, de or pt-BR')
    .optional()
    .describe("The language the post is written in (BCP 47, e.g. en, de, pt-BR); the location's own language when left out"),
});
type Settings = z.infer<typeof settings>;

interface Config extends TokenConfig {
  /** accounts/{a}/locations/{l}: the v4 parent of the location's posts. */
  parent: string;
  /** The location's Google Maps page, where its posts show. */
  mapsUri?: string | null;
  /** The location's language (Business Information `languageCode`): a post's language unless its settings say another. */
  languageCode?: string | null;
}

interface LocalPost {
  name?: string;
  summary?: string;
  topicType?: string;
  state?: string;
  searchUrl?: string;
  createTime?: string;
}

/** The settings problems Google would refuse, found before the post is accepted (the settings schema can hold no cross-field rules). */
function checkSettings(item: RuleItem): { field: 'content' | 'image'; message: string }[] {
  if (item.threadIndex > 0) return [];
  const s = item.settings as Partial<Settings>;
  const topic = s.topicType ?? 'STANDARD';
  const problems: string[] = [];
  const action = s.callToActionType ?? 'NONE';
  if (action === 'GET_OFFER') problems.push('settings.callToActionType GET_OFFER is retired by Google: make the post an OFFER (topicType) instead');
  else if (topic !== 'OFFER' && action !== 'NONE' && action !== 'CALL' && !s.callToActionUrl)
    problems.push(`settings.callToActionType ${action} needs settings.callToActionUrl`);
  else if (action === 'CALL' && s.callToActionUrl)
    problems.push('settings.callToActionUrl must be left out for CALL: Google dials the phone number of the profile');
  if (topic === 'EVENT' || topic === 'OFFER') {
    for (const field of ['eventTitle', 'eventStartDate', 'eventEndDate'] as const) {
      if (!s[field]) problems.push(`an ${topic} post needs settings.${field}`);
    }
    const start = `${s.eventStartDate ?? ''}T${s.eventStartTime ?? '00:00'}`;
    const end = `${s.eventEndDate ?? ''}T${s.eventEndTime ?? '23:59'}`;
    if (s.eventStartDate && s.eventEndDate && end < start) problems.push('settings.eventEndDate (and time) must not be before the start');
  }
  if (topic !== 'OFFER' && (s.offerCouponCode || s.offerRedeemUrl || s.offerTerms))
    problems.push('the offer fields (offerCouponCode, offerRedeemUrl, offerTerms) need topicType OFFER');
  return problems.map((message) => ({ field: 'content', message }));
}

/** Google's error envelope: the validation messages of `details[].errorDetails[]` say what to fix. */
function googleDetail(body: any): string | undefined {
  const error = body?.error;
  if (!error || typeof error !== 'object') return undefined;
  const specifics = (Array.isArray(error.details) ? error.details : [])
    .flatMap((d: any) => (Array.isArray(d?.errorDetails) ? d.errorDetails : []))
    .map((d: any) => (d.field ? `${d.field}: ${d.message}` : d.message))
    .filter((m: unknown) => typeof m === 'string' && m);
  const head = [error.status, errorMessage(body)].filter(Boolean).join(' ');
  return specifics.length > 0 ? `${head} (${specifics.join('; ')})` : head || undefined;
}

/** Whether a 429 is the quota 0 of a Cloud project Google has not approved for the API: waiting never clears it. */
function unapprovedProject(body: any): boolean {
  const details = Array.isArray(body?.error?.details) ? body.error.details : [];
  return details.some((d: any) => String(d?.metadata?.quota_limit_value ?? '') === '0');
}

function readAnswer({ ok, status, body, headers }: NetworkAnswer): Verdict | undefined {
  if (ok) return undefined;
  // The token endpoint: a refresh token revoked, unused for six months, or of a "Testing" consent screen.
  if (body?.error === 'invalid_grant') return { kind: 'auth', detail: `invalid_grant: ${body.error_description ?? 'the grant was revoked or expired'}` };
  const detail = googleDetail(body);
  if (status === 429) {
    if (unapprovedProject(body)) {
      return {
        kind: 'refused',
        code: 'quota_zero',
        detail:
          `${detail ?? 'RESOURCE_EXHAUSTED'}. The Google Cloud project has a quota of 0 for the Business Profile APIs: ` +
          "it must be approved through Google's Business Profile API access request first. This does not clear by waiting.",
      };
    }
    return { kind: 'retryable', detail, retryAfterMs: retryAfterMs(headers.get('retry-after')) ?? QUOTA_WAIT_MS };
  }
  if (status === 403) {
    return {
      kind: 'refused',
      detail:
        `${detail ?? 'PERMISSION_DENIED'}. The Google account may have lost access to this location, ` +
        "or the Business Profile APIs are not enabled for Herald's Cloud project.",
    };
  }
  return detail ? { detail } : undefined;
}

function bearer(token: string | undefined): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Every page of a Google list, following nextPageToken (bounded: a runaway token must not loop forever). */
async function allPages<T>(ctx: NetworkContext, url: string, token: string | undefined, field: string, query: Record<string, string> = {}): Promise<T[]> {
  const items: T[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < 20; page++) {
    const answer = await ctx.http.json<Record<string, any>>(url, { headers: bearer(token), query: { ...query, pageToken } });
    items.push(...((answer?.[field] as T[] | undefined) ?? []));
    pageToken = answer?.nextPageToken;
    if (!pageToken) break;
  }
  return items;
}

interface Location {
  name: string;
  title?: string;
  storefrontAddress?: { addressLines?: string[]; locality?: string };
  metadata?: { mapsUri?: string; placeId?: string };
  languageCode?: string;
}

function address(location: Location): string | null {
  const a = location.storefrontAddress;
  const text = [...(a?.addressLines ?? []), a?.locality].filter(Boolean).join(', ');
  return text || null;
}

async function locations(ctx: NetworkContext, token: string | undefined): Promise<{ parent: string; location: Location }[]> {
  const accounts = await allPages<{ name: string }>(ctx, `${ctx.urls.accounts}/v1/accounts`, token, 'accounts');
  const found: { parent: string; location: Location }[] = [];
  for (const account of accounts) {
    const listed = await allPages<Location>(ctx, `${ctx.urls.locations}/v1/${account.name}/locations`, token, 'locations', {
      readMask: LOCATION_MASK,
      pageSize: '100',
    });
    for (const location of listed) found.push({ parent: `${account.name}/${location.name}`, location });
  }
  return found;
}

function config(channel: PublishChannel<Config>): Config {
  return channel.config;
}

function dateOf(day: string): { year: number; month: number; day: number } {
  const [year, month, d] = day.split('-').map(Number);
  return { year, month, day: d };
}

function timeOf(hhmm: string): { hours: number; minutes: number } {
  const [hours, minutes] = hhmm.split(':').map(Number);
  return { hours, minutes };
}

/** The LocalPost to create from the item and its settings. */
function localPost(ctx: PublishContext<Config>): Record<string, unknown> {
  const s = ctx.item.settings as Partial<Settings>;
  const topicType = s.topicType ?? 'STANDARD';
  // A channel connected before Herald kept the location's language posts in English, as before.
  const languageCode = s.languageCode ?? ctx.channel.config.languageCode ?? 'en';
  const body: Record<string, unknown> = { languageCode, summary: ctx.item.content, topicType };
  const action = s.callToActionType ?? 'NONE';
  // Google ignores a button on an offer; CALL takes no URL (the profile's phone is dialled).
  if (topicType !== 'OFFER' && action !== 'NONE' && action !== 'GET_OFFER') {
    body.callToAction = action === 'CALL' ? { actionType: 'CALL' } : { actionType: action, url: s.callToActionUrl };
  }
  const photo = ctx.item.media[0];
  if (photo) body.media = [{ mediaFormat: 'PHOTO', sourceUrl: photo.url }];
  if (topicType === 'EVENT' || topicType === 'OFFER') {
    body.event = {
      title: s.eventTitle,
      schedule: {
        startDate: dateOf(s.eventStartDate ?? ''),
        ...(s.eventStartTime ? { startTime: timeOf(s.eventStartTime) } : {}),
        endDate: dateOf(s.eventEndDate ?? ''),
        ...(s.eventEndTime ? { endTime: timeOf(s.eventEndTime) } : {}),
      },
    };
  }
  if (topicType === 'OFFER') {
    const offer = { couponCode: s.offerCouponCode, redeemOnlineUrl: s.offerRedeemUrl, termsConditions: s.offerTerms };
    if (Object.values(offer).some(Boolean)) body.offer = offer;
  }
  return body;
}

function locationId(parent: string): string {
  return parent.split('/').pop() ?? parent;
}

function release(cfg: Config, post: LocalPost): PublishResult {
  const id = post.name ?? '';
  return { releaseId: id, releaseUrl: post.searchUrl || cfg.mapsUri || `https://business.google.com/locations/${locationId(cfg.parent)}` };
}

/** The location's latest posts, newest first. */
async function latestPosts(ctx: NetworkContext, cfg: Config): Promise<LocalPost[]> {
  const answer = await ctx.http.json<{ localPosts?: LocalPost[] }>(`${ctx.urls.api}/v4/${cfg.parent}/localPosts`, {
    headers: bearer(cfg.accessToken),
    query: { pageSize: 20 },
  });
  return [...(answer?.localPosts ?? [])].sort((a, b) => Date.parse(b.createTime ?? '') - Date.parse(a.createTime ?? ''));
}

function sameText(a: string | undefined, b: string): boolean {
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
  return norm(a ?? '') === norm(b);
}

export const gmb: Provider<Config> = {
  identifier: 'gmb',
  name: 'Google Business Profile',
  auth: 'oauth2',
  readAnswer,
  urls: {
    auth: 'https://accounts.google.com',
    token: 'https://oauth2.googleapis.com',
    accounts: 'https://mybusinessaccountmanagement.googleapis.com',
    locations: 'https://mybusinessbusinessinformation.googleapis.com',
    api: 'https://mybusiness.googleapis.com',
  },
  appSettings: ['CLIENT_ID', 'CLIENT_SECRET'],
  connectNote:
    'Google opens the Business Profile APIs only to Cloud projects it has approved (an access request, reviewed in about two weeks); until then every ' +
    'call is refused with a quota of 0. After signing in with Google you pick the location to post to.',
  settings,
  rules: {
    // The Business Profile form's limit; the API states none.
    maxLength: 1500,
    maxMedia: 1,
    mediaKinds: ['image'],
    threads: false,
    media: { imageTypes: ['image/jpeg', 'image/png'], maxImageBytes: 5 * 1024 * 1024 },
    check: checkSettings,
  },
  // 300 requests a minute per project for each API. (The 10 edits a minute per profile are not known to cover posts.)
  pacing: { concurrent: 3, perWindow: { count: 300, windowMs: 60_000 } },

  oauth: {
    pkce: true,
    async start({ urls, app, state, redirectUri, codeChallenge }) {
      return {
        url: googleConsentUrl(urls.auth, { clientId: app.CLIENT_ID, redirectUri, state, scopes: SCOPES, codeChallenge }),
      };
    },

    async finish(ctx) {
      const answer = await requestToken(ctx, `${ctx.urls.token}/token`, {
        grant_type: 'authorization_code',
        code: ctx.query.code,
        redirect_uri: ctx.redirectUri,
        code_verifier: ctx.codeVerifier,
        client_id: ctx.app.CLIENT_ID,
        client_secret: ctx.app.CLIENT_SECRET,
      });
      const granted = String(answer.scope ?? '').split(' ');
      if (answer.scope !== undefined && !granted.includes(MANAGE_SCOPE) && !granted.includes(OLD_MANAGE_SCOPE)) {
        throw new PublishError('refused', 'the permission to manage the business profile was not granted; connect again and leave it ticked');
      }
      const tokens = tokenFields(answer);
      const found = await locations(ctx, tokens.accessToken);
      return found.map(
        ({ parent, location }): ConnectResult => ({
          externalId: parent,
          name: location.title || parent,
          profile: address(location),
          config: { ...tokens, parent, mapsUri: location.metadata?.mapsUri ?? null, languageCode: location.languageCode ?? null },
        }),
      );
    },
  },

  // Google keeps the refresh token: an answer without one keeps the stored one.
  refresh: (ctx) => refreshTokens(ctx, `${ctx.urls.token}/token`, 'Google'),

  async publish(ctx) {
    const cfg = config(ctx.channel);
    const post = await ctx.http.json<LocalPost>(`${ctx.urls.api}/v4/${cfg.parent}/localPosts`, {
      method: 'POST',
      headers: bearer(cfg.accessToken),
      json: localPost(ctx),
    });
    // A post Google refuses on policy still comes back created, in state REJECTED.
    if (post?.state === 'REJECTED') {
      throw new PublishError(
        'refused',
        'Google Business Profile rejected the post (state REJECTED): it breaks a content policy (phone numbers in the text, for one)',
      );
    }
    if (!post?.name) throw new PublishError('unknown', 'Google Business Profile answered without the post’s name, so whether it was created is unknown.');
    return release(cfg, post);
  },

  async findPublished(ctx) {
    const cfg = config(ctx.channel);
    const since = ctx.item.publishAt.getTime() - CLOCK_SLACK_MS;
    const topic = (ctx.item.settings as Partial<Settings>).topicType ?? 'STANDARD';
    const found = (await latestPosts(ctx, cfg)).find(
      (p) => Date.parse(p.createTime ?? '') >= since && (p.topicType ?? 'STANDARD') === topic && sameText(p.summary, ctx.item.content),
    );
    if (!found?.name) return null;
    if (found.state === 'REJECTED') throw new PublishError('refused', 'Google Business Profile rejected the post (state REJECTED)');
    return release(cfg, found);
  },

  async recentPosts(ctx): Promise<RecentPost[]> {
    const cfg = config(ctx.channel);
    return (await latestPosts(ctx, cfg))
      .filter((p) => p.name)
      .map((p) => {
        const { releaseId, releaseUrl } = release(cfg, p);
        return { id: releaseId, url: releaseUrl ?? '', text: p.summary, ...(p.createTime ? { at: Date.parse(p.createTime) } : {}) };
      });
  },

  tools: {
    listLocations: {
      description: 'The business locations the connected Google account manages (id as accounts/…/locations/…, title, address).',
      async run(ctx) {
        const found = await locations(ctx, config(ctx.channel).accessToken);
        return found.map(({ parent, location }) => ({ id: parent, name: location.title ?? parent, address: address(location) }));
      },
    },
  },
};
