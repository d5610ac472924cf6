/**
 * The web application's one way to talk to Herald: /api/app with the session
 * cookie, the CSRF token in a header on every change, and errors as the API
 * words them (with the fields they concern).
 */
import type { z } from 'zod';
import type {
  commentsList,
  createdPreviewLink,
  integration,
  mediaObject,
  postApproval,
  postDetail,
  postSummary,
  previewLink,
  previewView,
  seriesDetail,
  series,
} from '../../src/contract/index.ts';
import type { AnswerFor, Below, BodyArgument, PathsOf, Prefixed } from '../../src/contract/calls.ts';
import type { AnswerOf, BodyOf, Method } from '../../src/contract/route.ts';
import type { appRoutes } from '../../src/contract/routes/app.ts';
import type { publicRoutes } from '../../src/contract/routes/public.ts';
import type { previewRoutes } from '../../src/contract/routes/visitors.ts';
import { t } from './i18n.ts';

export interface FieldProblem {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: FieldProblem[] = [],
  ) {
    super(message);
  }
}

function csrfToken(): string {
  const match = document.cookie.split('; ').find((c) => c.startsWith('herald_csrf='));
  return match ? decodeURIComponent(match.slice('herald_csrf='.length)) : '';
}

/** What the session reaches below /api/app: its own routes and the public API's under /public/v1 (see pub()). */
type SessionRoutes = typeof appRoutes.routes & Prefixed<typeof publicRoutes.routes, '/public/v1'>;
/** The paths below /api/app a call of `M` may name. */
export type SessionPath<M extends Method> = PathsOf<SessionRoutes, M>;
/** What a visitor of a preview link reaches below /api/preview. */
type PreviewRoutes = Below<typeof previewRoutes.routes, '/api/preview'>;

/** Paths of the public API's routes as the web reaches them with its session. */
export const pub = <P extends PathsOf<typeof publicRoutes.routes>>(path: P) => `/public/v1${path}` as const;

async function failure(response: Response): Promise<ApiError> {
  try {
    const body = await response.json();
    return new ApiError(
      response.status,
      body.code ?? body.error ?? 'error',
      body.message ?? response.statusText,
      Array.isArray(body.errors) ? body.errors : [],
    );
  } catch {
    return new ApiError(response.status, 'error', response.statusText || t('error.network'));
  }
}

/**
 * Calls a route of the session's table: the method and path name the entry
 * (a `${id}` stands for its :id), which gives the body the call must send and
 * the answer it gets, so both are checked where the call is written.
 */
export function api<M extends Method, P extends PathsOf<SessionRoutes, M>>(
  method: M,
  path: P,
  ...body: BodyArgument<SessionRoutes, M, P>
): Promise<AnswerFor<SessionRoutes, M, P>> {
  return sessionCall(method, path, body[0]);
}

async function sessionCall<T>(method: Method, path: string, body: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/api/app${path}`, {
      method,
      credentials: 'same-origin',
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(method === 'GET' ? {} : { 'x-csrf-token': csrfToken() }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', t('error.network'));
  }
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/** The preview page's calls (/api/preview/{token}): a visitor without an account, so no session and no CSRF token. */
export function previewApi<M extends Method, P extends PathsOf<PreviewRoutes, M>>(
  method: M,
  path: P,
  ...body: BodyArgument<PreviewRoutes, M, P>
): Promise<AnswerFor<PreviewRoutes, M, P>> {
  return visitorCall(method, path, body[0]);
}

async function visitorCall<T>(method: Method, path: string, body: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/api/preview${path}`, {
      method,
      credentials: 'omit',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', t('error.network'));
  }
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/** Sends a file as multipart part "file" (a CSV import); answers and errors as api() words them. */
export function postFile<P extends PathsOf<SessionRoutes, 'POST'>>(path: P, file: File): Promise<AnswerFor<SessionRoutes, 'POST', P>> {
  return sendFile(path, file);
}

async function sendFile<T>(path: string, file: File): Promise<T> {
  const form = new FormData();
  form.append('file', file);
  let response: Response;
  try {
    response = await fetch(`/api/app${path}`, { method: 'POST', credentials: 'same-origin', headers: { 'x-csrf-token': csrfToken() }, body: form });
  } catch {
    throw new ApiError(0, 'network', t('error.network'));
  }
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/** Uploads one file to the media library, reporting progress from 0 to 1. */
export function upload(file: File, onProgress: (fraction: number) => void): Promise<MediaItem> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `/api/app${pub('/upload')}`);
    request.setRequestHeader('x-csrf-token', csrfToken());
    request.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    request.onerror = () => reject(new ApiError(0, 'network', t('error.network')));
    request.onload = () => {
      let body: any;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        return reject(new ApiError(request.status, 'error', request.statusText));
      }
      if (request.status >= 400) return reject(new ApiError(request.status, body.code ?? 'error', body.message, body.errors ?? []));
      resolve(body as MediaItem);
    };
    const form = new FormData();
    form.append('file', file);
    request.send(form);
  });
}

// What the routes answer: the types of the server's own response schemas.
export type Channel = z.output<typeof integration>;
export type PostSummary = z.output<typeof postSummary>;
export type PostDetail = z.output<typeof postDetail>;
export type PostState = PostSummary['state'];
export type MediaRef = PostSummary['image'][number];
export type MediaItem = z.output<typeof mediaObject>;
export type PostApproval = z.output<typeof postApproval>;
export type PostComment = z.output<typeof commentsList>['comments'][number];
export type PreviewLink = z.output<typeof previewLink>;
export type CreatedPreviewLink = z.output<typeof createdPreviewLink>;
export type PreviewView = z.output<typeof previewView>;
export type Series = z.output<typeof series>;
export type SeriesDetail = z.output<typeof seriesDetail>;
export type RepeatRule = Series['repeat'];

/** What a route of the web application's own API (/api/app) answers, by the route's name in the table. */
export type AppAnswer<K extends keyof typeof appRoutes.routes> = AnswerOf<(typeof appRoutes.routes)[K]>;
/** What a public route answers (reached with the session through pub()), by the route's name in the table. */
export type PublicAnswer<K extends keyof typeof publicRoutes.routes> = AnswerOf<(typeof publicRoutes.routes)[K]>;
/** What a route of /api/app takes as its body, by the route's name in the table. */
export type AppBody<K extends keyof typeof appRoutes.routes> = BodyOf<(typeof appRoutes.routes)[K]>;

// The web application's own routes (/api/app), from their entries in the route table.
export type { JsonSchema } from '../../src/contract/routes/app.ts';
export type Template = AnswerOf<typeof appRoutes.routes.templates>[number];
export type Network = AnswerOf<typeof appRoutes.routes.networks>[number];
export type Session = AnswerOf<typeof appRoutes.routes.session>;
