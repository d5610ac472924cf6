/**
 * A local LinkedIn: the OAuth 2 consent screen and token endpoint, userinfo, the
 * versioned /rest API (organizationAcls, organizations, images and videos
 * initializeUpload + PUT, finalizeUpload, video status, posts, comments, the
 * organization share and follower statistics, lifetime or by time interval) with
 * LinkedIn's error bodies (401 EXPIRED_ACCESS_TOKEN, 403 ACCESS_DENIED, 422
 * DUPLICATE_POST, 426 NONEXISTENT_VERSION, 5xx), as learn.microsoft.com/linkedin
 * describes them. Its create endpoint is the Posts API (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const LINKEDIN_APP = { id: 'li-client', secret: 'li-secret' };
export const LINKEDIN_MEMBER = { sub: 'aBcD123', name: 'Ada Member' };
export const LINKEDIN_ORGS = [
  { id: '2414183', name: 'Herald Inc', vanityName: 'herald-inc', role: 'ADMINISTRATOR' },
  { id: '5550001', name: 'Side Project', vanityName: 'side-project', role: 'CONTENT_ADMINISTRATOR' },
  { id: '7770002', name: 'Only Analyst', vanityName: 'analyst-only', role: 'ANALYST' },
];
const PART = 4_194_304;
const DAY_MS = 86_400_000;

/** ShareStatisticsData: what organizationalEntityShareStatistics reports. */
export interface ShareStatisticsData {
  impressionCount: number;
  uniqueImpressionsCount: number;
  clickCount: number;
  likeCount: number;
  commentCount: number;
  shareCount: number;
  engagement: number;
}

const NO_SHARE_STATISTICS: ShareStatisticsData = {
  impressionCount: 0,
  uniqueImpressionsCount: 0,
  clickCount: 0,
  likeCount: 0,
  commentCount: 0,
  shareCount: 0,
  engagement: 0,
};

export interface LinkedInFake extends NetworkFake {
  /** Access tokens the fake accepts now. */
  tokens: Set<string>;
  refreshTokens: Set<string>;
  /** LinkedIn-Version values still active. */
  versions: Set<string>;
  posts: { urn: string; body: any; activity: string }[];
  comments: { urn: string; on: string; body: any }[];
  /** How long LinkedIn processes an uploaded image before it is AVAILABLE (wall-clock). */
  imageProcessingMs: number;
  /** A page's organic share counts of one UTC day, keyed "<organization URN> <YYYY-MM-DD>" (0 when not set; engagement is computed). */
  dailyShareStatistics: Map<string, Partial<Omit<ShareStatisticsData, 'engagement'>>>;
  /** A page's new followers of one UTC day, keyed like dailyShareStatistics. */
  dailyFollowerGains: Map<string, { organicFollowerGain?: number; paidFollowerGain?: number }>;
  /** One post's lifetime figures, by its share or ugcPost URN (0 when not set). */
  postStatistics: Map<string, Partial<ShareStatisticsData>>;
}

const error = (status: number, code: string, message: string, extra: Record<string, unknown> = {}): FakeAnswer => ({
  status,
  body: { status, code, message, ...extra },
});

