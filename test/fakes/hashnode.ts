/**
 * A local Hashnode GraphQL endpoint (the gql-beta schema, as Hashnode's gql-skill
 * describes it): every answer is HTTP 200 with `data` or `errors` carrying
 * `extensions.code`; the PAT is required (UNAUTHENTICATED); each publication
 * has a Pro flag and a write to one without Pro gets the exact FORBIDDEN
 * message; old-schema input (tags by id, coverImageOptions) fails with
 * GRAPHQL_VALIDATION_FAILED; at most 15 tags and 100 KB bodies; posts are made
 * with no de-duplication. With `legacy` on it plays the old gql.hashnode.com:
 * a 301 to an announcement page.
 *
 * The operation is recognised by its root field, not by a full GraphQL parser.
 * Its create endpoint is the one endpoint, where publishPost goes (`storeThenFail`).
 */
import crypto from 'node:crypto';
import { startNetworkFake, type FakeAnswer, type NetworkFake, type RecordedRequest } from './network-fake.ts';

export const PRO_MESSAGE = 'Publication does not have an active Pro plan. Upgrade in your dashboard to access this via the API.';

export interface FakePublication {
  id: string;
  title: string;
  url: string;
  pro: boolean;
  /** Users who may publish (OWNER or EDITOR). */
  editors: string[];
}

export interface FakeHashnodePost {
  id: string;
  publicationId: string;
  authorId: string;
  title: string;
  slug: string;
  url: string;
  contentMarkdown: string;
  tags: { slug: string; name?: string }[];
  subtitle?: string;
  coverImage?: string;
  originalArticleURL?: string;
  publishedAt: string;
  views: number;
  reactionCount: number;
  responseCount: number;
}

export interface HashnodeFake extends NetworkFake {
  user: { id: string; username: string; name: string; token: string };
  publications: FakePublication[];
  posts: FakeHashnodePost[];
  /** Answer as the retired gql.hashnode.com does. */
  legacy: boolean;
}

const objectId = () => crypto.randomBytes(12).toString('hex');
const gqlError = (message: string, code: string, path?: string[]): FakeAnswer => ({
  body: { errors: [{ message, extensions: { code }, ...(path ? { path } : {}) }], data: null },
});

const INPUT_FIELDS = new Set([
  'publicationId',
  'title',
  'subtitle',
  'contentMarkdown',
  'tags',
  'coverImage',
  'originalArticleURL',
  'slug',
  'metaTitle',
  'metaDescription',
  'ogImage',
  'disableComments',
  'isDelisted',
  'enableToc',
  'seriesId',
  'publishAs',
  'coAuthors',
  'publishedAt',
]);

