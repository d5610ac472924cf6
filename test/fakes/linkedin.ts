/**
 * A local LinkedIn: the OAuth 2 consent screen and token endpoint, userinfo, the
 * versioned /rest API (organizationAcls, organizations, images and videos
 * initializeUpload + PUT, finalizeUpload, video status, posts, comments) with
 * LinkedIn's error bodies (401 EXPIRED_ACCESS_TOKEN, 422 DUPLICATE_POST, 426
 * NONEXISTENT_VERSION), as learn.microsoft.com/linkedin describes them.
 */
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const LINKEDIN_APP = { id: 'li-client', secret: 'li-secret' };
export const LINKEDIN_MEMBER = { sub: 'aBcD123', name: 'Ada Member' };
export const LINKEDIN_ORGS = [
  { id: '2414183', name: 'Herald Inc', vanityName: 'herald-inc', role: 'ADMINISTRATOR' },
  { id: '5550001', name: 'Side Project', vanityName: 'side-project', role: 'CONTENT_ADMINISTRATOR' },
  { id: '7770002', name: 'Only Analyst', vanityName: 'analyst-only', role: 'ANALYST' },
];
const PART = 4_194_304;

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
}

const error = (status: number, code: string, message: string, extra: Record<string, unknown> = {}): FakeAnswer => ({ status, body: { status, code, message, ...extra } });

export async function startLinkedInFake(): Promise<LinkedInFake> {
  let next = 100;
  const fake = (await startNetworkFake()) as LinkedInFake;
  Object.assign(fake, { tokens: new Set(), refreshTokens: new Set(), versions: new Set(['202609']), posts: [], comments: [], imageProcessingMs: 600 });
  const uploads = new Map<string, { kind: 'image' | 'video'; owner: string; size?: number; parts: Buffer[]; etags: string[]; finalized?: boolean; looks: number; uploadedAt?: number }>();
  /** An image is WAITING_UPLOAD until its bytes arrive, then PROCESSING for a while, then AVAILABLE. */
  const imageStatus = (upload: { parts: Buffer[]; uploadedAt?: number }) =>
    upload.uploadedAt === undefined ? 'WAITING_UPLOAD' : Date.now() - upload.uploadedAt < fake.imageProcessingMs ? 'PROCESSING' : 'AVAILABLE';

  const issue = () => {
    const access = `AQV-access-${next++}`;
    const refresh = `AQX-refresh-${next++}`;
    fake.tokens.add(access);
    fake.refreshTokens.add(refresh);
    return { status: 200, body: { access_token: access, expires_in: 5_184_000, refresh_token: refresh, refresh_token_expires_in: 31_536_000, scope: fake.state.authorize?.scope ?? '' } };
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

  fake.route({
    'GET /oauth/v2/authorization': consentAllows('li-code-1'),
    'POST /oauth/v2/accessToken': (request) => {
      const f = request.form ?? {};
      if (f.client_id !== LINKEDIN_APP.id || f.client_secret !== LINKEDIN_APP.secret) return { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed' } };
      if (f.grant_type === 'authorization_code') {
        if (f.code !== 'li-code-1' || f.redirect_uri !== fake.state.authorize?.redirect_uri) return { status: 400, body: { error: 'invalid_request', error_description: 'Unable to retrieve access token: authorization code not found' } };
        return issue();
      }
      if (f.grant_type === 'refresh_token') {
        if (!fake.refreshTokens.has(f.refresh_token)) return { status: 400, body: { error: 'invalid_request', error_description: 'The provided refresh token is invalid' } };
        return issue();
      }
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    },
    'GET /v2/userinfo': (request) => bearer(request) ?? { status: 200, body: { sub: LINKEDIN_MEMBER.sub, name: LINKEDIN_MEMBER.name, picture: 'https://media.licdn.com/p/1.jpg', locale: { country: 'US', language: 'en' } } },
    'GET /rest/organizationAcls': rest((request) => {
      if (request.query.q !== 'roleAssignee') return error(400, 'ILLEGAL_ARGUMENT', 'q=roleAssignee is required');
      const elements = LINKEDIN_ORGS.map((o) => ({ organization: `urn:li:organization:${o.id}`, role: o.role, state: 'APPROVED', roleAssignee: `urn:li:person:${LINKEDIN_MEMBER.sub}` }));
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
      return { status: 200, body: { value: { uploadUrlExpiresAt: Date.now() + 3_600_000, uploadUrl: `${fake.url}/dms-uploads/image/${id}`, image: `urn:li:image:${id}` } } };
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
          uploadInstructions.push({ uploadUrl: `${fake.url}/dms-uploads/video/${id}/${n}`, firstByte: first, lastByte: Math.min(first + PART, init.fileSizeBytes) - 1 });
        }
        return { status: 200, body: { value: { uploadUrlsExpireAt: Date.now() + 3_600_000, video: `urn:li:video:${id}`, uploadInstructions, uploadToken: `token-${id}` } } };
      }
      if (request.query.action === 'finalizeUpload') {
        const f = request.json?.finalizeUploadRequest ?? {};
        const id = String(f.video ?? '').split(':').pop()!;
        const upload = uploads.get(id);
        if (!upload || f.uploadToken !== `token-${id}` || JSON.stringify(f.uploadedPartIds) !== JSON.stringify(upload.etags)) return error(400, 'ILLEGAL_ARGUMENT', 'uploadedPartIds do not match the parts uploaded');
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
      if (!upload || upload.kind !== 'image') return error(404, 'NOT_FOUND', 'Not found');
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
      if (!body.author || body.lifecycleState !== 'PUBLISHED' || !body.distribution) return error(422, 'UNPROCESSABLE_ENTITY', 'author, distribution and lifecycleState are required');
      const dup = fake.posts.find((p) => p.body.author === body.author && p.body.commentary === body.commentary);
      if (dup) return error(422, 'UNPROCESSABLE_ENTITY', `ERROR :: /commentary :: Content is a duplicate of ${dup.urn}`, { errorDetails: { inputErrors: [{ code: 'DUPLICATE_POST' }] } });
      for (const id of [body.content?.media?.id, ...(body.content?.multiImage?.images ?? []).map((i: { id: string }) => i.id)].filter(Boolean)) {
        const upload = uploads.get(String(id).split(':').pop()!);
        if (!upload || upload.parts.length === 0 || upload.owner !== body.author) return error(400, 'ILLEGAL_ARGUMENT', `media ${id} was not uploaded by ${body.author}`);
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
      if (body.object !== on || !body.actor || !body.message?.text) return error(400, 'ILLEGAL_ARGUMENT', 'actor, object (the URN in the path) and message.text are required');
      // Comments are made on the post (its share or ugcPost URN), as the Comments API documents; an activity is not a post.
      const target = fake.posts.find((p) => p.urn === on);
      if (!target) return error(404, 'NOT_FOUND', `${on} does not exist`);
      const id = String(6_000_000_000 + next++);
      // LinkedIn names the comment by the post's activity.
      const urn = `urn:li:comment:(${target.activity},${id})`;
      fake.comments.push({ urn, on, body });
      return { status: 201, body: { actor: body.actor, object: on, message: body.message, id, $URN: urn } };
    }),
  });
  return fake;
}
