/**
 * What Meta's local fakes (Facebook, Instagram, Instagram Login, Threads) share:
 * Graph's error body, the access token check (Bearer header or access_token
 * parameter), and the media container life (created from a public URL that Meta
 * fetches itself, IN_PROGRESS while Meta processes it, for a wall-clock time
 * that tests set per kind, then FINISHED, then PUBLISHED), as Meta's Graph API,
 * Instagram Platform and Threads docs describe them.
 */
import type { FakeAnswer, NetworkFake, RecordedRequest } from './network-fake.ts';

let trace = 0;

/** Graph's error body: {"error":{"message","type","code","error_subcode","fbtrace_id"}}, HTTP 400 unless told. */
export function graphError(
  code: number,
  message: string,
  more: { subcode?: number; type?: string; status?: number; headers?: Record<string, string>; userMessage?: string } = {},
): FakeAnswer {
  return {
    status: more.status ?? 400,
    headers: more.headers,
    body: {
      error: {
        message,
        type: more.type ?? (code === 190 ? 'OAuthException' : 'GraphMethodException'),
        code,
        ...(more.subcode ? { error_subcode: more.subcode } : {}),
        ...(more.userMessage ? { error_user_msg: more.userMessage } : {}),
        fbtrace_id: `Atrace${++trace}`,
      },
    },
  };
}

/**
 * Meta's answer of a server error: code 1 "An unknown error has occurred." (500)
 * or code 2 "Service temporarily unavailable" (503), marked transient, as the
 * Graph API's error reference lists them. The fakes' `storeThenFail` answers it.
 */
export function graphServerError(status: number): FakeAnswer {
  const [code, message] = status === 503 ? [2, 'Service temporarily unavailable'] : [1, 'An unknown error has occurred.'];
  const answer = graphError(code, message, { status, type: 'OAuthException' });
  (answer.body as { error: Record<string, unknown> }).error.is_transient = true;
  return answer;
}

export const EXPIRED_TOKEN = (): FakeAnswer =>
  graphError(190, 'Error validating access token: Session has expired on Friday, 01-May-26 10:00:00 PDT.', { subcode: 463 });

/** The token a request carries: the Bearer header, else the access_token parameter (query or form). */
export function tokenOf(request: RecordedRequest): string | undefined {
  const header = String(request.headers.authorization ?? '');
  if (header.startsWith('Bearer ')) return header.slice(7);
  if (header.startsWith('OAuth ')) return header.slice(6);
  return request.query.access_token ?? request.form?.access_token;
}

/** The request's parameters: Graph takes them in the query string or a form body alike. */
export function paramsOf(request: RecordedRequest): Record<string, string> {
  return { ...request.query, ...(request.form ?? {}), ...(request.json ?? {}) };
}

/** Tokens the fake issued and what each may do; a token not in the map (or revoked) gets error 190. */
export interface TokenBook {
  /** token → the id of the user, Page or account it acts as. */
  valid: Map<string, string>;
  revoked: Set<string>;
}

export function tokenBook(fake: NetworkFake): TokenBook {
  fake.state.tokens ??= { valid: new Map(), revoked: new Set() } satisfies TokenBook;
  return fake.state.tokens;
}

/** Wraps a handler so that it runs only with a valid token, as Graph does. */
export function authed(fake: NetworkFake, handler: (request: RecordedRequest, actor: string) => FakeAnswer | Promise<FakeAnswer>) {
  return async (request: RecordedRequest): Promise<FakeAnswer> => {
    const token = tokenOf(request);
    const book = tokenBook(fake);
    if (!token) return graphError(2500, 'An active access token must be used to query information about the current user.', { type: 'OAuthException' });
    if (book.revoked.has(token) || !book.valid.has(token)) return EXPIRED_TOKEN();
    return handler(request, book.valid.get(token)!);
  };
}

export interface Container {
  id: string;
  owner: string;
  params: Record<string, string>;
  /** What Meta got when it fetched the media URL. */
  fetched?: { url: string; status: number; type: string; bytes: number };
  /** When Meta has processed the media (epoch ms). */
  readyAt: number;
  state: 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'PUBLISHED';
  error?: string;
}

