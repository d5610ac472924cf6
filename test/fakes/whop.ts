/**
 * A local stand-in for Whop's OAuth 2.1 and REST API as its fact sheet describes
 * them: the authorize page (PKCE S256 and a nonce required), the JSON token
 * endpoint (the verifier checked; one-hour access tokens; refresh tokens that
 * rotate, a used one answering invalid_grant), userinfo, and the API under
 * /api/v1 with Api-Version-Date (an unknown date is a 400 listing the supported
 * ones; the Files API needs 2026-08-21-1 or later): files created, their bytes
 * PUT to the upload URL with its headers, then pending → ready after a short real
 * delay (or failed on demand); forum posts (Bearer with forum:post:create, a
 * known experience, attachments of ready files, comments by parent_id) and their
 * list; companies and forums. Its create endpoint is forum post creation
 * (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { redeemsConsent, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const CLIENT_ID = 'app_herald_whop';
export const VERSIONS = ['2025-01-01', '2026-06-09', '2026-08-21-1'];

export interface StoredFile {
  id: string;
  filename: string;
  bytes?: Buffer;
  headersSeen?: Record<string, string | string[] | undefined>;
  status: 'pending' | 'processing' | 'ready' | 'failed';
  readyAt?: number;
}

export interface StoredPost {
  id: string;
  experience_id: string;
  company_id?: string;
  title?: string | null;
  content: string;
  parent_id: string | null;
  attachments: { id: string }[];
  created_at: string;
}

export interface WhopFake extends NetworkFake {
  user: { sub: string; name: string; preferred_username: string; picture: string };
  companies: { id: string; title: string; forums: { id: string; name: string }[] }[];
  /** Access token → { scopes, expiresAt }. */
  accessTokens: Map<string, { scopes: string[]; expiresAt: number }>;
  refreshTokens: Set<string>;
  files: Map<string, StoredFile>;
  posts: StoredPost[];
  /** How long an uploaded file stays pending. */
  processingMs: number;
  /** The next uploaded file ends in failed. */
  failNextFile: boolean;
}

function apiError(status: number, type: string, message: string): FakeAnswer {
  return { status, body: { error: { type, message } } };
}

