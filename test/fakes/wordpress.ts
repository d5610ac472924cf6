/**
 * A WordPress REST API (wp/v2) for what a real site cannot be made to do on
 * demand: a 5xx after the post was created, a 429 or 503 with Retry-After, a
 * page from a firewall. Built from the fact sheet: Basic auth with application
 * passwords (401 incorrect_password / invalid_username), anonymous requests
 * refused with 401 rest_cannot_create, a Contributor's 403 rest_cannot_publish,
 * term ids checked (400 rest_invalid_param naming the field), media that needs
 * Content-Disposition, and slugs made unique with -2, -3…. Its create endpoint
 * is POST /wp/v2/:type (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakeUser {
  id: number;
  login: string;
  name: string;
  password: string;
  role: 'author' | 'contributor';
}

export interface FakePost {
  id: number;
  type: string;
  title: string;
  content: string;
  status: string;
  slug: string;
  author: number;
  categories: number[];
  tags: number[];
  featured_media: number;
  date_gmt: string;
}

export interface WordPressFake extends NetworkFake {
  users: FakeUser[];
  posts: FakePost[];
  media: { id: number; filename: string; type: string; bytes: Buffer }[];
  /** Revokes a user's application password. */
  revoke(login: string): void;
}

export const AUTHOR: FakeUser = { id: 7, login: 'ada', name: 'Ada Author', password: 'abcdEFGHijklMNOPqrstUVWX', role: 'author' };
export const CONTRIBUTOR: FakeUser = { id: 8, login: 'carl', name: 'Carl Contributor', password: 'zyxwVUTSrqpoNMLKjihgFEDC', role: 'contributor' };
export const CATEGORY_ID = 3;
export const TAG_ID = 12;

function error(status: number, code: string, message: string, more: Record<string, unknown> = {}): FakeAnswer {
  return { status, body: { code, message, data: { status, ...more } } };
}

function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

