/**
 * A local AT Protocol PDS speaking the XRPC methods Herald uses, as the
 * lexicons and docs.bsky.app describe them: createSession / refreshSession
 * (JWTs with `exp`, rotating refresh tokens), getProfile, resolveHandle,
 * uploadBlob, createRecord (validating text length in graphemes and bytes,
 * langs, and that every blob an embed names was uploaded, and refusing an rkey
 * already used), getRecord, and XRPC errors {"error", "message"} — an expired
 * access token is a 400 ExpiredToken. It also plays video.bsky.app: a service
 * token from getServiceAuth, uploadVideo, a job processed over wall-clock time,
 * then getJobStatus with the blob the service stored on the PDS. Its create
 * endpoint is createRecord (`storeThenFail`).
 */
import crypto from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const DID = 'did:plc:heraldtest0000000000000';
export const HANDLE = 'herald.test';
export const APP_PASSWORD = 'abcd-efgh-ijkl-mnop';

export interface StoredRecord {
  uri: string;
  cid: string;
  rkey: string;
  value: any;
}

export interface BlueskyFake extends NetworkFake {
  accessTokens: Set<string>;
  refreshTokens: Set<string>;
  /** Handles resolveHandle knows. */
  handles: Map<string, string>;
  blobs: { cid: string; mimeType: string; bytes: Buffer }[];
  records: StoredRecord[];
  /** The next record is stored, but the answer is not JSON (an unknown outcome for the client). */
  garbleNextCreate?: boolean;
  /** Video jobs of the video service. */
  videoJobs: Map<string, { did: string; bytes: Buffer; mimeType: string; readyAt: number; blob?: unknown; error?: string }>;
  /** The profile's follower count, and what people did with each post (by URI), as the AppView reports them. */
  followers: number;
  counts: Map<string, { likeCount: number; repostCount: number; replyCount: number; quoteCount: number }>;
  /** How long the video service processes a video (wall-clock). */
  videoProcessingMs: number;
  /** The next video job fails with this error once processed. */
  failNextVideo?: string;
}

function xrpcError(status: number, error: string, message: string): FakeAnswer {
  return { status, body: { error, message } };
}