export async function startLinkedInFake(): Promise<LinkedInFake> {
  let next = 100;
  const fake = (await startNetworkFake()) as LinkedInFake;
  Object.assign(fake, {
    tokens: new Set(),
    refreshTokens: new Set(),
    versions: new Set(['202609']),
    posts: [],
    comments: [],
    imageProcessingMs: 600,
    dailyShareStatistics: new Map(),
    dailyFollowerGains: new Map(),
    postStatistics: new Map(),
  });
  const uploads = new Map<
    string,
    { kind: 'image' | 'video'; owner: string; size?: number; parts: Buffer[]; etags: string[]; finalized?: boolean; looks: number; uploadedAt?: number }
  >();
  /** An image is WAITING_UPLOAD until its bytes arrive, then PROCESSING for a while, then AVAILABLE. */
  const imageStatus = (upload: { parts: Buffer[]; uploadedAt?: number }) =>
    upload.uploadedAt === undefined ? 'WAITING_UPLOAD' : Date.now() - upload.uploadedAt < fake.imageProcessingMs ? 'PROCESSING' : 'AVAILABLE';

  const issue = () => {
    const access = `AQV-access-${next++}`;
    const refresh = `AQX-refresh-${next++}`;
    fake.tokens.add(access);
    fake.refreshTokens.add(refresh);
    return {
      status: 200,
      body: {
        access_token: access,
        expires_in: 5_184_000,
        refresh_token: refresh,
        refresh_token_expires_in: 31_536_000,
        scope: fake.state.authorize?.scope ?? '',
      },
    };
  };

  const bearer = (request: RecordedRequest): FakeAnswer | undefined => {
    const token = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!fake.tokens.has(token)) return error(401, 'EXPIRED_ACCESS_TOKEN', 'The token used in the request has expired', { serviceErrorCode: 65602 });
    return undefined;
  };

  /** /rest calls: a valid token, an active LinkedIn-Version and the Rest.li 2.0 header. */
  const rest =
    (handler: (request: RecordedRequest) => FakeAnswer) =>
    (request: RecordedRequest): FakeAnswer => {
      const denied = bearer(request);
      if (denied) return denied;
      const version = String(request.headers['linkedin-version'] ?? '');
      if (!fake.versions.has(version)) return error(426, 'NONEXISTENT_VERSION', `Requested version ${version} is not active`);
      if (request.headers['x-restli-protocol-version'] !== '2.0.0') return error(400, 'INVALID_PROTOCOL', 'X-Restli-Protocol-Version 2.0.0 is required');
      return handler(request);
    };

  /**
   * The statistics finders (q=organizationalEntity): reporting data needs the
   * ADMINISTRATOR role on the page (rw_organization_admin); timeIntervals is a
   * Rest.li 2.0 record "(timeRange:(start:ms,end:ms),timeGranularityType:DAY)".
   */
  const statistics =
    (resource: string, answer: (organization: string, intervals: TimeRange[] | undefined, request: RecordedRequest) => FakeAnswer) =>
    (request: RecordedRequest): FakeAnswer => {
      if (request.query.q !== 'organizationalEntity') return error(400, 'ILLEGAL_ARGUMENT', 'q=organizationalEntity is required');
      const organization = request.query.organizationalEntity ?? '';
      const org = LINKEDIN_ORGS.find((o) => `urn:li:organization:${o.id}` === organization);
      if (!org) return error(400, 'ILLEGAL_ARGUMENT', `Invalid organizationalEntity: ${organization}`);
      if (org.role !== 'ADMINISTRATOR') {
        return error(403, 'ACCESS_DENIED', `Not enough permissions to access: ${resource}.GET.${String(request.headers['linkedin-version'])}01`, {
          serviceErrorCode: 100,
        });
      }
      let intervals: TimeRange[] | undefined;
      if (request.query.timeIntervals !== undefined) {
        intervals = timeIntervals(request.query.timeIntervals);
        if (!intervals) return error(400, 'ILLEGAL_ARGUMENT', `Invalid value for param timeIntervals: ${request.query.timeIntervals}`);
      }
      return answer(organization, intervals, request);
    };

  /** Sums a page's daily figures over [start, end). */
  const sumDays = <T extends object>(days: Map<string, Partial<T>>, organization: string, zero: T, start: number, end: number): T => {
    const total = { ...zero } as Record<string, number>;
    for (let t = start - (start % DAY_MS); t < end; t += DAY_MS) {
      const figures = days.get(`${organization} ${new Date(t).toISOString().slice(0, 10)}`) ?? {};
      for (const [k, v] of Object.entries(figures)) total[k] = (total[k] ?? 0) + (v as number);
    }
    return total as T;
  };
  /** A page's share figures over [start, end): engagement is (clicks + likes + comments + shares) / impressions. */
  const pageShareStatistics = (organization: string, start: number, end: number): ShareStatisticsData => {
    const total = sumDays(fake.dailyShareStatistics, organization, NO_SHARE_STATISTICS, start, end);
    const engaged = total.clickCount + total.likeCount + total.commentCount + total.shareCount;
    return { ...total, engagement: total.impressionCount ? engaged / total.impressionCount : 0 };
  };

  fake.route({
    'GET /oauth/v2/authorization': consentAllows('li-code-1'),
    'POST /oauth/v2/accessToken': (request) => {
      const f = request.form ?? {};
      if (f.client_id !== LINKEDIN_APP.id || f.client_secret !== LINKEDIN_APP.secret)
        return { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed' } };
      if (f.grant_type === 'authorization_code') {
        if (f.code !== 'li-code-1' || f.redirect_uri !== fake.state.authorize?.redirect_uri)
          return { status: 400, body: { error: 'invalid_request', error_description: 'Unable to retrieve access token: authorization code not found' } };
        return issue();
      }
      if (f.grant_type === 'refresh_token') {
        if (!fake.refreshTokens.has(f.refresh_token))
          return { status: 400, body: { error: 'invalid_request', error_description: 'The provided refresh token is invalid' } };
        return issue();
      }
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    },
    'GET /v2/userinfo': (request) =>
      bearer(request) ?? {
        status: 200,
        body: { sub: LINKEDIN_MEMBER.sub, name: LINKEDIN_MEMBER.name, picture: 'https://media.licdn.com/p/1.jpg', locale: { country: 'US', language: 'en' } },
      },
    'GET /rest/organizationAcls': rest((request) => {
      if (request.query.q !== 'roleAssignee') return error(400, 'ILLEGAL_ARGUMENT', 'q=roleAssignee is required');
      const elements = LINKEDIN_ORGS.map((o) => ({
        organization: `urn:li:organization:${o.id}`,
        role: o.role,
        state: 'APPROVED',
        roleAssignee: `urn:li:person:${LINKEDIN_MEMBER.sub}`,
      }));
      return { status: 200, body: { elements, paging: { start: 0, count: 100, total: elements.length } } };
    }),
    'GET /rest/organizations/:id': rest((request) => {
      const org = LINKEDIN_ORGS.find((o) => o.id === request.params.id);
      return org ? { status: 200, body: { id: Number(org.id), localizedName: org.name, vanityName: org.vanityName } } : error(404, 'NOT_FOUND', 'Not found');
    }),
    'POST /rest/images': rest((request) => {
      const owner = request.json?.initializeUploadRequest?.owner;
      if (request.query.action !== 'initializeUpload' || !owner) return error(400, 'ILLEGAL_ARGUMENT', 'initializeUploadRequest.owner is required');
      const id = `C4E10AQ${next++}`;
      uploads.set(id, { kind: 'image', owner, parts: [], etags: [], looks: 0 });
      return {
        status: 200,
        body: { value: { uploadUrlExpiresAt: Date.now() + 3_600_000, uploadUrl: `${fake.url}/dms-uploads/image/${id}`, image: `urn:li:image:${id}` } },
      };
    }),
    'PUT /dms-uploads/image/:id': (request) => {
      const denied = bearer(request);
      if (denied) return denied;
      const upload = uploads.get(request.params.id);
      upload?.parts.push(request.raw);
      if (upload) upload.uploadedAt = Date.now();
      return { status: 201 };
    },
    'POST /rest/videos': rest((request) => {
      if (request.query.action === 'initializeUpload') {
        const init = request.json?.initializeUploadRequest ?? {};
        if (!init.owner || !init.fileSizeBytes) return error(400, 'ILLEGAL_ARGUMENT', 'owner and fileSizeBytes are required');
        const id = `D5610AQ${next++}`;
        uploads.set(id, { kind: 'video', owner: init.owner, size: init.fileSizeBytes, parts: [], etags: [], looks: 0 });
        const uploadInstructions = [];
        for (let first = 0, n = 0; first < init.fileSizeBytes; first += PART, n++) {
          uploadInstructions.push({
            uploadUrl: `${fake.url}/dms-uploads/video/${id}/${n}`,
            firstByte: first,
            lastByte: Math.min(first + PART, init.fileSizeBytes) - 1,
          });
        }
        return {
          status: 200,
          body: { value: { uploadUrlsExpireAt: Date.now() + 3_600_000, video: `urn:li:video:${id}`, uploadInstructions, uploadToken: `token-${id}` } },
        };
      }
      if (request.query.action === 'finalizeUpload') {
        const f = request.json?.finalizeUploadRequest ?? {};
        const id = String(f.video ?? '')
          .split(':')
          .pop()!;
        const upload = uploads.get(id);
        if (!upload || f.uploadToken !== `token-${id}` || JSON.stringify(f.uploadedPartIds) !== JSON.stringify(upload.etags))
          return error(400, 'ILLEGAL_ARGUMENT', 'uploadedPartIds do not match the parts uploaded');
        upload.finalized = true;
        return { status: 200, body: {} };
      }
      return error(400, 'ILLEGAL_ARGUMENT', 'unknown action');
    }),
    'PUT /dms-uploads/video/:id/:part': (request) => {
      const denied = bearer(request);
      if (denied) return denied;
      const upload = uploads.get(request.params.id);
      if (!upload) return { status: 404 };
      upload.parts[Number(request.params.part)] = request.raw;
      const etag = `/ambry-video/signedId/${request.params.id}-${request.params.part}`;
      upload.etags[Number(request.params.part)] = etag;
      return { status: 200, headers: { etag } };
    },
    'GET /rest/images/:urn': rest((request) => {
      const upload = uploads.get(request.params.urn.split(':').pop()!);
      if (upload?.kind !== 'image') return error(404, 'NOT_FOUND', 'Not found');
      return { status: 200, body: { id: request.params.urn, status: imageStatus(upload), owner: upload.owner } };
    }),
    'GET /rest/videos/:urn': rest((request) => {
      const upload = uploads.get(request.params.urn.split(':').pop()!);
      if (!upload) return error(404, 'NOT_FOUND', 'Not found');
      // Processing takes one look after finalizing.
      const status = !upload.finalized ? 'WAITING_UPLOAD' : upload.looks++ === 0 ? 'PROCESSING' : 'AVAILABLE';
      return { status: 200, body: { id: request.params.urn, status, owner: upload.owner } };
    }),
    'POST /rest/posts': rest((request) => {
      const body = request.json ?? {};
      if (!body.author || body.lifecycleState !== 'PUBLISHED' || !body.distribution)
        return error(422, 'UNPROCESSABLE_ENTITY', 'author, distribution and lifecycleState are required');
      const dup = fake.posts.find((p) => p.body.author === body.author && p.body.commentary === body.commentary);
      if (dup)
        return error(422, 'UNPROCESSABLE_ENTITY', `ERROR :: /commentary :: Content is a duplicate of ${dup.urn}`, {
          errorDetails: { inputErrors: [{ code: 'DUPLICATE_POST' }] },
        });
      for (const id of [body.content?.media?.id, ...(body.content?.multiImage?.images ?? []).map((i: { id: string }) => i.id)].filter(Boolean)) {
        const upload = uploads.get(String(id).split(':').pop()!);
        if (!upload || upload.parts.length === 0 || upload.owner !== body.author)
          return error(400, 'ILLEGAL_ARGUMENT', `media ${id} was not uploaded by ${body.author}`);
        // A post may use an image only once LinkedIn has processed it.
        if (upload.kind === 'image' && imageStatus(upload) !== 'AVAILABLE') return error(400, 'ILLEGAL_ARGUMENT', `media ${id} is not AVAILABLE yet`);
      }
      const urn = `urn:li:share:${7_000_000_000 + next++}`;
      // Every post also has a feed activity, whose id is a number of its own (not the share's).
      fake.posts.push({ urn, body, activity: `urn:li:activity:${8_000_000_000 + next++}` });
      return { status: 201, headers: { 'x-restli-id': urn } };
    }),
    'POST /rest/socialActions/:urn/comments': rest((request) => {
      const on = request.params.urn;
      const body = request.json ?? {};
      if (body.object !== on || !body.actor || !body.message?.text)
        return error(400, 'ILLEGAL_ARGUMENT', 'actor, object (the URN in the path) and message.text are required');
      // Comments are made on the post (its share or ugcPost URN), as the Comments API documents; an activity is not a post.
      const target = fake.posts.find((p) => p.urn === on);
      if (!target) return error(404, 'NOT_FOUND', `${on} does not exist`);
      const id = String(6_000_000_000 + next++);
      // LinkedIn names the comment by the post's activity.
      const urn = `urn:li:comment:(${target.activity},${id})`;
      fake.comments.push({ urn, on, body });
      return { status: 201, body: { actor: body.actor, object: on, message: body.message, id, $URN: urn } };
    }),
    'GET /rest/organizationalEntityShareStatistics': rest(
      statistics('organizationalEntityShareStatistics', (organization, intervals, request) => {
        const shares = restliList(request.query.shares);
        const ugcPosts = restliList(request.query.ugcPosts);
        if (shares === null || ugcPosts === null) return error(400, 'ILLEGAL_ARGUMENT', 'shares and ugcPosts take a List(...) of URNs');
        if (shares || ugcPosts) {
          // Statistics of the page's own posts, over their lifetime.
          const asked = [...(shares ?? []).map((urn) => ({ urn, field: 'share' })), ...(ugcPosts ?? []).map((urn) => ({ urn, field: 'ugcPost' }))];
          const elements = asked
            .filter(({ urn }) => fake.posts.some((p) => p.urn === urn && p.body.author === organization))
            .map(({ urn, field }) => ({
              [field]: urn,
              organizationalEntity: organization,
              totalShareStatistics: { ...NO_SHARE_STATISTICS, ...fake.postStatistics.get(urn) },
            }));
          return { status: 200, body: { paging: { start: 0, count: 10, links: [] }, elements } };
        }
        if (!intervals)
          return {
            status: 200,
            body: {
              paging: { start: 0, count: 10, links: [] },
              elements: [
                { organizationalEntity: organization, totalShareStatistics: pageShareStatistics(organization, Date.now() - 365 * DAY_MS, Date.now()) },
              ],
            },
          };
        const elements = intervals.map((timeRange) => ({
          organizationalEntity: organization,
          timeRange,
          totalShareStatistics: pageShareStatistics(organization, timeRange.start, timeRange.end),
        }));
        return { status: 200, body: { paging: { start: 0, count: 10, links: [] }, elements } };
      }),
    ),
    'GET /rest/organizationalEntityFollowerStatistics': rest(
      statistics('organizationalEntityFollowerStatistics', (organization, intervals) => {
        // Lifetime statistics are demographic facets (left empty here); gains come only by time interval.
        if (!intervals)
          return {
            status: 200,
            body: {
              paging: { start: 0, count: 10, links: [] },
              elements: [
                {
                  organizationalEntity: organization,
                  followerCountsByFunction: [],
                  followerCountsBySeniority: [],
                  followerCountsByIndustry: [],
                  followerCountsByGeoCountry: [],
                  followerCountsByStaffCountRange: [],
                  followerCountsByAssociationType: [],
                },
              ],
            },
          };
        const zero = { organicFollowerGain: 0, paidFollowerGain: 0 };
        const elements = intervals.map((timeRange) => ({
          organizationalEntity: organization,
          timeRange,
          followerGains: sumDays(fake.dailyFollowerGains, organization, zero, timeRange.start, timeRange.end),
        }));
        return { status: 200, body: { paging: { start: 0, count: 10, links: [] }, elements } };
      }),
    ),
  });
  // Store, then answer a 5xx (`storeThenFail`) on the Posts API: LinkedIn's error body, its code the status's name (INTERNAL_SERVER_ERROR).
  fake.create = {
    route: 'POST /rest/posts',
    serverError: (status) => {
      const words = STATUS_CODES[status] ?? 'Internal Server Error';
      return error(status, words.toUpperCase().replace(/\W+/g, '_'), words);
    },
  };
  return fake;
}