export async function startHashnodeFake(): Promise<HashnodeFake> {
  const fake = (await startNetworkFake()) as HashnodeFake;
  fake.user = { id: '64a0c0ffee0000000000aaaa', username: 'heraldwriter', name: 'Herald Writer', token: 'hn-pat-5b1e0d7c-0a4f-4d2e-9d3b' };
  fake.publications = [
    { id: '65b1c0ffee0000000000bbbb', title: 'Herald Blog', url: 'https://herald.hashnode.dev', pro: true, editors: [fake.user.id] },
    { id: '65b1c0ffee0000000000cccc', title: 'Free Blog', url: 'https://free.hashnode.dev', pro: false, editors: [fake.user.id] },
  ];
  fake.posts = [];
  fake.legacy = false;

  const authed = (req: RecordedRequest) => {
    const header = String(req.headers.authorization ?? '');
    return header.replace(/^Bearer /, '') === fake.user.token;
  };
  const meJson = () => ({
    id: fake.user.id,
    username: fake.user.username,
    name: fake.user.name,
    profilePicture: 'https://cdn.hashnode.com/avatar.png',
    publications: { edges: fake.publications.map((p) => ({ node: { id: p.id, title: p.title, url: p.url } })) },
  });

  function publish(req: RecordedRequest): FakeAnswer {
    if (!authed(req)) return gqlError('You must be authenticated.', 'UNAUTHENTICATED', ['publishPost']);
    const query = String(req.json?.query ?? '');
    if (/coverImageOptions/.test(query)) return gqlError('Field "coverImageOptions" is not defined by type "PublishPostInput".', 'GRAPHQL_VALIDATION_FAILED');
    const input = req.json?.variables?.input;
    if (!input || typeof input !== 'object') return gqlError('Variable "$input" of required type "PublishPostInput!" was not provided.', 'BAD_USER_INPUT');
    for (const key of Object.keys(input))
      if (!INPUT_FIELDS.has(key))
        return gqlError(`Variable "$input" got invalid value; Field "${key}" is not defined by type "PublishPostInput".`, 'GRAPHQL_VALIDATION_FAILED');
    for (const field of ['publicationId', 'title', 'contentMarkdown'])
      if (typeof input[field] !== 'string' || input[field] === '')
        return gqlError(`Variable "$input" got invalid value; Field "${field}" of required type "String!" was not provided.`, 'BAD_USER_INPUT');
    const tags = Array.isArray(input.tags) ? input.tags : [];
    for (const t of tags) {
      if ('id' in t)
        return gqlError('Variable "$input" got invalid value; Field "id" is not defined by type "PublishPostTagInput".', 'GRAPHQL_VALIDATION_FAILED');
      if (typeof t.slug !== 'string' || !t.slug) return gqlError('Field "slug" of required type "String!" was not provided.', 'BAD_USER_INPUT');
    }
    if (tags.length > 15) return gqlError('A post can have at most 15 tags.', 'BAD_USER_INPUT', ['publishPost']);
    const publication = fake.publications.find((p) => p.id === input.publicationId);
    if (!publication) return gqlError('Publication not found', 'NOT_FOUND', ['publishPost']);
    if (!publication.editors.includes(fake.user.id)) return gqlError('You are not allowed to publish in this publication.', 'FORBIDDEN', ['publishPost']);
    if (!publication.pro) return gqlError(PRO_MESSAGE, 'FORBIDDEN', ['publishPost']);
    const id = objectId();
    const slug = String(input.title)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    const post: FakeHashnodePost = {
      id,
      publicationId: publication.id,
      authorId: fake.user.id,
      title: input.title,
      slug,
      url: `${publication.url}/${slug}`,
      contentMarkdown: input.contentMarkdown,
      tags,
      subtitle: input.subtitle,
      coverImage: input.coverImage,
      originalArticleURL: input.originalArticleURL,
      publishedAt: new Date().toISOString(),
      views: 0,
      reactionCount: 0,
      responseCount: 0,
    };
    fake.posts.push(post);
    return { body: { data: { publishPost: { post: { id, slug, url: post.url, title: post.title } } } } };
  }

  fake.route({
    'POST /': (req) => {
      if (fake.legacy) return { status: 301, headers: { location: 'https://hashnode.com/changelog/gql-moved' }, body: '' };
      if (req.raw.length > 100 * 1024) return { status: 413, body: 'request entity too large' };
      const query = String(req.json?.query ?? '');
      const vars = req.json?.variables ?? {};
      if (/\bpublishPost\s*\(/.test(query)) return publish(req);
      if (/\bme\s*\{/.test(query)) {
        if (!authed(req)) return gqlError('You must be authenticated.', 'UNAUTHENTICATED', ['me']);
        return { body: { data: { me: meJson() } } };
      }
      if (/\bpublication\s*\(/.test(query)) {
        const publication = fake.publications.find((p) => p.id === vars.id);
        if (!publication) return { body: { data: { publication: null } } };
        if (!publication.pro) return gqlError(PRO_MESSAGE, 'FORBIDDEN', ['publication']);
        const posts = fake.posts
          .filter((p) => p.publicationId === publication.id)
          .reverse()
          .slice(0, Number(vars.first ?? 10));
        const author = { username: fake.user.username };
        return {
          body: {
            data: {
              publication: {
                id: publication.id,
                posts: { edges: posts.map((p) => ({ node: { id: p.id, title: p.title, url: p.url, publishedAt: p.publishedAt, author } })) },
              },
            },
          },
        };
      }
      if (/\bpost\s*\(/.test(query)) {
        const post = fake.posts.find((p) => p.id === vars.id);
        return {
          body: { data: { post: post ? { id: post.id, views: post.views, reactionCount: post.reactionCount, responseCount: post.responseCount } : null } },
        };
      }
      return gqlError('Cannot query this field on type "Query".', 'GRAPHQL_VALIDATION_FAILED');
    },
  });
  // Store, then answer a 5xx (`storeThenFail`): the publishPost mutation (the first request of a publish) answered
  // with the gateway's status and GraphQL's INTERNAL_SERVER_ERROR.
  fake.create = { route: 'POST /', serverError: (status) => ({ ...gqlError('Internal server error', 'INTERNAL_SERVER_ERROR'), status }) };
  return fake;
}