function jwt(payload: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ typ: 'at+jwt', alg: 'ES256K' })}.${part(payload)}.${crypto.randomBytes(32).toString('base64url')}`;
}

function cidOf(bytes: Buffer | string): string {
  return `bafyrei${crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 52)}`;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export async function startBlueskyFake(): Promise<BlueskyFake> {
  const fake = (await startNetworkFake()) as BlueskyFake;
  fake.accessTokens = new Set();
  fake.refreshTokens = new Set();
  fake.handles = new Map([['alice.test', 'did:plc:alice000000000000000000']]);
  fake.blobs = [];
  fake.records = [];
  fake.videoJobs = new Map();
  fake.followers = 0;
  fake.counts = new Map();
  fake.videoProcessingMs = 0;
  /** Service tokens getServiceAuth issued: token → what it allows. */
  const serviceTokens = new Map<string, { aud: string; lxm: string; exp: number }>();
  const storeBlob = (bytes: Buffer, mimeType: string) => {
    const cid = cidOf(bytes);
    fake.blobs.push({ cid, mimeType, bytes });
    return { $type: 'blob', ref: { $link: cid }, mimeType, size: bytes.length };
  };
  /** What a stored blob is, or why a record may not embed it. */
  const blobProblem = (blob: any, accept: RegExp, maxSize: number): string | undefined => {
    const stored = fake.blobs.find((b) => b.cid === blob?.ref?.$link);
    if (!stored) return 'Could not find blob';
    if (!accept.test(stored.mimeType)) return `Wrong type of file: ${stored.mimeType}`;
    if (stored.bytes.length > maxSize) return `This file is too large. It is ${stored.bytes.length} bytes but the maximum size is ${maxSize} bytes.`;
    return undefined;
  };

  const session = () => {
    const now = Math.floor(Date.now() / 1000);
    const accessJwt = jwt({ scope: 'com.atproto.appPass', sub: DID, iat: now, exp: now + 7200, jti: crypto.randomUUID() });
    const refreshJwt = jwt({ scope: 'com.atproto.refresh', sub: DID, iat: now, exp: now + 90 * 86400, jti: crypto.randomUUID() });
    fake.accessTokens.add(accessJwt);
    fake.refreshTokens.add(refreshJwt);
    return {
      accessJwt,
      refreshJwt,
      handle: HANDLE,
      did: DID,
      didDoc: {
        '@context': ['https://www.w3.org/ns/did/v1'],
        id: DID,
        service: [{ id: '#atproto_pds', type: 'AtprotoPersonalDataServer', serviceEndpoint: fake.url }],
      },
      active: true,
    };
  };
  const bearer = (request: RecordedRequest) => /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  const denied = (request: RecordedRequest): FakeAnswer | undefined => {
    const token = bearer(request);
    if (!token) return xrpcError(401, 'AuthenticationRequired', 'Authentication Required');
    if (!fake.accessTokens.has(token)) return xrpcError(400, 'ExpiredToken', 'Token has expired');
    return undefined;
  };

  fake.route({
    'POST /xrpc/com.atproto.server.createSession': (request) => {
      const { identifier, password } = request.json ?? {};
      if ((identifier !== HANDLE && identifier !== DID) || password !== APP_PASSWORD)
        return xrpcError(401, 'AuthenticationRequired', 'Invalid identifier or password');
      return { body: session() };
    },

    'POST /xrpc/com.atproto.server.refreshSession': (request) => {
      const token = bearer(request);
      // Rotation: a refresh token works once.
      if (!token || !fake.refreshTokens.delete(token)) return xrpcError(400, 'ExpiredToken', 'Token has expired');
      return { body: session() };
    },

    'GET /xrpc/app.bsky.actor.getProfile': (request) =>
      denied(request) ??
      (request.query.actor === DID
        ? {
            body: {
              did: DID,
              handle: HANDLE,
              displayName: 'Herald on Bluesky',
              avatar: 'https://cdn.bsky.example/avatar.jpg',
              followersCount: fake.followers,
              followsCount: 12,
              postsCount: fake.records.length,
            },
          }
        : xrpcError(400, 'InvalidRequest', 'Profile not found')),

    // The AppView's view of posts (getPosts answers only the ones it knows; a deleted one is left out).
    'GET /xrpc/app.bsky.feed.getPosts': (request) => {
      const no = denied(request);
      if (no) return no;
      const uris = ([] as string[]).concat(request.query.uris ?? []);
      const posts = fake.records
        .filter((r) => uris.includes(r.uri))
        .map((r) => ({
          uri: r.uri,
          cid: r.cid,
          author: { did: DID, handle: HANDLE },
          record: r.value,
          indexedAt: r.value.createdAt,
          ...(fake.counts.get(r.uri) ?? { likeCount: 0, repostCount: 0, replyCount: 0, quoteCount: 0 }),
        }));
      return { body: { posts } };
    },

    'GET /xrpc/com.atproto.repo.listRecords': (request) => {
      const { repo, collection } = request.query;
      if (repo !== DID) return xrpcError(400, 'InvalidRequest', 'Could not find repo');
      const limit = Math.min(Number(request.query.limit ?? 50), 100);
      // Newest first unless reverse=true.
      const records = fake.records
        .filter(() => collection === 'app.bsky.feed.post')
        .slice()
        .reverse()
        .slice(0, limit);
      return { body: { records: records.map((r) => ({ uri: r.uri, cid: r.cid, value: r.value })) } };
    },

    'GET /xrpc/com.atproto.identity.resolveHandle': (request) => {
      const did = fake.handles.get(request.query.handle);
      return did ? { body: { did } } : xrpcError(400, 'InvalidRequest', 'Unable to resolve handle');
    },

    'POST /xrpc/com.atproto.repo.uploadBlob': (request) => {
      const no = denied(request);
      if (no) return no;
      if (request.raw.length > 5_000_000) return xrpcError(413, 'PayloadTooLarge', 'request entity too large');
      return { body: { blob: storeBlob(request.raw, String(request.headers['content-type'])) } };
    },

    'POST /xrpc/com.atproto.repo.createRecord': (request) => {
      const no = denied(request);
      if (no) return no;
      const { repo, collection, rkey, record } = request.json ?? {};
      if (repo !== DID) return xrpcError(400, 'InvalidRequest', 'Could not find repo');
      if (collection !== 'app.bsky.feed.post' || record?.$type !== 'app.bsky.feed.post') return xrpcError(400, 'InvalidRequest', 'Invalid collection');
      if (typeof record.text !== 'string' || !record.createdAt)
        return xrpcError(400, 'InvalidRequest', 'Invalid app.bsky.feed.post record: Record must have the property "text"');
      if ([...segmenter.segment(record.text)].length > 300)
        return xrpcError(400, 'InvalidRequest', 'Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes');
      if (Buffer.byteLength(record.text, 'utf8') > 3000)
        return xrpcError(400, 'InvalidRequest', 'Invalid app.bsky.feed.post record: Record/text must not be longer than 3000 characters');
      if (record.langs !== undefined && (!Array.isArray(record.langs) || record.langs.length > 3))
        return xrpcError(400, 'InvalidRequest', 'Invalid app.bsky.feed.post record: Record/langs must not have more than 3 elements');
      const embed = record.embed;
      const embedProblem =
        embed?.$type === 'app.bsky.embed.external'
          ? typeof embed.external?.uri !== 'string' || typeof embed.external.title !== 'string' || typeof embed.external.description !== 'string'
            ? 'Record/embed/external must have the properties "uri", "title" and "description"'
            : embed.external.thumb && blobProblem(embed.external.thumb, /^image\//, 1_000_000)
          : embed?.$type === 'app.bsky.embed.video'
            ? blobProblem(embed.video, /^video\/mp4$/, 100_000_000)
            : embed?.$type === 'app.bsky.embed.images'
              ? embed.images.map((i: any) => blobProblem(i.image, /^image\//, 1_000_000)).find(Boolean)
              : undefined;
      if (embedProblem) return xrpcError(400, 'InvalidRequest', `Invalid app.bsky.feed.post record: ${embedProblem}`);
      if (rkey !== undefined && !/^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/.test(rkey))
        return xrpcError(400, 'InvalidRequest', 'Invalid record key');
      const key = rkey ?? crypto.randomBytes(8).toString('hex');
      if (fake.records.some((r) => r.rkey === key)) return xrpcError(400, 'InvalidRequest', 'Record already exists');
      const uri = `at://${DID}/app.bsky.feed.post/${key}`;
      const stored = { uri, cid: cidOf(JSON.stringify(record)), rkey: key, value: record };
      fake.records.push(stored);
      if (fake.garbleNextCreate) {
        fake.garbleNextCreate = false;
        return { status: 200, body: 'upstream hiccup', headers: { 'content-type': 'text/plain' } };
      }
      return { body: { uri, cid: stored.cid, commit: { cid: cidOf(uri), rev: '3l' }, validationStatus: 'valid' } };
    },

    'GET /xrpc/com.atproto.server.getServiceAuth': (request) => {
      const no = denied(request);
      if (no) return no;
      const { aud, lxm, exp } = request.query;
      if (!aud?.startsWith('did:')) return xrpcError(400, 'InvalidRequest', 'Error: Params must have the property "aud"');
      if (exp && Number(exp) > Date.now() / 1000 + 3600) return xrpcError(400, 'BadExpiration', 'expiration too far in future');
      const token = jwt({ iss: DID, aud, lxm, exp: Number(exp || Date.now() / 1000 + 60) });
      serviceTokens.set(token, { aud, lxm, exp: Number(exp || Date.now() / 1000 + 60) });
      return { body: { token } };
    },

    // The video service (video.bsky.app): it takes the video with a service token for the user's PDS,
    // processes it for a while, then stores the result on the PDS as a blob.
    'POST /xrpc/app.bsky.video.uploadVideo': (request) => {
      const grant = serviceTokens.get(bearer(request) ?? '');
      if (!grant || grant.exp < Date.now() / 1000) return xrpcError(401, 'AuthMissing', 'Authentication Required');
      if (grant.lxm !== 'com.atproto.repo.uploadBlob' || grant.aud !== `did:web:${new URL(fake.url).hostname}`)
        return xrpcError(401, 'BadJwtAudience', 'jwt audience does not match service did');
      if (request.query.did !== DID) return xrpcError(400, 'InvalidRequest', 'did does not match the token');
      const jobId = crypto.randomUUID();
      fake.videoJobs.set(jobId, {
        did: DID,
        bytes: request.raw,
        mimeType: String(request.headers['content-type']),
        readyAt: Date.now() + fake.videoProcessingMs,
        error: fake.failNextVideo,
      });
      fake.failNextVideo = undefined;
      return { body: { jobId, did: DID, state: 'JOB_STATE_CREATED' } };
    },

    'GET /xrpc/app.bsky.video.getJobStatus': (request) => {
      const job = fake.videoJobs.get(request.query.jobId);
      if (!job) return xrpcError(404, 'NotFound', 'job not found');
      const base = { jobId: request.query.jobId, did: job.did };
      if (Date.now() < job.readyAt) return { body: { jobStatus: { ...base, state: 'JOB_STATE_ENCODING', progress: 50 } } };
      if (job.error) return { body: { jobStatus: { ...base, state: 'JOB_STATE_FAILED', error: job.error } } };
      job.blob ??= storeBlob(job.bytes, 'video/mp4');
      return { body: { jobStatus: { ...base, state: 'JOB_STATE_COMPLETED', blob: job.blob } } };
    },

    'GET /xrpc/com.atproto.repo.getRecord': (request) => {
      const { repo, collection, rkey } = request.query;
      const found = fake.records.find((r) => repo === DID && collection === 'app.bsky.feed.post' && r.rkey === rkey);
      if (!found) return xrpcError(400, 'RecordNotFound', `Could not locate record: at://${repo}/${collection}/${rkey}`);
      return { body: { uri: found.uri, cid: found.cid, value: found.value } };
    },
  });
  // Store, then answer a 5xx (`storeThenFail`) on createRecord, with the XRPC error of the status.
  fake.create = {
    route: 'POST /xrpc/com.atproto.repo.createRecord',
    serverError: (status) => xrpcError(status, XRPC_SERVER_ERRORS[status] ?? 'InternalServerError', STATUS_CODES[status] ?? 'Internal Server Error'),
  };
  return fake;
}

/** XRPC's error names of the 5xx statuses (the @atproto/xrpc ResponseType). */
const XRPC_SERVER_ERRORS: Record<number, string> = {
  500: 'InternalServerError',
  501: 'MethodNotImplemented',
  502: 'UpstreamFailure',
  503: 'NotEnoughResources',
  504: 'UpstreamTimeout',
};