export async function startWordPressFake(): Promise<WordPressFake> {
  const users = [{ ...AUTHOR }, { ...CONTRIBUTOR }];
  const posts: FakePost[] = [];
  const media: WordPressFake['media'] = [];
  let nextId = 100;

  /** The user a Basic header names, an error answer, or undefined for an anonymous request. */
  const who = (request: RecordedRequest): FakeUser | FakeAnswer | undefined => {
    const header = request.headers.authorization;
    if (!header) return undefined;
    const [login, ...rest] = Buffer.from(header.replace(/^Basic /, ''), 'base64')
      .toString('utf8')
      .split(':');
    const user = users.find((u) => u.login === login);
    if (!user) return error(401, 'invalid_username', '<strong>Error:</strong> Unknown username. Check again or try your email address.');
    // Application passwords may be sent with or without their spaces.
    if (rest.join(':').replace(/[^a-z\d]/gi, '') !== user.password)
      return error(401, 'incorrect_password', 'The provided password is an invalid application password.');
    return user;
  };
  const isUser = (value: FakeUser | FakeAnswer | undefined): value is FakeUser => value !== undefined && 'login' in value;

  const view = (p: FakePost) => ({
    id: p.id,
    slug: p.slug,
    status: p.status,
    type: p.type === 'posts' ? 'post' : p.type,
    author: p.author,
    link: p.status === 'publish' ? `${fake.url}/${p.slug}/` : `${fake.url}/?p=${p.id}`,
    date_gmt: p.date_gmt,
    modified_gmt: p.date_gmt,
    title: { raw: p.title, rendered: p.title },
    content: { raw: p.content, rendered: p.content },
    categories: p.categories,
    tags: p.tags,
    featured_media: p.featured_media,
  });

  const fake = (await startNetworkFake({
    'GET /wp-json/': () => ({ body: { name: 'Fake Press', description: 'Just another WordPress site', url: fake.url, namespaces: ['wp/v2'] } }),
    'GET /wp-json/wp/v2/users/me': (request) => {
      const user = who(request);
      if (!user) return error(401, 'rest_not_logged_in', 'You are not currently logged in.');
      if (!isUser(user)) return user;
      return {
        body: {
          id: user.id,
          name: user.name,
          slug: user.login,
          avatar_urls: { 24: 'https://gravatar.test/24', 96: 'https://gravatar.test/96' },
          roles: [user.role],
        },
      };
    },
    'POST /wp-json/wp/v2/media': (request) => {
      const user = who(request);
      if (!user) return error(401, 'rest_cannot_create', 'Sorry, you are not allowed to create posts as this user.');
      if (!isUser(user)) return user;
      if (user.role === 'contributor') return error(403, 'rest_cannot_create', 'Sorry, you are not allowed to create posts as this user.');
      if (request.raw.length === 0) return error(400, 'rest_upload_no_data', 'No data supplied.');
      const filename = /filename="?([^";]+)"?/.exec(request.headers['content-disposition'] ?? '')?.[1];
      if (!filename)
        return error(
          400,
          'rest_upload_invalid_disposition',
          'Invalid Content-Disposition supplied. Content-Disposition needs to be formatted as `attachment; filename="image.png"` or similar.',
        );
      const id = nextId++;
      media.push({ id, filename, type: request.headers['content-type'] ?? '', bytes: request.raw });
      return { status: 201, body: { id, source_url: `${fake.url}/wp-content/uploads/${filename}`, mime_type: request.headers['content-type'] } };
    },
    'POST /wp-json/wp/v2/:type': (request) => {
      const user = who(request);
      if (!user) return error(401, 'rest_cannot_create', 'Sorry, you are not allowed to create posts as this user.');
      if (!isUser(user)) return user;
      if (request.params.type !== 'posts') return error(404, 'rest_no_route', 'No route was found matching the URL and request method.');
      const body = request.json ?? {};
      const status = body.status ?? 'draft';
      if (status === 'publish' && user.role === 'contributor')
        return error(403, 'rest_cannot_publish', 'Sorry, you are not allowed to publish posts in this post type.');
      for (const field of ['categories', 'tags'] as const) {
        const ids = body[field] ?? [];
        const known = field === 'categories' ? [CATEGORY_ID] : [TAG_ID];
        const bad = (ids as unknown[]).findIndex((id) => !Number.isInteger(id) || !known.includes(id as number));
        if (bad !== -1)
          return error(400, 'rest_invalid_param', `Invalid parameter(s): ${field}`, { params: { [field]: `${field}[${bad}] is not a valid term id.` } });
      }
      if (body.featured_media && !media.some((m) => m.id === body.featured_media)) {
        return error(400, 'rest_invalid_featured_media', 'Invalid featured media ID.');
      }
      const base = slugify(body.slug ?? body.title ?? '') || String(nextId);
      let slug = base;
      for (let n = 2; posts.some((p) => p.slug === slug); n++) slug = `${base}-${n}`;
      const post: FakePost = {
        id: nextId++,
        type: request.params.type,
        title: body.title ?? '',
        content: body.content ?? '',
        status,
        slug,
        author: user.id,
        categories: body.categories ?? [],
        tags: body.tags ?? [],
        featured_media: body.featured_media ?? 0,
        date_gmt: new Date().toISOString().slice(0, 19),
      };
      posts.push(post);
      return { status: 201, body: view(post) };
    },
    'GET /wp-json/wp/v2/:type': (request) => {
      const user = who(request);
      if (user && !isUser(user)) return user;
      const slugs = request.query.slug?.split(',');
      const statuses = (request.query.status ?? 'publish').split(',');
      if (statuses.some((s) => s !== 'publish') && !user)
        return error(400, 'rest_invalid_param', 'Invalid parameter(s): status', { params: { status: 'Status is forbidden.' } });
      const found = posts
        .filter((p) => p.type === request.params.type)
        .filter((p) => !slugs || slugs.includes(p.slug))
        .filter((p) => !request.query.author || p.author === Number(request.query.author))
        .filter((p) => !request.query.search || p.title.includes(request.query.search))
        .filter((p) => statuses.includes(p.status))
        .reverse();
      return { body: found.map(view), headers: { 'x-wp-total': String(found.length), 'x-wp-totalpages': '1' } };
    },
  })) as WordPressFake;
  fake.users = users;
  fake.posts = posts;
  fake.media = media;
  fake.revoke = (login) => {
    const user = users.find((u) => u.login === login);
    if (user) user.password = `revoked-${Math.random()}`;
  };
  // Store, then answer a 5xx (`storeThenFail`) on post creation: WordPress's own JSON error for a 500, a proxy's page otherwise.
  fake.create = {
    route: 'POST /wp-json/wp/v2/:type',
    serverError: (status) =>
      status === 500
        ? error(500, 'internal_server_error', '<p>There has been a critical error on this website.</p>')
        : { status, body: `<html><body><h1>${status} ${STATUS_CODES[status]}</h1></body></html>`, headers: { 'content-type': 'text/html' } },
  };
  return fake;
}
