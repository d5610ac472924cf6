/**
 * One client for Meta's Graph APIs (graph.facebook.com, graph.instagram.com,
 * graph.threads.net), shared by the Facebook, Instagram and Threads adapters:
 * versioned paths, where the access token goes, and Meta's error body turned
 * into Herald's failure classes. Meta answers HTTP 400 for nearly every error,
 * so the class comes from `error.code`, not from the status.
 */
import crypto from 'node:crypto';
import type { NetworkAnswer, Verdict } from '../../adapter-kit/http-failures.ts';
import type { NetworkRequest } from '../../adapter-kit/network-http.ts';
import type { NetworkContext, PublishContext } from '../../types.ts';
import { PublishError } from '../../errors.ts';

export interface GraphErrorBody {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  error_user_title?: string;
  error_user_msg?: string;
}

/** Token expired, revoked, password changed, app removed; 102: session gone. */
const TOKEN_CODES = new Set([190, 102]);
/** App, user, page and business-use-case throttling. */
const THROTTLE_CODES = new Set([4, 17, 32, 613, 80001, 80002, 80003, 80004, 80005, 80006, 80008, 80009, 80014]);
/** "Unknown error" / "service temporarily unavailable": Meta asks to retry. */
const TRANSIENT_CODES = new Set([1, 2]);
/** Instagram: a container published before it was FINISHED (code 9007). */
export const NOT_READY_SUBCODE = 2207027;
/** Instagram: the account's publishing quota for the moving 24 hours is used up (code 9). */
const PUBLISH_LIMIT_SUBCODE = 2207042;
/** Without a better hint, a used-up daily quota is tried again after an hour. */
const QUOTA_RETRY_MS = 60 * 60_000;

/** The longest `estimated_time_to_regain_access` (minutes) in X-Business-Use-Case-Usage, in ms. */
export function regainAccessMs(header: string | null): number | undefined {
  if (!header) return undefined;
  try {
    const usage = JSON.parse(header) as Record<string, { estimated_time_to_regain_access?: number }[]>;
    const minutes = Object.values(usage)
      .flat()
      .map((u) => Number(u?.estimated_time_to_regain_access ?? 0))
      .filter((m) => Number.isFinite(m));
    return minutes.length > 0 ? Math.max(...minutes) * 60_000 : undefined;
  } catch {
    return undefined;
  }
}

/** Meta's error as the user reads it: the user-facing text when Meta gives one, and the codes. */
function describe(error: GraphErrorBody): string {
  const text = error.error_user_msg
    ? `${error.error_user_title ? `${error.error_user_title}: ` : ''}${error.error_user_msg}`
    : (error.message ?? 'unknown error');
  const codes = error.code !== undefined ? ` (code ${error.code}${error.error_subcode ? `, subcode ${error.error_subcode}` : ''})` : '';
  return `${text}${codes}`;
}

/** The failure class of a Graph error body; the status decides what the codes leave open. */
export function graphVerdict(error: GraphErrorBody, headers: Headers): Verdict {
  const detail = describe(error);
  const code = error.error_subcode ?? error.code;
  const byCode = error.code ?? -1;
  if (TOKEN_CODES.has(byCode)) return { kind: 'auth', detail, code };
  if (THROTTLE_CODES.has(byCode)) return { kind: 'retryable', detail, code, retryAfterMs: regainAccessMs(headers.get('x-business-use-case-usage')) };
  if (error.error_subcode === PUBLISH_LIMIT_SUBCODE) return { kind: 'retryable', detail, code, retryAfterMs: QUOTA_RETRY_MS };
  // Not ready yet: nothing was published.
  if (error.error_subcode === NOT_READY_SUBCODE) return { kind: 'retryable', detail, code };
  // "An unknown error occurred" / "service temporarily unavailable": Meta asks to retry, but a create may have happened.
  if (TRANSIENT_CODES.has(byCode)) return { kind: 'server', detail, code };
  return { detail, code };
}

/** Reads Meta's error body (`error`, or `error_message` from the Instagram and Threads login endpoints). */
export function readGraphAnswer({ ok, body, headers }: NetworkAnswer): Verdict | undefined {
  if (ok || typeof body !== 'object' || body === null) return undefined;
  if (typeof body.error === 'object' && body.error !== null) return graphVerdict(body.error, headers);
  if (typeof body.error_message === 'string') return graphVerdict({ message: body.error_message, code: body.code }, headers);
  return undefined;
}

type Params = Record<string, string | number | boolean | undefined>;

function stringParams(params: Params): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v === undefined ? undefined : String(v)]));
}

/** Sends one request to a Meta endpoint and returns its JSON ({} for an empty answer), or throws the classified failure. */
export async function graphCall<T = any>(ctx: NetworkContext, url: string, request: NetworkRequest): Promise<T> {
  return ((await ctx.http.json<T>(url, request)) ?? {}) as T;
}

export interface GraphOptions {
  /** e.g. https://graph.facebook.com */
  host: string;
  /** e.g. v26.0 */
  version: string;
  token: string;
  /** Meta's APIs take the token as a Bearer header; Threads documents only the access_token parameter. */
  tokenIn: 'header' | 'param';
  /** The network's name as the user reads it in errors. */
  network: string;
}

/** A Graph API as one account (page, Instagram or Threads user) sees it. */
export class Graph {
  constructor(
    private readonly ctx: NetworkContext,
    readonly options: GraphOptions,
  ) {}

  get network(): string {
    return this.options.network;
  }