export async function startWhopFake(): Promise<WhopFake> {
  let issued = 0;
  let ids = 0;
  let fileIds = 0;
  const fake = (await startNetworkFake()) as WhopFake;
  fake.user = { sub: 'user_Ada42', name: 'Ada Member', preferred_username: 'ada', picture: 'https://img.whop.example/ada.png' };
  fake.companies = [
    {
      id: 'biz_Studio',
      title: 'Studio Club',
      forums: [
        { id: 'exp_General', name: 'General' },
        { id: 'exp_Announce', name: 'Announcements' },
      ],
    },
  ];
  fake.accessTokens = new Map();
  fake.refreshTokens = new Set();
  fake.files = new Map();
  fake.posts = [];
  fake.processingMs = 300;
  fake.failNextFile = false;

  const issue = (scopes: string[]) => {
    issued++;
    const access = `whop-access-${issued}`;
    const refresh = `whop-refresh-${issued}`;
    fake.accessTokens.set(access, { scopes, expiresAt: Date.now() + 3600_000 });
    fake.refreshTokens.add(refresh);
    fake.state.scopes = scopes;
    return { access_token: access, refresh_token: refresh, expires_in: 3600, token_type: 'Bearer', id_token: 'eyJhbGciOiJub25lIn0.e30.' };
  };
  const caller = (request: RecordedRequest): { scopes: string[] } | FakeAnswer => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const found = token ? fake.accessTokens.get(token) : undefined;
    if (!found || found.expiresAt < Date.now())
      return { status: 401, body: { error: 'invalid_token', error_description: 'The access token is invalid or expired.' } };
    return found;
  };
  /** Auth, then the Api-Version-Date rules. */
  const api = (request: RecordedRequest, needsFilesApi = false): { scopes: string[] } | FakeAnswer => {
    const who = caller(request);
    if (!('scopes' in who)) return who;
    const version = request.headers['api-version-date'] as string | undefined;
    if (version !== undefined && !VERSIONS.includes(version)) {
      return apiError(400, 'invalid_request', `Unknown Api-Version-Date "${version}". Supported versions: ${VERSIONS.join(', ')}`);
    }
    if (needsFilesApi && (version ?? '2025-01-01') < '2026-08-21-1') {
      return apiError(400, 'invalid_request', 'Direct file uploads need Api-Version-Date 2026-08-21-1 or later.');
    }
    return who;
  };
  const settle = (file: StoredFile) => {
    if (file.status === 'pending' && file.readyAt !== undefined && file.readyAt <= Date.now())
      file.status = file.id === fake.state.failing ? 'failed' : 'ready';
    return file;
  };

  fake.route({
    'GET /oauth/authorize': (request) => {
      fake.state.authorize = request.query;
      const target = new URL(request.query.redirect_uri);
      if (request.query.code_challenge_method !== 'S256' || !request.query.code_challenge || !request.query.nonce) {
        target.searchParams.set('error', 'invalid_request');
        target.searchParams.set('error_description', 'PKCE (S256) and a nonce are required');
      } else target.searchParams.set('code', 'whop-code');
      if (request.query.state) target.searchParams.set('state', request.query.state);
      return { status: 302, headers: { location: target.toString() } };
    },

    'POST /oauth/token': (request) => {
      const body = request.json ?? {};
      if (body.client_id !== CLIENT_ID) return { status: 401, body: { error: 'invalid_client', error_description: 'Unknown client' } };
      if (body.grant_type === 'authorization_code') {
        const pending = fake.state.authorize;
        if (!redeemsConsent(fake, body, 'whop-code')) {
          return { status: 400, body: { error: 'invalid_grant', error_description: 'The authorization code or verifier is invalid.' } };
        }
        return { body: issue(String(pending.scope ?? '').split(' ')) };
      }
      if (body.grant_type === 'refresh_token') {
        // Rotating: a refresh token works once.
        if (!fake.refreshTokens.delete(body.refresh_token)) {
          return { status: 400, body: { error: 'invalid_grant', error_description: 'The refresh token is invalid, expired or was already used.' } };
        }
        return { body: issue(fake.state.scopes ?? []) };
      }
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    },

    'GET /oauth/userinfo': (request) => {
      const who = caller(request);
      return 'scopes' in who ? { body: fake.user } : who;
    },

    'POST /api/v1/files': (request) => {
      const who = api(request, true);
      if (!('scopes' in who)) return who;
      if (!request.json?.filename) return apiError(400, 'invalid_request', 'filename is required');
      fileIds++;
      const id = `file_${fileIds}`;
      fake.files.set(id, { id, filename: request.json.filename, status: 'pending' });
      if (fake.failNextFile) {
        fake.state.failing = id;
        fake.failNextFile = false;
      }
      return {
        body: {
          id,
          upload_status: 'pending',
          upload_url: `${fake.url}/upload/${id}?signature=abc`,
          upload_headers: { 'content-type': 'application/octet-stream', 'x-amz-meta-file': id },
        },
      };
    },

    'PUT /upload/:id': (request) => {
      const file = fake.files.get(request.params.id);
      if (!file || request.query.signature !== 'abc') return { status: 403, body: '<Error><Code>AccessDenied</Code></Error>' };
      if (request.headers['x-amz-meta-file'] !== file.id) return { status: 403, body: '<Error><Code>SignatureDoesNotMatch</Code></Error>' };
      file.bytes = request.raw;
      file.headersSeen = request.headers;
      file.readyAt = Date.now() + fake.processingMs;
      return { status: 200 };
    },

    'GET /api/v1/files/:id': (request) => {
      const who = api(request, true);
      if (!('scopes' in who)) return who;
      const file = fake.files.get(request.params.id);
      if (!file) return apiError(404, 'not_found', 'File not found');
      settle(file);
      return { body: { id: file.id, upload_status: file.status, filename: file.filename, size: file.bytes?.length ?? null } };
    },

    'POST /api/v1/forum_posts': (request) => {
      const who = api(request);
      if (!('scopes' in who)) return who;
      if (!who.scopes.includes('forum:post:create'))
        return { status: 403, body: { error: 'insufficient_scope', error_description: 'forum:post:create is required' } };
      const body = request.json ?? {};
      if (!body.experience_id) return apiError(400, 'invalid_request', 'experience_id is required');
      const company = body.experience_id === 'public' ? fake.companies.find((c) => c.id === body.company_id) : undefined;
      const forum = fake.companies.flatMap((c) => c.forums).find((f) => f.id === body.experience_id);
      if (!forum && !company) return apiError(404, 'not_found', 'Experience not found');
      if (body.parent_id && !fake.posts.some((p) => p.id === body.parent_id)) return apiError(404, 'not_found', 'Parent post not found');
      for (const a of body.attachments ?? []) {
        const file = fake.files.get(a?.id);
        if (!file || settle(file).status !== 'ready') return apiError(400, 'invalid_request', `Attachment ${a?.id} is not an uploaded file`);
      }
      ids++;
      const post: StoredPost = {
        id: `post_${ids}`,
        experience_id: body.experience_id,
        ...(company ? { company_id: company.id } : {}),
        title: body.title ?? null,
        content: body.content ?? '',
        parent_id: body.parent_id ?? null,
        attachments: body.attachments ?? [],
        created_at: new Date().toISOString(),
      };
      fake.posts.push(post);
      return {
        status: 201,
        body: {
          id: post.id,
          title: post.title,
          content: post.content,
          is_edited: false,
          is_poster_admin: false,
          is_pinned: false,
          parent_id: post.parent_id,
          user: { id: fake.user.sub, username: fake.user.preferred_username, name: fake.user.name },
          view_count: 0,
          like_count: 0,
          comment_count: 0,
        },
      };
    },

    'GET /api/v1/forum_posts': (request) => {
      const who = api(request);
      if (!('scopes' in who)) return who;
      const first = Math.min(Number(request.query.first) || 10, 100);
      const matching = fake.posts
        .filter((p) => p.experience_id === request.query.experience_id && (p.parent_id ?? '') === (request.query.parent_id ?? ''))
        .reverse()
        .slice(0, first);
      return { body: { data: matching.map((p) => ({ id: p.id, content: p.content, parent_id: p.parent_id, created_at: p.created_at })) } };
    },

    'GET /api/v1/companies': (request) => {
      const who = api(request);
      if (!('scopes' in who)) return who;
      return { body: { data: fake.companies.map((c) => ({ id: c.id, title: c.title })) } };
    },

    'GET /api/v1/forums': (request) => {
      const who = api(request);
      if (!('scopes' in who)) return who;
      const company = fake.companies.find((c) => c.id === request.query.company_id);
      if (!company) return apiError(404, 'not_found', 'Company not found');
      return { body: { data: company.forums.map((f) => ({ id: `forum_${f.id}`, experience: { id: f.id, name: f.name } })) } };
    },
  });
  // Store, then answer a 5xx (`storeThenFail`) on forum post creation, in Whop's error shape.
  fake.create = {
    route: 'POST /api/v1/forum_posts',
    serverError: (status) => apiError(status, 'server_error', STATUS_CODES[status] ?? 'Internal Server Error'),
  };
  return fake;
}
