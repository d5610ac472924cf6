/**
 * A local stand-in for Google's OAuth and the YouTube Data API v3 as their
 * documentation describes them: the consent screen, the token endpoint (code
 * with PKCE, refresh), channels.list, and resumable video uploads (a POST opens
 * a session answered with its URI in Location; PUTs send bytes, 308 while
 * incomplete with a Range header, 200 with the video resource when complete; a
 * PUT with `Content-Range: bytes *\/total` asks the session's state).
 * Errors use Google's shape {error: {code, message, errors: [{reason}]}}.
 */
import crypto from 'node:crypto';
import { consentAllows, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const CLIENT_ID = 'yt-client.apps.googleusercontent.com';
export const CLIENT_SECRET = 'yt-secret';

export interface UploadSession {
  id: string;
  metadata: any;
  total: number;
  type: string;
  received: Buffer;
  video?: { id: string };
}

export interface YouTubeFake extends NetworkFake {
  channels: { id: string; snippet: { title: string; customUrl: string; thumbnails: { default: { url: string } } } }[];
  /** Access tokens the API accepts now. */
  validTokens: Set<string>;
  refreshTokens: Set<string>;
  sessions: Map<string, UploadSession>;
  videos: { id: string; metadata: any; bytes: Buffer }[];
  /** The next upload PUT stores only this many bytes and then fails with 503 (an interrupted upload). */
  cutNextUploadAt?: number;
  /** The server error that answers the cut upload (503 unless set; Google's guide says to resume after 500, 502, 503 and 504). */
  cutNextUploadStatus?: number;
}

export function googleError(code: number, reason: string, message: string): FakeAnswer {
  return { status: code, body: { error: { code, message, errors: [{ domain: 'youtube.video', reason, message }] } } };
}

export async function startYouTubeFake(): Promise<YouTubeFake> {
  let issued = 0;
  const fake = (await startNetworkFake()) as YouTubeFake;
  fake.channels = [];
  fake.validTokens = new Set();
  fake.refreshTokens = new Set();
  fake.sessions = new Map();
  fake.videos = [];

  const authorized = (request: RecordedRequest): FakeAnswer | undefined => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (token && fake.validTokens.has(token)) return undefined;
    return googleError(401, 'authError', 'Invalid Credentials');
  };
  const issue = (withRefresh: boolean) => {
    issued++;
    const access = `ya29.access-${issued}`;
    fake.validTokens.add(access);
    const answer: Record<string, unknown> = { access_token: access, expires_in: 3599, token_type: 'Bearer', scope: 'https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly' };
    if (withRefresh) {
      const refresh = `1//refresh-${issued}`;
      fake.refreshTokens.add(refresh);
      answer.refresh_token = refresh;
    }
    return answer;
  };
  const complete = (session: UploadSession): FakeAnswer => {
    const id = crypto.randomBytes(8).toString('base64url').slice(0, 11);
    session.video = { id };
    fake.videos.push({ id, metadata: session.metadata, bytes: session.received });
    return { status: 200, body: { kind: 'youtube#video', id, snippet: session.metadata.snippet, status: { uploadStatus: 'uploaded', ...session.metadata.status } } };
  };

  fake.route({
    'GET /o/oauth2/v2/auth': consentAllows('google-code'),

    'POST /token': (request) => {
      const form = request.form ?? {};
      if (form.client_id !== CLIENT_ID || form.client_secret !== CLIENT_SECRET) return { status: 401, body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' } };
      if (form.grant_type === 'authorization_code') {
        const pending = fake.state.authorize;
        const challenge = form.code_verifier ? crypto.createHash('sha256').update(form.code_verifier).digest('base64url') : undefined;
        if (form.code !== 'google-code' || form.redirect_uri !== pending?.redirect_uri || challenge !== pending?.code_challenge) {
          return { status: 400, body: { error: 'invalid_grant', error_description: 'Bad Request' } };
        }
        return { body: issue(true) };
      }
      if (form.grant_type === 'refresh_token') {
        if (!fake.refreshTokens.has(form.refresh_token)) return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
        // Google keeps the refresh token: the answer carries only a new access token.
        return { body: issue(false) };
      }
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    },

    'GET /youtube/v3/channels': (request) => authorized(request) ?? { body: { kind: 'youtube#channelListResponse', items: request.query.mine === 'true' ? fake.channels : [] } },

    'POST /upload/youtube/v3/videos': (request) => {
      const denied = authorized(request);
      if (denied) return denied;
      if (request.query.uploadType !== 'resumable') return googleError(400, 'badRequest', 'uploadType must be resumable here');
      if (!request.json?.snippet?.title) return googleError(400, 'invalidTitle', 'The request metadata specifies an invalid or empty video title.');
      const id = crypto.randomBytes(12).toString('hex');
      fake.sessions.set(id, { id, metadata: request.json, total: Number(request.headers['x-upload-content-length']), type: String(request.headers['x-upload-content-type']), received: Buffer.alloc(0) });
      return { status: 200, headers: { location: `${fake.url}/upload/youtube/v3/videos?uploadType=resumable&upload_id=${id}` } };
    },

    'PUT /upload/youtube/v3/videos': (request) => {
      const session = fake.sessions.get(request.query.upload_id);
      if (!session) return googleError(404, 'notFound', 'Upload session not found');
      const range = String(request.headers['content-range'] ?? '');
      const held = (): FakeAnswer =>
        session.received.length > 0 ? { status: 308, headers: { range: `bytes=0-${session.received.length - 1}` } } : { status: 308 };
      if (/^bytes \*\/\d+$/.test(range)) {
        // Status probe.
        if (session.video) return { status: 200, body: { kind: 'youtube#video', id: session.video.id } };
        return held();
      }
      const first = range ? Number(/^bytes (\d+)-/.exec(range)?.[1]) : 0;
      if (first !== session.received.length) return googleError(400, 'badRequest', `expected bytes from ${session.received.length}`);
      if (fake.cutNextUploadAt !== undefined) {
        // The connection broke after part of the bytes arrived.
        session.received = Buffer.concat([session.received, request.raw.subarray(0, fake.cutNextUploadAt)]);
        fake.cutNextUploadAt = undefined;
        const status = fake.cutNextUploadStatus ?? 503;
        fake.cutNextUploadStatus = undefined;
        return { status, body: googleError(status, 'backendError', 'Backend Error').body };
      }
      session.received = Buffer.concat([session.received, request.raw]);
      if (session.received.length < session.total) return held();
      return complete(session);
    },

    'POST /upload/youtube/v3/thumbnails/set': (request) => authorized(request) ?? { body: { kind: 'youtube#thumbnailSetResponse', items: [{ default: { url: 'https://i.ytimg.com/x.jpg' } }] } },
  });
  return fake;
}