export interface ContainerStore {
  containers: Map<string, Container>;
  /** How long Meta takes to process a new container, by what it holds (0: FINISHED at the first look). */
  processingMs: { video: number; image: number; other: number };
  nextId: number;
}

export function containerStore(fake: NetworkFake): ContainerStore {
  fake.state.containers ??= { containers: new Map(), processingMs: { video: 0, image: 0, other: 0 }, nextId: 17_900_000_000 } satisfies ContainerStore;
  return fake.state.containers;
}

/** Meta downloads the media from the public URL when the container is created. */
async function fetchMedia(url: string): Promise<Container['fetched']> {
  try {
    const response = await fetch(url);
    const bytes = Buffer.from(await response.arrayBuffer());
    return { url, status: response.status, type: response.headers.get('content-type') ?? '', bytes: bytes.length };
  } catch {
    return { url, status: 0, type: '', bytes: 0 };
  }
}

/** Creates a container; its media URL is fetched now, and a URL that cannot be fetched ends in ERROR. */
export async function createContainer(fake: NetworkFake, owner: string, params: Record<string, string>, fetchError: string): Promise<Container> {
  const store = containerStore(fake);
  const id = String(store.nextId++);
  const url = params.image_url ?? params.video_url;
  const kind = params.video_url ? 'video' : params.image_url ? 'image' : 'other';
  const container: Container = { id, owner, params, readyAt: 0, state: 'IN_PROGRESS' };
  if (url) {
    container.fetched = await fetchMedia(url);
    if (container.fetched!.status !== 200) {
      container.state = 'ERROR';
      container.error = fetchError;
    }
  }
  // Processing starts once the media is in, as the container's id is answered: a slow
  // download must not use up the processing time a test sets.
  container.readyAt = Date.now() + store.processingMs[kind];
  store.containers.set(id, container);
  return container;
}

/** A container's state now: IN_PROGRESS until Meta has processed its media, then FINISHED. */
export function lookAt(container: Container): Container['state'] {
  if (container.state === 'IN_PROGRESS' && Date.now() >= container.readyAt) container.state = 'FINISHED';
  return container.state;
}

export function newId(fake: NetworkFake): string {
  fake.state.ids ??= 18_000_000_000;
  return String(fake.state.ids++);
}

/**
 * Insights, as the Graph API, Instagram Platform and Threads docs describe
 * them: GET /{object}/insights?metric=a,b answers {data: [{name, period, values:
 * [{value, end_time}], title, description, id: "{object}/insights/{name}/{period}"}]},
 * a total over the range as `total_value: {value}` instead of `values`, and a
 * post's figures as one lifetime value. Tests set the figures per object.
 */
export interface InsightsBook {
  /** object id → metric → day (YYYY-MM-DD, UTC) → value; a day not set counts 0. */
  daily: Map<string, Map<string, Map<string, number>>>;
  /** object id → metric → lifetime value (a count, or counts by type), or the figure as it stands (followers). */
  lifetime: Map<string, Record<string, unknown>>;
}

export function insightsBook(fake: NetworkFake): InsightsBook {
  fake.state.insights ??= { daily: new Map(), lifetime: new Map() } satisfies InsightsBook;
  return fake.state.insights;
}

/** Sets an object's daily figures for a metric. */
export function setDaily(fake: NetworkFake, id: string, metric: string, byDay: Record<string, number>): void {
  const book = insightsBook(fake);
  if (!book.daily.has(id)) book.daily.set(id, new Map());
  const metrics = book.daily.get(id)!;
  if (!metrics.has(metric)) metrics.set(metric, new Map());
  for (const [day, value] of Object.entries(byDay)) metrics.get(metric)!.set(day, value);
}

/** Sets an object's lifetime (or current) figures. */
export function setLifetime(fake: NetworkFake, id: string, figures: Record<string, unknown>): void {
  const book = insightsBook(fake);
  book.lifetime.set(id, { ...book.lifetime.get(id), ...figures });
}

export function dailyFigure(fake: NetworkFake, id: string, metric: string, day: string): number {
  return insightsBook(fake).daily.get(id)?.get(metric)?.get(day) ?? 0;
}

export function lifetimeFigure(fake: NetworkFake, id: string, metric: string): unknown {
  return insightsBook(fake).lifetime.get(id)?.[metric] ?? 0;
}

