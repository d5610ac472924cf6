/**
 * A local Forem (dev.to) API as its docs and model describe it: the `api-key`
 * header (401 {"error":"unauthorized","status":401} without a known one), v1
 * only with the versioned Accept header, articles validated as Forem does
 * (title required and at most 128 characters, at most 4 alphanumeric tags, a
 * body unique per user and title, a canonical URL unique among articles),
 * front matter in the body overriding the JSON fields, `published` false unless
 * sent, and writes throttled to one a second with 429 and Retry-After. Its
 * create endpoint is POST /api/articles (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const ACCEPT_V1 = 'application/vnd.forem.api-v1+json';

export interface FakeUser {
  id: number;
  username: string;
  name: string;
  apiKey: string;
}

export interface FakeArticle {
  id: number;
  userId: number;
  title: string;
  body_markdown: string;
  published: boolean;
  tags: string[];
  main_image: string | null;
  canonical_url: string | null;
  organization_id: number | null;
  url: string;
  published_at: string | null;
  page_views_count: number;
  public_reactions_count: number;
  comments_count: number;
}

export interface DevtoFake extends NetworkFake {
  users: FakeUser[];
  articles: FakeArticle[];
  organizations: { id: number; name: string; username: string }[];
  /** Enforce Forem's one write a second per key (off unless a test turns it on). */
  throttleWrites: boolean;
  /** When each key last wrote (epoch ms). */
  lastWrite: Map<string, number>;
}

const err = (status: number, error: string): FakeAnswer => ({ status, body: { error, status } });

/** Reads a leading Jekyll front-matter block the way Forem does: it overrides the JSON fields. */
function frontMatter(body: string): Record<string, string> | undefined {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(body);
  if (!m) return undefined;
  const fields: Record<string, string> = {};
  for (const line of m[1].split(/\r?\n/)) {
    const kv = /^(\w+):\s*(.*)$/.exec(line);
    if (kv) fields[kv[1]] = kv[2].trim();
  }
  return fields;
}

