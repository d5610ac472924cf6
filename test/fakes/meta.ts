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
export function graphError(code: number, message: string, more: { subcode?: number; type?: string; status?: number; headers?: Record<string, string>; userMessage?: string } = {}): FakeAnswer {
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
  const container: Container = { id, owner, params, readyAt: Date.now() + store.processingMs[kind], state: 'IN_PROGRESS' };
  if (url) {
    container.fetched = await fetchMedia(url);
    if (container.fetched!.status !== 200) {
      container.state = 'ERROR';
      container.error = fetchError;
    }
  }
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