const DAY_MS = 86_400_000;

/** The days a since/until range (Unix seconds) covers: from the day of `since`, each day that starts before `until`. */
export function rangeDays(since: number, until: number): string[] {
  const days: string[] = [];
  for (let start = Date.parse(`${new Date(since * 1000).toISOString().slice(0, 10)}T00:00:00Z`); start < until * 1000; start += DAY_MS) {
    days.push(new Date(start).toISOString().slice(0, 10));
  }
  return days;
}

/** A daily value, dated as Meta dates it: by the end of its day, midnight Pacific (07:00 UTC the next morning). */
export function dailyValue(day: string, value: number): { value: number; end_time: string } {
  const next = new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
  return { value, end_time: `${next}T07:00:00+0000` };
}

/** One metric as an insights answer lists it. */
export function insightEntry(
  objectId: string,
  name: string,
  period: string,
  figures: { values: unknown[] } | { total_value: { value: unknown } },
  edge = 'insights',
) {
  const title = name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
  return { name, period, ...figures, title, description: `${title} (${period})`, id: `${objectId}/${edge}/${name}/${period}` };
}

/** An Insights answer for a range, with the paging links to the ranges before and after it, as Graph gives them. */
export function insightsAnswer(fake: NetworkFake, request: RecordedRequest, range: { since: number; until: number }, data: unknown[]): FakeAnswer {
  const span = range.until - range.since;
  return {
    body: {
      data,
      paging: {
        previous: `${fake.url}${request.path}?since=${range.since - span}&until=${range.since}`,
        next: `${fake.url}${request.path}?since=${range.until}&until=${range.until + span}`,
      },
    },
  };
}

/**
 * since/until of an insights request (Unix seconds; yesterday through today
 * when left out), or Graph's refusal when they are more than `maxDays` apart or
 * the wrong way round.
 */
export function insightsRange(request: RecordedRequest, maxDays: number): { since: number; until: number } | FakeAnswer {
  const now = Math.floor(Date.now() / 1000);
  const p = paramsOf(request);
  const until = p.until ? Number(p.until) : now;
  const since = p.since ? Number(p.since) : until - 86_400;
  if (!Number.isFinite(since) || !Number.isFinite(until) || since >= until) return graphError(100, '(#100) The since parameter must be before until');
  if (until - since > maxDays * 86_400)
    return graphError(100, `(#100) There cannot be more than ${maxDays} days (${maxDays * 86_400} s) between since and until`);
  return { since, until };
}

/** The metrics asked for, or Graph's refusal of a name it does not know (or no metric at all). */
export function requestedMetrics(request: RecordedRequest, known: readonly string[]): string[] | FakeAnswer {
  const metrics = (paramsOf(request).metric ?? '').split(',').filter(Boolean);
  if (metrics.length === 0) return graphError(100, '(#100) The parameter metric is required');
  const unknown = metrics.find((m) => !known.includes(m));
  return unknown ? graphError(100, `(#100) metric[0] must be one of the following values: ${known.join(', ')}`) : metrics;
}

/** Permissions the person turned off (Meta lets them decline, or later remove, one permission at a time). */
export function declined(fake: NetworkFake): Set<string> {
  fake.state.declined ??= new Set<string>();
  return fake.state.declined;
}

/** Whether the connected app holds `permission`: asked for in the consent dialog and not turned off. */
export function granted(fake: NetworkFake, permission: string): boolean {
  const asked = String(fake.state.authorize?.scope ?? '').split(',');
  return asked.includes(permission) && !declined(fake).has(permission);
}

/** The fields a Graph read asks for (`fields=a,b.limit(0)` → a, b). */
export function fieldsOf(request: RecordedRequest): string[] {
  return (paramsOf(request).fields ?? '')
    .split(',')
    .map((f) => f.split(/[.{(]/)[0])
    .filter(Boolean);
}

/** `object` with only the fields asked for, and its id, as Graph answers a read. */
export function pick(request: RecordedRequest, object: Record<string, unknown>): Record<string, unknown> {
  const fields = fieldsOf(request);
  return Object.fromEntries(Object.entries(object).filter(([k, v]) => v !== undefined && (k === 'id' || fields.includes(k))));
}
