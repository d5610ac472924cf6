/**
 * A local stand-in for Google's OAuth and the YouTube Data API v3 as their
 * documentation describes them: the consent screen, the token endpoint (code
 * with PKCE, refresh), channels.list, and resumable video uploads (a POST opens
 * a session answered with its URI in Location; PUTs send bytes, 308 while
 * incomplete with a Range header, 200 with the video resource when complete; a
 * PUT with `Content-Range: bytes *\/total` asks the session's state).
 * Errors use Google's shape {error: {code, message, errors: [{reason}]}}. Its
 * create endpoint is the upload PUT that completes a video (`storeThenFail`).
 *
 * Also the YouTube Analytics API's reports.query (GET /v2/reports): ids,
 * startDate, endDate and metrics required; the `day` dimension or none; a
 * `video==` filter; an answer {kind, columnHeaders, rows} with rows left out
 * when there is no data. Tokens carry the scopes the user allowed (those asked
 * for, less `untickedScopes`); reports need yt-analytics(-monetary).readonly
 * and youtube.readonly, else Google's 403 for insufficient scopes.
 */
import crypto from 'node:crypto';
import { consentAllows, redeemsConsent, startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

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

/** Metrics the fake's reports know, as the Analytics API names them. */
export const REPORT_METRICS = ['views', 'estimatedMinutesWatched', 'likes', 'dislikes', 'comments', 'shares', 'subscribersGained', 'subscribersLost'] as const;
export type ReportMetric = (typeof REPORT_METRICS)[number];

export interface YouTubeFake extends NetworkFake {
  channels: { id: string; snippet: { title: string; customUrl: string; thumbnails: { default: { url: string } } } }[];
  /** Access tokens the API accepts now. */
  validTokens: Set<string>;
  refreshTokens: Set<string>;
  /** Scopes granted, by access or refresh token. */
  scopes: Map<string, Set<string>>;
  /** Scopes the user unticks on the consent screen. */
  untickedScopes: Set<string>;
  /** What happened on the channel: one video's figures on one day (YYYY-MM-DD). */
  activity: { day: string; videoId: string; metrics: Partial<Record<ReportMetric, number>> }[];
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

/** The Analytics API's errors: Google's shape, domain global. */
function reportError(code: number, reason: string, message: string): FakeAnswer {
  return { status: code, body: { error: { code, message, errors: [{ message, domain: 'global', reason }] } } };
}

export async function startYouTubeFake(): Promise<YouTubeFake> {
  let issued = 0;
  const fake = (await startNetworkFake()) as YouTubeFake;
  fake.channels = [];
  fake.validTokens = new Set();
  fake.refreshTokens = new Set();
  fake.scopes = new Map();
  fake.untickedScopes = new Set();
  fake.activity = [];
  fake.sessions = new Map();
  fake.videos = [];

  const authorized = (request: RecordedRequest): FakeAnswer | undefined => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (token && fake.validTokens.has(token)) return undefined;
    return googleError(401, 'authError', 'Invalid Credentials');
  };
  const issue = (scopes: Set<string>, withRefresh: boolean) => {
    issued++;
    const access = `ya29.access-${issued}`;
    fake.validTokens.add(access);
    fake.scopes.set(access, scopes);
    const answer: Record<string, unknown> = { access_token: access, expires_in: 3599, token_type: 'Bearer', scope: [...scopes].join(' ') };
    if (withRefresh) {
      const refresh = `1//refresh-${issued}`;
      fake.refreshTokens.add(refresh);
      fake.scopes.set(refresh, scopes);
      answer.refresh_token = refresh;
    }
    return answer;
  };
  const granted = (request: RecordedRequest, ...any: string[]) => {
    const scopes = fake.scopes.get(/^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '');
    return any.some((s) => scopes?.has(s));
  };
  const complete = (session: UploadSession): FakeAnswer => {
    const id = crypto.randomBytes(8).toString('base64url').slice(0, 11);
    session.video = { id };
    fake.videos.push({ id, metadata: session.metadata, bytes: session.received });
    return {
      status: 200,
      body: { kind: 'youtube#video', id, snippet: session.metadata.snippet, status: { uploadStatus: 'uploaded', ...session.metadata.status } },
    };
  };

  fake.route({
    'GET /o/oauth2/v2/auth': consentAllows('google-code'),

    'POST /token': (request) => {
      const form = request.form ?? {};
      if (form.client_id !== CLIENT_ID || form.client_secret !== CLIENT_SECRET)
        return { status: 401, body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' } };
      if (form.grant_type === 'authorization_code') {
        const pending = fake.state.authorize;
        if (!redeemsConsent(fake, form, 'google-code')) {
          return { status: 400, body: { error: 'invalid_grant', error_description: 'Bad Request' } };
        }
        const asked = String(pending.scope ?? '')
          .split(' ')
          .filter(Boolean);
        return { body: issue(new Set(asked.filter((scope) => !fake.untickedScopes.has(scope))), true) };
      }
      if (form.grant_type === 'refresh_token') {
        if (!fake.refreshTokens.has(form.refresh_token))
          return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
        // Google keeps the refresh token (and its scopes): the answer carries only a new access token.
        return { body: issue(fake.scopes.get(form.refresh_token) ?? new Set(), false) };
      }
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    },

    'GET /youtube/v3/channels': (request) =>
      authorized(request) ?? { body: { kind: 'youtube#channelListResponse', items: request.query.mine === 'true' ? fake.channels : [] } },

    'POST /upload/youtube/v3/videos': (request) => {
      const denied = authorized(request);
      if (denied) return denied;
      if (request.query.uploadType !== 'resumable') return googleError(400, 'badRequest', 'uploadType must be resumable here');
      if (!request.json?.snippet?.title) return googleError(400, 'invalidTitle', 'The request metadata specifies an invalid or empty video title.');
      const id = crypto.randomBytes(12).toString('hex');
      fake.sessions.set(id, {
        id,
        metadata: request.json,
        total: Number(request.headers['x-upload-content-length']),
        type: String(request.headers['x-upload-content-type']),
        received: Buffer.alloc(0),
      });
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

    'GET /v2/reports': (request) => {
      const denied = authorized(request);
      if (denied) return denied;
      const auth = 'https://www.googleapis.com/auth/';
      if (
        !granted(request, `${auth}yt-analytics.readonly`, `${auth}yt-analytics-monetary.readonly`) ||
        !granted(request, `${auth}youtube.readonly`, `${auth}youtube`)
      ) {
        return {
          status: 403,
          body: {
            error: {
              code: 403,
              message: 'Request had insufficient authentication scopes.',
              errors: [{ message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' }],
              status: 'PERMISSION_DENIED',
              details: [
                {
                  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                  reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
                  domain: 'googleapis.com',
                  metadata: { service: 'youtubeanalytics.googleapis.com', method: 'youtube.analytics.v2.TargetedQueriesService.Query' },
                },
              ],
            },
          },
        };
      }
      const q = request.query;
      for (const name of ['ids', 'startDate', 'endDate', 'metrics']) if (!q[name]) return reportError(400, 'required', `Required ${name}`);
      const owner = /^channel==(.+)$/.exec(q.ids)?.[1];
      if (!owner)
        return reportError(400, 'invalid', `Invalid value '${q.ids}'. Values must match the following regular expression: '(channel|contentOwner)==[^,]+'`);
      if (owner !== 'MINE' && !fake.channels.some((c) => c.id === owner)) return reportError(403, 'forbidden', 'Forbidden');
      for (const name of ['startDate', 'endDate'])
        if (!/^\d{4}-\d{2}-\d{2}$/.test(q[name]))
          return reportError(400, 'invalid', `Invalid value '${q[name]}'. Values must match the following regular expression: '[0-9]{4}-[0-9]{2}-[0-9]{2}'`);
      if (q.startDate > q.endDate) return reportError(400, 'badRequest', 'The start date must not be after the end date.');
      const metrics = q.metrics.split(',');
      const unknown = metrics.find((m) => !(REPORT_METRICS as readonly string[]).includes(m));
      if (unknown) return reportError(400, 'badRequest', `Unknown identifier (${unknown}) given in field parameters.metrics.`);
      const byDay = q.dimensions === 'day';
      if (q.dimensions && !byDay) return reportError(400, 'badRequest', 'The query is not supported.');
      let videos: string[] | undefined;
      if (q.filters) {
        const video = /^video==([^;]+)$/.exec(q.filters)?.[1];
        if (!video) return reportError(400, 'badRequest', 'The query is not supported.');
        videos = video.split(',');
      }
      if (q.sort && !(byDay && (q.sort === 'day' || q.sort === '-day'))) return reportError(400, 'badRequest', 'The query is not supported.');

      const sums = new Map<string, number[]>();
      for (const a of fake.activity) {
        if (a.day < q.startDate || a.day > q.endDate || (videos && !videos.includes(a.videoId))) continue;
        const key = byDay ? a.day : '';
        const row = sums.get(key) ?? metrics.map(() => 0);
        metrics.forEach((m, i) => {
          row[i] += a.metrics[m as ReportMetric] ?? 0;
        });
        sums.set(key, row);
      }
      let rows = [...sums.entries()].map(([key, values]) => (byDay ? [key, ...values] : values));
      if (q.sort) rows = rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])) * (q.sort === '-day' ? -1 : 1));
      const columnHeaders = [
        ...(byDay ? [{ name: 'day', columnType: 'DIMENSION', dataType: 'STRING' }] : []),
        ...metrics.map((name) => ({ name, columnType: 'METRIC', dataType: 'INTEGER' })),
      ];
      return { body: { kind: 'youtubeAnalytics#resultTable', columnHeaders, ...(rows.length > 0 ? { rows } : {}) } };
    },

    'POST /upload/youtube/v3/thumbnails/set': (request) =>
      authorized(request) ?? { body: { kind: 'youtube#thumbnailSetResponse', items: [{ default: { url: 'https://i.ytimg.com/x.jpg' } }] } },
  });
  // Store, then answer a 5xx (`storeThenFail`) on the upload PUT that completes the video: Google's backendError.
  fake.create = { route: 'PUT /upload/youtube/v3/videos', serverError: (status) => googleError(status, 'backendError', 'Backend Error') };
  return fake;
}
