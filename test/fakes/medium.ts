/**
 * A local Medium API (v1, as its frozen docs describe it): `Authorization:
 * Bearer` with an integration token (401 {"errors":[{"message":"Token was
 * invalid.","code":6003}]} otherwise), GET /v1/me, posts to the token's own
 * user only (403 for another author id), `title`, `contentFormat` (html or
 * markdown) and `content` required (400), writers of a publication limited to
 * drafts, only the first 3 tags kept, 201 {"data":{...}}. It also serves the
 * profile's public RSS feed (/feed/@username), which lists public posts. Its
 * create endpoint is a profile post (`storeThenFail`).
 */
import { STATUS_CODES } from 'node:http';
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export interface FakeMediumPost {
  id: string;
  title: string;
  authorId: string;
  publicationId?: string;
  contentFormat: string;
  content: string;
  tags: string[];
  canonicalUrl?: string;
  publishStatus: string;
  url: string;
  publishedAt: number;
}

export interface MediumFake extends NetworkFake {
  user: { id: string; username: string; name: string; token: string };
  publications: { id: string; name: string; url: string; role: 'editor' | 'writer' }[];
  posts: FakeMediumPost[];
}

const errors = (status: number, message: string, code?: number): FakeAnswer => ({
  status,
  body: { errors: [{ message, ...(code !== undefined ? { code } : {}) }] },
});

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export async function startMediumFake(): Promise<MediumFake> {
  const fake = (await startNetworkFake()) as MediumFake;
  fake.user = { id: '5303d74c64f66366f00cb9b2a94f3251bf5', username: 'heraldwriter', name: 'Herald Writer', token: '181d415f34379af07b2c11d144dfbe35d' };
  fake.publications = [
    { id: 'b969ac62a46b', name: 'Herald Times', url: 'https://medium.com/herald-times', role: 'editor' },
    { id: 'c0ffee62a46b', name: 'Guest Column', url: 'https://medium.com/guest-column', role: 'writer' },
  ];
  fake.posts = [];

  const authed = (req: RecordedRequest) => req.headers.authorization === `Bearer ${fake.user.token}`;
  const unauthorized = (req: RecordedRequest) =>
    req.headers.authorization ? errors(401, 'Token was invalid.', 6003) : errors(401, 'An access token is required.', 6000);

  function create(req: RecordedRequest, publicationId?: string): FakeAnswer {
    const input = req.json ?? {};
    for (const field of ['title', 'contentFormat', 'content'])
      if (typeof input[field] !== 'string' || input[field] === '') return errors(400, `Missing or invalid field: ${field}`);
    if (!['html', 'markdown'].includes(input.contentFormat)) return errors(400, 'contentFormat must be "html" or "markdown"');
    const status = input.publishStatus ?? 'public';
    if (!['public', 'draft', 'unlisted'].includes(status)) return errors(400, 'Invalid publishStatus');
    if (publicationId) {
      const publication = fake.publications.find((p) => p.id === publicationId);
      if (!publication) return errors(404, 'Publication not found.');
      if (publication.role === 'writer' && status !== 'draft') return errors(403, 'Writers of this publication can only create drafts.');
    }
    const id = crypto.randomBytes(6).toString('hex');
    const slug = String(input.title)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    const post: FakeMediumPost = {
      id,
      title: input.title,
      authorId: fake.user.id,
      publicationId,
      contentFormat: input.contentFormat,
      content: input.content,
      // Medium uses the first 3 tags.
      tags: (Array.isArray(input.tags) ? input.tags : []).slice(0, 3),
      canonicalUrl: input.canonicalUrl,
      publishStatus: status,
      url: `https://medium.com/@${fake.user.username}/${slug}-${id}`,
      publishedAt: Date.now(),
    };
    fake.posts.push(post);
    return {
      status: 201,
      body: {
        data: {
          id,
          title: post.title,
          authorId: post.authorId,
          tags: post.tags,
          url: post.url,
          ...(post.canonicalUrl ? { canonicalUrl: post.canonicalUrl } : {}),
          publishStatus: status,
          publishedAt: post.publishedAt,
          license: input.license ?? 'all-rights-reserved',
          licenseUrl: 'https://medium.com/policy/9db0094a1e0f',
          ...(publicationId ? { publicationId } : {}),
        },
      },
    };
  }

  fake.route({
    'GET /v1/me': (req) =>
      authed(req)
        ? {
            body: {
              data: {
                id: fake.user.id,
                username: fake.user.username,
                name: fake.user.name,
                url: `https://medium.com/@${fake.user.username}`,
                imageUrl: 'https://cdn-images.medium.com/avatar.png',
              },
            },
          }
        : unauthorized(req),
    'POST /v1/users/:authorId/posts': (req) => {
      if (!authed(req)) return unauthorized(req);
      if (req.params.authorId !== fake.user.id) return errors(403, 'You are not allowed to publish as this user.');
      return create(req);
    },
    'POST /v1/publications/:id/posts': (req) => (authed(req) ? create(req, req.params.id) : unauthorized(req)),
    'GET /v1/users/:id/publications': (req) => {
      if (!authed(req)) return unauthorized(req);
      return { body: { data: fake.publications.map(({ id, name, url }) => ({ id, name, description: '', url, imageUrl: '' })) } };
    },
    'GET /v1/publications/:id/contributors': (req) => {
      if (!authed(req)) return unauthorized(req);
      const publication = fake.publications.find((p) => p.id === req.params.id);
      if (!publication) return errors(404, 'Publication not found.');
      return { body: { data: [{ publicationId: publication.id, userId: fake.user.id, role: publication.role }] } };
    },
    'GET /feed/:who': (req) => {
      if (req.params.who !== `@${fake.user.username}`) return { status: 404, body: 'Not found' };
      const items = fake.posts
        .filter((p) => p.publishStatus === 'public' && !p.publicationId)
        .reverse()
        .map(
          (p) =>
            `<item><title><![CDATA[${p.title}]]></title>` +
            `<link>${escapeXml(`${p.url}?source=rss-${fake.user.id}------2`)}</link>` +
            `<guid isPermaLink="false">https://medium.com/p/${p.id}</guid>` +
            `<pubDate>${new Date(p.publishedAt).toUTCString()}</pubDate></item>`,
        )
        .join('');
      return {
        headers: { 'content-type': 'text/xml; charset=UTF-8' },
        body: `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Stories by ${fake.user.name} on Medium</title>${items}</channel></rss>`,
      };
    },
  });
  // Store, then answer a 5xx (`storeThenFail`) on a profile post, in Medium's {errors: [{message}]} shape.
  fake.create = { route: 'POST /v1/users/:authorId/posts', serverError: (status) => errors(status, STATUS_CODES[status] ?? 'Internal Server Error') };
  return fake;
}