  /** Where `path` is; a path that is already a URL (an upload URL Meta handed out) is kept. */
  url(path: string): string {
    if (/^https?:\/\//.test(path)) return path;
    return `${this.options.host}/${this.options.version}/${path.replace(/^\/+/, '')}`;
  }

  private auth(params: Params): { headers: Record<string, string>; params: Params } {
    if (this.options.tokenIn === 'header') return { headers: { authorization: `Bearer ${this.options.token}` }, params };
    return { headers: {}, params: { ...params, access_token: this.options.token } };
  }

  async get<T = any>(path: string, query: Params = {}): Promise<T> {
    const { headers, params } = this.auth(query);
    return graphCall<T>(this.ctx, this.url(path), { method: 'GET', headers, query: params });
  }

  /**
   * POST with the parameters as a form, as every Graph endpoint accepts.
   * `repeatable`: sending it twice publishes nothing twice (a media container, an upload session).
   */
  async post<T = any>(path: string, body: Params = {}, options: { headers?: Record<string, string>; repeatable?: boolean } = {}): Promise<T> {
    const { headers, params } = this.auth(body);
    return graphCall<T>(this.ctx, this.url(path), {
      method: 'POST',
      headers: { ...headers, ...options.headers },
      form: stringParams(params),
      repeatable: options.repeatable,
    });
  }
}

/** Waits `ms`, or less when the publish's deadline comes first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export type ContainerState = 'FINISHED' | 'PUBLISHED';

export interface ContainerPoll {
  /** The field holding IN_PROGRESS / FINISHED / ERROR / EXPIRED / PUBLISHED: Instagram `status_code`, Threads `status`. */
  stateField: string;
  /** The field explaining an ERROR: Instagram `status`, Threads `error_message`. */
  errorField: string;
  /** Longest total wait. */
  budgetMs?: number;
}

/**
 * Waits between looks at a container: soon at first (images are usually ready at
 * once), then about once a minute, as Meta asks for video.
 */
const POLL_DELAYS_MS = [1000, 2000, 3000, 5000, 10_000, 20_000, 30_000, 60_000];
/** Meta: poll a video container's status once a minute for no more than 5 minutes. */
const POLL_BUDGET_MS = 5 * 60_000;

/**
 * Waits until Meta has processed a media container (the engine keeps renewing
 * the post's lease meanwhile). A container still processing when the budget or
 * the publish's deadline runs out was never published, so the attempt is
 * retryable, and the next attempt takes up the same container (`mediaContainer`).
 */
export async function waitForContainer(graph: Graph, id: string, poll: ContainerPoll, signal: AbortSignal): Promise<ContainerState> {
  const deadline = Date.now() + (poll.budgetMs ?? POLL_BUDGET_MS);
  for (let look = 0; ; look++) {
    const container = await graph.get<Record<string, string>>(id, { fields: `${poll.stateField},${poll.errorField}` });
    const state = container[poll.stateField];
    if (state === 'FINISHED' || state === 'PUBLISHED') return state;
    if (state === 'ERROR')
      throw new PublishError('refused', `${graph.network} could not process the media: ${container[poll.errorField] || 'no reason given'}`);
    if (state === 'EXPIRED') throw new PublishError('retryable', `${graph.network} let the media container expire before it was published`);
    const wait = POLL_DELAYS_MS[Math.min(look, POLL_DELAYS_MS.length - 1)];
    if (Date.now() + wait > deadline || signal.aborted) {
      throw new PublishError(
        'retryable',
        `${graph.network} is still processing the media (container ${id} is ${state ?? 'in an unknown state'}); waiting for it again later`,
      );
    }
    await sleep(wait, signal);
  }
}

/** States in which a container made by an earlier attempt is still the one to publish. */
const LIVE_STATES = new Set(['IN_PROGRESS', 'FINISHED', 'PUBLISHED']);

/**
 * Creates the media container for `params` at `path` (a container publishes
 * nothing), or takes up the one an earlier attempt of this item made while Meta
 * still has it: Meta fetches and processes the media again for every new
 * container, which for a long video takes minutes.
 */
export async function mediaContainer(ctx: PublishContext<unknown>, graph: Graph, path: string, params: Params, poll: ContainerPoll): Promise<string> {
  const key = `meta-container:${crypto
    .createHash('sha256')
    .update(JSON.stringify([graph.url(path), params]))
    .digest('base64url')}`;
  const kept = await ctx.progress.get(key);
  if (kept) {
    try {
      const container = await graph.get<Record<string, string>>(kept, { fields: poll.stateField });
      if (LIVE_STATES.has(container[poll.stateField])) return kept;
    } catch (err) {
      // Gone (expired and removed): a new one is made below.
      if (!(err instanceof PublishError) || err.kind !== 'refused') throw err;
    }
  }
  const { id } = await graph.post<{ id: string }>(path, params, { repeatable: true });
  await ctx.progress.set(key, id);
  return id;
}

/** Meta's timestamps ("2026-05-01T10:00:00+0000") as epoch ms. */
export function metaTime(value: string | undefined): number {
  if (!value) return Number.NaN;
  return Date.parse(value.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
}

/** How far before the item's due time a post found on the network may have been made by it. */
const FIND_WINDOW_MS = 5 * 60_000;

/** The first entry made since the item was due whose text is the item's text. */
export function findByText<T extends Record<string, any>>(entries: T[], textField: string, timeField: string, content: string, publishAt: Date): T | undefined {
  const since = publishAt.getTime() - FIND_WINDOW_MS;
  const wanted = content.trim();
  return entries.find((e) => String(e[textField] ?? '').trim() === wanted && !(metaTime(e[timeField]) < since));
}