export async function startDevtoFake(): Promise<DevtoFake> {
  const fake = (await startNetworkFake()) as DevtoFake;
  fake.users = [{ id: 4242, username: 'heraldwriter', name: 'Herald Writer', apiKey: 'devkey-0123456789abcdef' }];
  fake.articles = [];
  fake.organizations = [{ id: 77, name: 'Herald Org', username: 'heraldorg' }];
  fake.throttleWrites = false;
  fake.lastWrite = new Map();
  let nextId = 1000;

  const userOf = (req: RecordedRequest) => fake.users.find((u) => u.apiKey === req.headers['api-key']);
  const v1 = (req: RecordedRequest) => req.headers.accept === ACCEPT_V1;

  function view(a: FakeArticle) {
    const user = fake.users.find((u) => u.id === a.userId)!;
    const org = fake.organizations.find((o) => o.id === a.organization_id);
    return {
      type_of: 'article',
      id: a.id,
      title: a.title,
      description: a.body_markdown.slice(0, 100),
      slug: `${a.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${a.id}`,
      path: new URL(a.url).pathname,
      url: a.url,
      canonical_url: a.canonical_url ?? a.url,
      published: a.published,
      published_at: a.published_at,
      tag_list: a.tags,
      body_markdown: a.body_markdown,
      page_views_count: a.page_views_count,
      public_reactions_count: a.public_reactions_count,
      comments_count: a.comments_count,
      user: { name: user.name, username: user.username },
      ...(org ? { organization: { name: org.name, username: org.username } } : {}),
    };
  }

  fake.route({
    'GET /api/users/me': (req) => {
      const user = userOf(req);
      if (!user) return err(401, 'unauthorized');
      return {
        body: {
          type_of: 'user',
          id: user.id,
          username: user.username,
          name: user.name,
          summary: null,
          joined_at: 'Jan 1, 2020',
          profile_image: `https://media.dev.to/${user.username}.png`,
        },
      };
    },
    'POST /api/articles': (req) => {
      const user = userOf(req);
      if (!user) return err(401, 'unauthorized');
      if (fake.throttleWrites) {
        const last = fake.lastWrite.get(user.apiKey) ?? 0;
        const wait = last + 1000 - Date.now();
        if (wait > 0) return { status: 429, headers: { 'retry-after': String(Math.ceil(wait / 1000)) }, body: { error: 'Retry later', status: 429 } };
      }
      fake.lastWrite.set(user.apiKey, Date.now());
      const input = req.json?.article;
      if (!input || typeof input !== 'object') return err(422, 'param is missing or the value is empty: article');
      let body = String(input.body_markdown ?? '');
      let title = input.title as string | undefined;
      let published = input.published === true;
      let tags: string[] = Array.isArray(input.tags) ? input.tags : typeof input.tags === 'string' ? input.tags.split(',').map((t: string) => t.trim()) : [];
      const matter = frontMatter(body);
      if (matter) {
        if (matter.title) title = matter.title;
        if (matter.published) published = matter.published === 'true';
        if (matter.tags) tags = matter.tags.split(',').map((t) => t.trim());
        body = body.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n?/, '');
      }
      if (!title || !String(title).trim()) return err(422, "Title can't be blank");
      if (String(title).length > 128) return err(422, 'Title is too long (maximum is 128 characters)');
      if (tags.length > 4) return err(422, 'Tag list exceed the maximum of 4 tags');
      const bad = tags.find((t) => !/^[a-zA-Z0-9]+$/.test(t));
      if (bad !== undefined) return err(422, `Tag "${bad}" contains non-alphanumeric or prohibited unicode characters`);
      if (Buffer.byteLength(body) > 800 * 1024) return err(422, 'Body markdown is too long.');
      if (fake.articles.some((a) => a.userId === user.id && a.title === title && a.body_markdown === body))
        return err(422, 'Body markdown has already been taken');
      const canonical = input.canonical_url ? String(input.canonical_url) : null;
      if (canonical && fake.articles.some((a) => a.published && a.canonical_url === canonical))
        return err(422, 'Canonical url has already been taken. Email support@dev.to for further details.');
      if (input.main_image && !/^https?:\/\//.test(String(input.main_image))) return err(422, 'Main image is not a valid URL');
      const orgId = input.organization_id === undefined ? null : Number(input.organization_id);
      if (orgId !== null && !fake.organizations.some((o) => o.id === orgId)) return err(422, 'Organization is not valid');
      const id = nextId++;
      const article: FakeArticle = {
        id,
        userId: user.id,
        title: String(title),
        body_markdown: body,
        published,
        tags: tags.map((t) => t.toLowerCase()),
        main_image: input.main_image ?? null,
        canonical_url: canonical,
        organization_id: orgId,
        url: `https://dev.to/${user.username}/${String(title)
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')}-${id}`,
        published_at: published ? new Date().toISOString() : null,
        page_views_count: 0,
        public_reactions_count: 0,
        comments_count: 0,
      };
      fake.articles.push(article);
      return { status: 201, body: view(article), headers: v1(req) ? {} : { warning: '299 - "API v0 is deprecated"' } };
    },
    'GET /api/articles/me/all': (req) => {
      const user = userOf(req);
      if (!user) return err(401, 'unauthorized');
      const perPage = Math.min(1000, Number(req.query.per_page ?? 30));
      const page = Math.max(1, Number(req.query.page ?? 1));
      const mine = fake.articles.filter((a) => a.userId === user.id).reverse();
      return { body: mine.slice((page - 1) * perPage, page * perPage).map(view) };
    },
    'GET /api/organizations/:username': (req) => {
      const org = fake.organizations.find((o) => o.username === req.params.username);
      return org ? { body: { type_of: 'organization', ...org } } : err(404, 'not found');
    },
    'GET /api/tags': () => ({
      body: [
        { id: 1, name: 'javascript' },
        { id: 2, name: 'webdev' },
      ],
    }),
  });
  // Store, then answer a 5xx (`storeThenFail`) on article creation, in Forem's {error, status} shape.
  fake.create = { route: 'POST /api/articles', serverError: (status) => err(status, STATUS_CODES[status] ?? 'Internal Server Error') };
  return fake;
}