interface TimeRange {
  start: number;
  end: number;
}

/**
 * The buckets a Rest.li timeIntervals record asks for (DAY, WEEK or MONTH), cut
 * to the data LinkedIn keeps (a rolling 12 months, nothing after now); undefined
 * when the record does not parse.
 */
function timeIntervals(value: string): TimeRange[] | undefined {
  const record = /^\((.*)\)$/.exec(value)?.[1];
  const range = record && /(?:^|,)timeRange:\(start:(\d+),end:(\d+)\)(?:,|$)/.exec(record);
  const granularity = record && /(?:^|,)timeGranularityType:(DAY|WEEK|MONTH)(?:,|$)/.exec(record)?.[1];
  if (!range || !granularity) return undefined;
  const [start, end] = [Number(range[1]), Number(range[2])];
  if (end <= start) return undefined;
  const next = (t: number) => {
    if (granularity === 'DAY') return t + DAY_MS;
    if (granularity === 'WEEK') return t + 7 * DAY_MS;
    const d = new Date(t);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
  };
  const kept = Date.now() - 365 * DAY_MS;
  const buckets: TimeRange[] = [];
  for (let t = start; t < end && t <= Date.now(); t = next(t)) {
    const bucket = { start: t, end: Math.min(next(t), end) };
    if (bucket.end > kept) buckets.push(bucket);
  }
  return buckets;
}

/** A Rest.li 2.0 List(a,b) of URNs (encoded inside, decoded here); undefined when absent, null when malformed. */
function restliList(value: string | undefined): string[] | undefined | null {
  if (value === undefined) return undefined;
  const inner = /^List\((.*)\)$/.exec(value)?.[1];
  if (inner === undefined) return null;
  return inner === '' ? [] : inner.split(',');
}
