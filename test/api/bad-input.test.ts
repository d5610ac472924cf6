/**
 * The "bad input" guarantee, endpoint by endpoint: every malformed body, wrong
 * type, unknown value, bad date, missing header, unknown or foreign id, oversized
 * body and wrong content type gets a 4xx JSON error in the contract's shape that
 * names the field, and changes nothing (every table row and every stored file is
 * compared before and after). A second account owns the "foreign" channel, post,
 * media and customer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PNG_1x1, startHerald, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { assertContractError, assertNames, assertSameState, send, snapshotState, type FormPart, type RawRequest } from '../helpers/bad-input.ts';

const API_PREFIX = '/api/public/v1';
const FUTURE = '2030-06-01T09:00:00.000Z';
const BAD_DATES: [string, unknown][] = [
  ['month 13', '2026-13-01'],
  ['a word', 'tomorrow'],
  ['February 30', '2026-02-30T00:00:00Z'],
  ['hour 25', '2026-06-01T25:00:00Z'],
  ['an empty string', ''],
  ['a number', 5],
];

interface Owned {
  channel: string;
  shortLink: string;
  media: { id: string; path: string };
  post: string;
  group: string;
  customer: string;
  webhook: string;
  /** A recorded (pending) delivery of `webhook`. */
  delivery: string;
  /** A feed subscription (never read: its address answers nothing). */
  feed: string;
  /** A comment on `post`, and a preview link of it. */
  comment: string;
  previewLink: string;
  /** A repeating post (no engine runs here, so it has no occurrence). */
  series: string;
}

interface Fixtures extends Owned {
  herald: TestHerald;
  account: TestAccount;
  revokedKey: string;
  foreign: Owned;
}

type Named = string | RegExp | { message: string | RegExp };

interface Case {
  name: string;
  status: number;
  named: Named;
  /** Method and path default to the endpoint's. */
  request: (fx: Fixtures) => Partial<RawRequest>;
}

interface Endpoint {
  /** As the OpenAPI document names it, e.g. "GET /posts/{id}". */
  route: string;
  /** A path of this route that exists for account A. */
  sample: (fx: Fixtures) => string;
  cases: Case[];
}

function bad(name: string, status: number, named: Named, request: (fx: Fixtures) => Partial<RawRequest> = () => ({})): Case {
  return { name, status, named, request };
}

const byMessage = (message: string | RegExp): Named => ({ message });

/** The valid body the POST /posts cases break one piece at a time. */
function postBody(fx: Fixtures, change?: (body: any) => void): any {
  const body = {
    type: 'schedule',
    date: FUTURE,
    shortLink: false,
    tags: [],
    posts: [
      {
        integration: { id: fx.channel },
        value: [
          { content: 'Hello', image: [] },
          { content: 'first reply', image: [], delay: 5 },
        ],
      },
    ],
  };
  change?.(body);
  return body;
}

function postCase(name: string, named: Named, change: (body: any, fx: Fixtures) => void, status = 400): Case {
  return bad(name, status, named, (fx) => ({ json: postBody(fx, (b) => change(b, fx)) }));
}

/** What every route with a JSON body must refuse, whatever the body means. */
function jsonBodyBasics(): Case[] {
  return [
    bad('invalid JSON text', 400, 'body', () => ({ raw: '{"a": [1, 2' })),
    bad('a JSON array instead of an object', 400, 'body', () => ({ json: [] })),
    bad('Content-Type: application/json with no body', 400, 'body', () => ({ headers: { 'content-type': 'application/json' } })),
    bad('text/plain instead of JSON', 415, 'headers.content-type', () => ({ raw: '{}', headers: { 'content-type': 'text/plain' } })),
    bad('a body over HERALD_BODY_LIMIT', 413, 'body', (fx) => ({ raw: JSON.stringify({ pad: 'x'.repeat(fx.herald.services.config.bodyLimit + 1024) }) })),
  ];
}

/** An id that does not exist and one of the other account: both 404, naming the id. */
function idCases(what: string, pathFor: (id: string) => string, ownerOf: (owned: Owned) => string, body?: unknown): Case[] {
  const named = (id: string) => byMessage(`"${id}" does not exist in this account`);
  const unknownId = 'no-such-id-0000';
  return [
    { name: `unknown ${what} id`, status: 404, named: named(unknownId), request: () => ({ path: pathFor(unknownId), json: body }) },
    {
      name: `${what} id of another account`,
      status: 404,
      named: byMessage('does not exist in this account'),
      request: (fx) => ({ path: pathFor(ownerOf(fx.foreign)), json: body }),
    },
  ];
}

/** The names of the things an account owns that are one id. */
type OwnedId = { [K in keyof Owned]: Owned[K] extends string ? K : never }[keyof Owned];

/** A route whose only input is an id of `what` (account A's `key` for its sample): refused for an unknown id and another account's. */
function idOnly(route: string, what: string, key: OwnedId, pathFor: (id: string) => string): Endpoint {
  return { route, sample: (fx) => pathFor(fx[key]), cases: idCases(what, pathFor, (o) => o[key]) };
}

const channelOf = (o: Owned) => o.channel;
const postOf = (o: Owned) => o.post;

function multipart(parts: FormPart[]): () => Partial<RawRequest> {
  return () => ({ form: parts });
}

const HTML = Buffer.from('<!doctype html><html><body><h1>not an image</h1></body></html>');
const BOUNDARY = 'herald-test-boundary';

const endpoints: Endpoint[] = [
  {
    route: 'GET /is-connected',
    sample: () => '/is-connected',
    cases: [
      bad('an unknown API key', 401, 'headers.authorization', () => ({ auth: 'hk_this_key_does_not_exist' })),
      bad('an unknown Bearer token', 401, 'headers.authorization', () => ({ auth: 'Bearer hk_this_key_does_not_exist' })),
      bad('"Bearer" and nothing else', 401, 'headers.authorization', () => ({ auth: 'Bearer ' })),
      bad('a revoked API key', 401, 'headers.authorization', (fx) => ({ auth: fx.revokedKey })),
      bad('Basic credentials', 401, 'headers.authorization', () => ({ auth: 'Basic dXNlcjpwYXNz' })),
    ],
  },
  { route: 'GET /groups', sample: () => '/groups', cases: [] },
  { route: 'GET /networks', sample: () => '/networks', cases: [] },
  {
    route: 'POST /groups',
    sample: () => '/groups',
    cases: [
      ...jsonBodyBasics(),
      bad('name missing', 400, 'name', () => ({ json: {} })),
      bad('name: 5', 400, 'name', () => ({ json: { name: 5 } })),
      bad('name only spaces', 400, 'name', () => ({ json: { name: '   ' } })),
      bad('name with a NUL character', 400, 'name', () => ({ json: { name: 'a\u0000b' } })),
    ],
  },
  {
    route: 'GET /notifications',
    sample: () => '/notifications',
    cases: [
      bad('page=-1', 400, 'page', () => ({ path: '/notifications?page=-1' })),
      bad('page=abc', 400, 'page', () => ({ path: '/notifications?page=abc' })),
      bad('page=1.5', 400, 'page', () => ({ path: '/notifications?page=1.5' })),
    ],
  },
  {
    route: 'GET /short-links/{code}',
    sample: (fx) => `/short-links/${fx.shortLink}`,
    cases: [
      ...idCases(
        'short link',
        (code) => `/short-links/${code}`,
        (o) => o.shortLink,
      ),
      bad('code longer than 64 characters', 400, 'code', () => ({ path: `/short-links/${'s'.repeat(65)}` })),
      bad('code with a NUL character', 400, 'code', () => ({ path: '/short-links/a%00b' })),
    ],
  },
  {
    route: 'GET /integrations',
    sample: () => '/integrations',
    cases: [
      bad('group longer than 200 characters', 400, 'group', () => ({ path: `/integrations?group=${'g'.repeat(201)}` })),
      bad('group with a NUL character', 400, 'group', () => ({ path: '/integrations?group=a%00b' })),
    ],
  },
  {
    route: 'POST /integrations',
    sample: () => '/integrations',
    cases: [
      ...jsonBodyBasics(),
      bad('identifier missing', 400, 'identifier', () => ({ json: { credentials: { url: 'http://127.0.0.1:9/x' } } })),
      bad('identifier: 5', 400, 'identifier', () => ({ json: { identifier: 5 } })),
      bad('an unknown provider', 400, 'identifier', () => ({ json: { identifier: 'myspace', credentials: {} } })),
      bad('credentials: "x"', 400, 'credentials', () => ({ json: { identifier: 'webhook', credentials: 'x' } })),
      bad('credentials without url', 400, 'credentials.url', () => ({ json: { identifier: 'webhook', credentials: {} } })),
      bad('an ftp:// webhook url', 400, 'credentials.url', () => ({ json: { identifier: 'webhook', credentials: { url: 'ftp://127.0.0.1/x' } } })),
      bad('a link-local (metadata) webhook url', 400, 'credentials.url', () => ({
        json: { identifier: 'webhook', credentials: { url: 'http://169.254.169.254/latest' } },
      })),
      bad('an unknown time zone', 400, 'timeZone', () => ({
        json: { identifier: 'webhook', credentials: { url: 'http://127.0.0.1:9/tz' }, timeZone: 'Mars/Olympus' },
      })),
      bad('posting time 25:00', 400, 'postingTimes.0', () => ({
        json: { identifier: 'webhook', credentials: { url: 'http://127.0.0.1:9/t' }, postingTimes: ['25:00'] },
      })),
      bad('an unknown customer', 404, 'customer', () => ({
        json: { identifier: 'webhook', credentials: { url: 'http://127.0.0.1:9/c' }, customer: 'no-such-customer' },
      })),
      bad("another account's customer", 404, 'customer', (fx) => ({
        json: { identifier: 'webhook', credentials: { url: 'http://127.0.0.1:9/c' }, customer: fx.foreign.customer },
      })),
    ],
  },
  {
    route: 'PATCH /integrations/{id}',
    sample: (fx) => `/integrations/${fx.channel}`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('channel', (id) => `/integrations/${id}`, channelOf, { name: 'renamed' }),
      bad('disabled: "yes"', 400, 'disabled', () => ({ json: { disabled: 'yes' } })),
      bad('name: ""', 400, 'name', () => ({ json: { name: '' } })),
      bad('postingTimes: []', 400, 'postingTimes', () => ({ json: { postingTimes: [] } })),
      bad('postingTimes: ["9am"]', 400, 'postingTimes.0', () => ({ json: { postingTimes: ['9am'] } })),
      bad('an unknown time zone', 400, 'timeZone', () => ({ json: { timeZone: 'Nowhere/Special' } })),
      bad("another account's customer", 404, 'customer', (fx) => ({ json: { customer: fx.foreign.customer } })),
      bad('id with a NUL character', 400, 'id', () => ({ path: '/integrations/a%00b', json: { name: 'x' } })),
    ],
  },
  {
    route: 'DELETE /integrations/{id}',
    sample: (fx) => `/integrations/${fx.channel}`,
    cases: [...idCases('channel', (id) => `/integrations/${id}`, channelOf)],
  },
  {
    route: 'GET /find-slot/{id}',
    sample: (fx) => `/find-slot/${fx.channel}`,
    cases: [...idCases('channel', (id) => `/find-slot/${id}`, channelOf)],
  },
  {
    route: 'GET /integration-settings/{id}',
    sample: (fx) => `/integration-settings/${fx.channel}`,
    cases: [...idCases('channel', (id) => `/integration-settings/${id}`, channelOf)],
  },
  {
    route: 'POST /integration-trigger/{id}',
    sample: (fx) => `/integration-trigger/${fx.channel}`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('channel', (id) => `/integration-trigger/${id}`, channelOf, { methodName: 'sendTest' }),
      bad('methodName missing', 400, 'methodName', () => ({ json: { data: {} } })),
      bad('methodName: 5', 400, 'methodName', () => ({ json: { methodName: 5 } })),
      bad('an unknown method', 404, 'methodName', () => ({ json: { methodName: 'listBoards' } })),
      bad('methodName "__proto__"', 404, 'methodName', () => ({ json: { methodName: '__proto__' } })),
      bad('methodName "toString"', 404, 'methodName', () => ({ json: { methodName: 'toString' } })),
      bad('data nested 100 levels deep', 400, /^data(\.0)+$/, () => ({ raw: `{"methodName":"sendTest","data":${'['.repeat(100)}${']'.repeat(100)}}` })),
    ],
  },
  {
    route: 'GET /social/{provider}',
    sample: () => '/social/webhook',
    cases: [
      bad('an unknown provider', 404, byMessage('"myspace"'), () => ({ path: '/social/myspace' })),
      bad('a provider that connects with credentials', 400, 'provider', () => ({ path: '/social/webhook' })),
    ],
  },
  {
    route: 'GET /analytics/{id}',
    sample: (fx) => `/analytics/${fx.channel}`,
    cases: [
      ...idCases('channel', (id) => `/analytics/${id}`, channelOf),
      bad('date=abc', 400, 'date', (fx) => ({ path: `/analytics/${fx.channel}?date=abc` })),
      bad('date=0', 400, 'date', (fx) => ({ path: `/analytics/${fx.channel}?date=0` })),
      bad('date=-7', 400, 'date', (fx) => ({ path: `/analytics/${fx.channel}?date=-7` })),
    ],
  },
  {
    route: 'GET /analytics/post/{id}',
    sample: (fx) => `/analytics/post/${fx.post}`,
    cases: [
      ...idCases('post', (id) => `/analytics/post/${id}`, postOf),
      bad('date=abc', 400, 'date', (fx) => ({ path: `/analytics/post/${fx.post}?date=abc` })),
    ],
  },
  {
    route: 'POST /upload',
    sample: () => '/upload',
    cases: [
      bad('a JSON body', 415, 'body', () => ({ json: { file: 'x' } })),
      bad('text/plain', 415, 'headers.content-type', () => ({ raw: 'hello', headers: { 'content-type': 'text/plain' } })),
      bad('no body and no content type', 415, 'body', () => ({})),
      bad('multipart without a "file" part', 400, 'file', multipart([{ name: 'alt', content: 'a cat' }])),
      bad('the file in a part named "image"', 400, 'image', multipart([{ name: 'image', content: PNG_1x1, filename: 'a.png' }])),
      bad('an empty file', 400, 'file', multipart([{ name: 'file', content: Buffer.alloc(0), filename: 'empty.png' }])),
      bad('HTML named .png', 415, 'file', multipart([{ name: 'file', content: HTML, filename: 'picture.png' }])),
      bad('HTML named .png, with an Idempotency-Key', 415, 'file', () => ({
        form: [{ name: 'file', content: HTML, filename: 'picture.png' }],
        headers: { 'idempotency-key': 'bad-upload-1' },
      })),
      bad('multipart without a boundary', 400, 'body', () => ({ raw: 'garbage', headers: { 'content-type': 'multipart/form-data' } })),
      bad('multipart cut off inside the file', 400, 'body', () => ({
        raw: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\nabc`,
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      })),
      bad('multipart cut off in the part headers', 400, 'body', () => ({
        raw: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n`,
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      })),
    ],
  },
  {
    route: 'POST /upload-from-url',
    sample: () => '/upload-from-url',
    cases: [
      ...jsonBodyBasics(),
      bad('url missing', 400, 'url', () => ({ json: {} })),
      bad('url: 5', 400, 'url', () => ({ json: { url: 5 } })),
      bad('url that is not a URL', 400, 'url', () => ({ json: { url: 'not a url' } })),
      bad('a file:// url', 400, 'url', () => ({ json: { url: 'file:///etc/passwd' } })),
      bad('a link-local (metadata) url', 400, 'url', () => ({ json: { url: 'http://169.254.169.254/latest/meta-data/' } })),
      bad('a url that answers 404', 400, 'url', (fx) => ({ json: { url: `${fx.herald.url}/no-such-page.png` } })),
      bad('a url that serves HTML', 415, 'url', (fx) => ({ json: { url: `${fx.herald.url}/` } })),
    ],
  },
  {
    route: 'GET /media',
    sample: () => '/media',
    cases: [
      bad('page=-1', 400, 'page', () => ({ path: '/media?page=-1' })),
      bad('limit=0', 400, 'limit', () => ({ path: '/media?limit=0' })),
      bad('limit=abc', 400, 'limit', () => ({ path: '/media?limit=abc' })),
    ],
  },
  {
    route: 'DELETE /media/{id}',
    sample: (fx) => `/media/${fx.media.id}`,
    cases: [
      ...idCases(
        'media',
        (id) => `/media/${id}`,
        (o) => o.media.id,
      ),
    ],
  },
  {
    route: 'GET /posts',
    sample: () => `/posts?startDate=2030-01-01T00:00:00Z&endDate=2030-12-31T00:00:00Z`,
    cases: [
      bad('startDate missing', 400, 'startDate', () => ({ path: '/posts?endDate=2030-12-31T00:00:00Z' })),
      bad('endDate missing', 400, 'endDate', () => ({ path: '/posts?startDate=2030-01-01T00:00:00Z' })),
      ...BAD_DATES.map(([what, date]) =>
        bad(`startDate ${what}`, 400, 'startDate', () => ({ path: `/posts?startDate=${encodeURIComponent(String(date))}&endDate=2030-12-31T00:00:00Z` })),
      ),
      bad('endDate before startDate', 400, 'endDate', () => ({ path: '/posts?startDate=2030-12-31T00:00:00Z&endDate=2030-01-01T00:00:00Z' })),
      bad('startDate given twice', 400, 'startDate', () => ({ path: '/posts?startDate=2030-01-01&startDate=2030-02-01&endDate=2030-12-31' })),
      bad('customer longer than 200 characters', 400, 'customer', () => ({
        path: `/posts?startDate=2030-01-01&endDate=2030-12-31&customer=${'c'.repeat(201)}`,
      })),
    ],
  },
  {
    route: 'GET /posts/export',
    sample: () => '/posts/export?startDate=2030-01-01T00:00:00Z&endDate=2030-12-31T00:00:00Z',
    cases: [
      bad('startDate missing', 400, 'startDate', () => ({ path: '/posts/export?endDate=2030-12-31T00:00:00Z' })),
      bad('endDate missing', 400, 'endDate', () => ({ path: '/posts/export?startDate=2030-01-01T00:00:00Z' })),
      ...BAD_DATES.map(([what, date]) =>
        bad(`startDate ${what}`, 400, 'startDate', () => ({
          path: `/posts/export?startDate=${encodeURIComponent(String(date))}&endDate=2030-12-31T00:00:00Z`,
        })),
      ),
      bad('endDate before startDate', 400, 'endDate', () => ({ path: '/posts/export?startDate=2030-12-31T00:00:00Z&endDate=2030-01-01T00:00:00Z' })),
      bad('customer longer than 200 characters', 400, 'customer', () => ({
        path: `/posts/export?startDate=2030-01-01&endDate=2030-12-31&customer=${'c'.repeat(201)}`,
      })),
    ],
  },
  {
    route: 'POST /posts/import',
    sample: () => '/posts/import',
    cases: [
      bad('a JSON body', 415, 'headers.content-type', () => ({ json: { content: 'x' } })),
      bad('text/plain', 415, 'headers.content-type', () => ({ raw: 'channels,content', headers: { 'content-type': 'text/plain' } })),
      bad('no body and no content type', 415, 'headers.content-type', () => ({})),
      bad('dryRun: "yes"', 400, 'dryRun', () => ({ path: '/posts/import?dryRun=yes', raw: 'channels,content', headers: { 'content-type': 'text/csv' } })),
      bad('a file with a problem (an unknown channel)', 400, 'line.2.channels', () => ({
        raw: 'date,channels,content\n2030-06-01T09:00:00Z,Nowhere,Hello\n',
        headers: { 'content-type': 'text/csv' },
      })),
      bad('a file with a channel of another account', 400, 'line.2.channels', (fx) => ({
        raw: `date,channels,content\n2030-06-01T09:00:00Z,${fx.foreign.channel},Hello\n`,
        headers: { 'content-type': 'text/csv' },
      })),
      bad('a file that is not CSV (a quote never closed)', 400, 'line.2', () => ({
        raw: 'channels,content\nx,"never closed\n',
        headers: { 'content-type': 'text/csv' },
      })),
      bad('multipart without a "file" part', 400, 'file', multipart([{ name: 'note', content: 'posts' }])),
      bad('the file in a part named "csv"', 400, 'csv', multipart([{ name: 'csv', content: Buffer.from('channels,content\n'), filename: 'a.csv' }])),
      bad('multipart without a boundary', 400, 'body', () => ({ raw: 'garbage', headers: { 'content-type': 'multipart/form-data' } })),
      bad('multipart cut off inside the file', 400, 'body', () => ({
        raw: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nchannels,content\nx,y\n`,
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      })),
    ],
  },
  {
    route: 'POST /posts',
    sample: () => '/posts',
    cases: [
      ...jsonBodyBasics(),
      bad('a JSON string', 400, 'body', () => ({ json: 'hello' })),
      bad('JSON null', 400, 'body', () => ({ raw: 'null' })),
      bad('a multipart body', 400, 'body', multipart([{ name: 'type', content: 'draft' }])),
      postCase('type missing', 'type', (b) => delete b.type),
      postCase('type: 5', 'type', (b) => (b.type = 5)),
      postCase('type "later" (unknown)', 'type', (b) => (b.type = 'later')),
      postCase('type "SCHEDULE" (wrong case)', 'type', (b) => (b.type = 'SCHEDULE')),
      postCase('posts missing', 'posts', (b) => delete b.posts),
      postCase('posts: "x"', 'posts', (b) => (b.posts = 'x')),
      postCase('posts: []', 'posts', (b) => (b.posts = [])),
      postCase('posts: [5]', 'posts.0', (b) => (b.posts = [5])),
      postCase('integration missing', 'posts.0.integration', (b) => delete b.posts[0].integration),
      postCase('integration.id: 5', 'posts.0.integration.id', (b) => (b.posts[0].integration.id = 5)),
      postCase('value: {}', 'posts.0.value', (b) => (b.posts[0].value = {})),
      postCase('value: []', 'posts.0.value', (b) => (b.posts[0].value = [])),
      postCase('content: 123', 'posts.0.value.0.content', (b) => (b.posts[0].value[0].content = 123)),
      postCase('content missing', 'posts.0.value.0.content', (b) => delete b.posts[0].value[0].content),
      postCase('empty content and no media', 'posts.0.value.0.content', (b) => (b.posts[0].value[0].content = '  ')),
      postCase('content over the channel maximum', 'posts.0.value.0.content', (b) => (b.posts[0].value[0].content = 'x'.repeat(100_001))),
      postCase('content with a NUL character', 'posts.0.value.0.content', (b) => (b.posts[0].value[0].content = 'a\u0000b')),
      postCase('image: "x"', 'posts.0.value.0.image', (b) => (b.posts[0].value[0].image = 'x')),
      postCase('image: [5]', 'posts.0.value.0.image.0', (b) => (b.posts[0].value[0].image = [5])),
      postCase('image without path', 'posts.0.value.0.image.0.path', (b) => (b.posts[0].value[0].image = [{ id: 'x' }])),
      postCase(
        'image on a foreign host',
        'posts.0.value.0.image.0.path',
        (b) => (b.posts[0].value[0].image = [{ id: '', path: 'https://example.com/cat.png' }]),
      ),
      postCase(
        'image as base64',
        'posts.0.value.0.image.0.path',
        (b) => (b.posts[0].value[0].image = [{ path: `data:image/png;base64,${PNG_1x1.toString('base64')}` }]),
      ),
      postCase('image on the upload host that does not exist', 'posts.0.value.0.image.0.path', (b, fx) => {
        b.posts[0].value[0].image = [{ path: `${fx.herald.services.config.uploadUrl}/2030/01/missing.png` }];
      }),
      postCase("another account's media", 'posts.0.value.0.image.0.path', (b, fx) => (b.posts[0].value[0].image = [fx.foreign.media])),
      postCase('delay: -1', 'posts.0.value.1.delay', (b) => (b.posts[0].value[1].delay = -1)),
      postCase('delay: "soon"', 'posts.0.value.1.delay', (b) => (b.posts[0].value[1].delay = 'soon')),
      postCase('delay: 1e12', 'posts.0.value.1.delay', (b) => (b.posts[0].value[1].delay = 1e12)),
      postCase('delay: 1.5', 'posts.0.value.1.delay', (b) => (b.posts[0].value[1].delay = 1.5)),
      // Number() would make 1, 1 and 16 of these.
      postCase('delay: true', 'posts.0.value.1.delay', (b) => (b.posts[0].value[1].delay = true)),
      postCase('delay: [1]', 'posts.0.value.1.delay', (b) => (b.posts[0].value[1].delay = [1])),
      postCase('delay: "0x10"', 'posts.0.value.1.delay', (b) => (b.posts[0].value[1].delay = '0x10')),
      postCase('delay: ""', 'posts.0.value.1.delay', (b) => (b.posts[0].value[1].delay = '')),
      postCase('tags: [5]', 'tags.0', (b) => (b.tags = [5])),
      postCase('tags: "x"', 'tags', (b) => (b.tags = 'x')),
      postCase('tags: [{label only}]', 'tags.0', (b) => (b.tags = [{ label: 'news' }])),
      postCase('shortLink: "yes"', 'shortLink', (b) => (b.shortLink = 'yes')),
      postCase('settings: "x"', 'posts.0.settings', (b) => (b.posts[0].settings = 'x')),
      postCase('settings.__type of another provider', 'posts.0.settings.__type', (b) => (b.posts[0].settings = { __type: 'x' })),
      postCase('settings nested 100 levels deep', /^posts\.0\.settings\.deep(\.0)+$/, (b) => (b.posts[0].settings = { deep: nested(100) })),
      ...BAD_DATES.map(([what, date]) => postCase(`date ${what}`, 'date', (b) => (b.date = date))),
      postCase('type "schedule" without date', 'date', (b) => delete b.date),
      postCase('an unknown channel', 'posts.0.integration.id', (b) => (b.posts[0].integration.id = 'no-such-channel'), 404),
      postCase("another account's channel", 'posts.0.integration.id', (b, fx) => (b.posts[0].integration.id = fx.foreign.channel), 404),
      postCase(
        'a valid entry, then an unknown channel',
        'posts.1.integration.id',
        (b) => b.posts.push({ integration: { id: 'nope' }, value: [{ content: 'x' }] }),
        404,
      ),
      postCase('a valid entry, then a bad one', 'posts.1.value.0.content', (b, fx) =>
        b.posts.push({ integration: { id: fx.channel }, value: [{ content: '' }] }),
      ),
      postCase('update without group or value[0].id', 'posts.0.group', (b) => (b.type = 'update')),
      postCase("update of another account's group", 'posts.0.group', (b, fx) => {
        b.type = 'update';
        b.posts[0].group = fx.foreign.group;
      }),
      postCase("update of another account's post by value[0].id", 'posts.0.value.0.id', (b, fx) => {
        b.type = 'update';
        b.posts[0].value[0].id = fx.foreign.post;
      }),
      bad('40 000 distinct image paths (more than one SQL statement can bind)', 400, 'posts.0.value.0.image.0.path', (fx) => ({ json: manyImagePaths(fx) })),
      bad('an unknown channel, with an Idempotency-Key', 404, 'posts.0.integration.id', (fx) => ({
        json: postBody(fx, (b) => (b.posts[0].integration.id = 'no-such-channel')),
        headers: { 'idempotency-key': 'bad-post-1' },
      })),
    ],
  },
  {
    route: 'GET /posts/{id}',
    sample: (fx) => `/posts/${fx.post}`,
    cases: [
      ...idCases('post', (id) => `/posts/${id}`, postOf),
      bad('id with a NUL character', 400, 'id', () => ({ path: '/posts/a%00b' })),
      bad('id with bad percent-encoding', 400, 'url', () => ({ path: '/posts/%ZZ' })),
      bad('id longer than a path segment may be', 414, 'url', () => ({ path: `/posts/${'p'.repeat(600)}` })),
    ],
  },
  {
    route: 'DELETE /posts/{id}',
    sample: (fx) => `/posts/${fx.post}`,
    cases: [...idCases('post', (id) => `/posts/${id}`, postOf)],
  },
  idOnly('DELETE /posts/group/{group}', 'post group', 'group', (id) => `/posts/group/${id}`),
  {
    route: 'PUT /posts/{id}/status',
    sample: (fx) => `/posts/${fx.post}/status`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('post', (id) => `/posts/${id}/status`, postOf, { status: 'draft' }),
      bad('status missing', 400, 'status', () => ({ json: {} })),
      bad('status: 5', 400, 'status', () => ({ json: { status: 5 } })),
      bad('status "published" (unknown)', 400, 'status', () => ({ json: { status: 'published' } })),
    ],
  },
  {
    route: 'PUT /posts/{id}/settings',
    sample: (fx) => `/posts/${fx.post}/settings`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('post', (id) => `/posts/${id}/settings`, postOf, { settings: {} }),
      bad('settings missing', 400, 'settings', () => ({ json: {} })),
      bad('settings: "x"', 400, 'settings', () => ({ json: { settings: 'x' } })),
      bad('settings: []', 400, 'settings', () => ({ json: { settings: [] } })),
      bad('settings.__type of another provider', 400, 'settings.__type', () => ({ json: { settings: { __type: 'x' } } })),
    ],
  },
  {
    route: 'PUT /posts/{id}/release-id',
    sample: (fx) => `/posts/${fx.post}/release-id`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('post', (id) => `/posts/${id}/release-id`, postOf, { releaseId: 'r1' }),
      bad('releaseId missing', 400, 'releaseId', () => ({ json: {} })),
      bad('releaseId: ""', 400, 'releaseId', () => ({ json: { releaseId: '' } })),
      bad('releaseId: 5', 400, 'releaseId', () => ({ json: { releaseId: 5 } })),
    ],
  },
  {
    route: 'GET /posts/{id}/missing',
    sample: (fx) => `/posts/${fx.post}/missing`,
    cases: [...idCases('post', (id) => `/posts/${id}/missing`, postOf)],
  },
  {
    route: 'POST /posts/{id}/retry',
    sample: (fx) => `/posts/${fx.post}/retry`,
    cases: [...idCases('post', (id) => `/posts/${id}/retry`, postOf), bad('a post with no failed item', 409, byMessage('no failed item'))],
  },
  { route: 'GET /webhooks', sample: () => '/webhooks', cases: [] },
  {
    route: 'POST /webhooks',
    sample: () => '/webhooks',
    cases: [
      ...jsonBodyBasics(),
      bad('url missing', 400, 'url', () => ({ json: { events: ['post.created'] } })),
      bad('url: 5', 400, 'url', () => ({ json: { url: 5, events: ['post.created'] } })),
      bad('an ftp:// url', 400, 'url', () => ({ json: { url: 'ftp://example.com/x', events: ['post.created'] } })),
      bad('a private url', 400, 'url', () => ({ json: { url: 'http://10.0.0.1/x', events: ['post.created'] } })),
      bad('a link-local (metadata) url', 400, 'url', () => ({ json: { url: 'http://169.254.169.254/latest', events: ['post.created'] } })),
      bad('events missing', 400, 'events', () => ({ json: { url: 'http://127.0.0.1:9/e' } })),
      bad('events: []', 400, 'events', () => ({ json: { url: 'http://127.0.0.1:9/e', events: [] } })),
      bad('an unknown event', 400, 'events.0', () => ({ json: { url: 'http://127.0.0.1:9/e', events: ['post.exploded'] } })),
      bad('name: ""', 400, 'name', () => ({ json: { url: 'http://127.0.0.1:9/e', events: ['post.created'], name: '' } })),
    ],
  },
  {
    route: 'PATCH /webhooks/{id}',
    sample: (fx) => `/webhooks/${fx.webhook}`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases(
        'webhook',
        (id) => `/webhooks/${id}`,
        (o) => o.webhook,
        { name: 'renamed' },
      ),
      bad('events: []', 400, 'events', () => ({ json: { events: [] } })),
      bad('disabled: "yes"', 400, 'disabled', () => ({ json: { disabled: 'yes' } })),
      bad('a private url', 400, 'url', () => ({ json: { url: 'http://192.168.0.1/x' } })),
    ],
  },
  idOnly('DELETE /webhooks/{id}', 'webhook', 'webhook', (id) => `/webhooks/${id}`),
  {
    route: 'GET /webhooks/{id}/deliveries',
    sample: (fx) => `/webhooks/${fx.webhook}/deliveries`,
    cases: [
      ...idCases(
        'webhook',
        (id) => `/webhooks/${id}/deliveries`,
        (o) => o.webhook,
      ),
      bad('page=-1', 400, 'page', (fx) => ({ path: `/webhooks/${fx.webhook}/deliveries?page=-1` })),
    ],
  },
  {
    route: 'POST /webhooks/{id}/deliveries/{deliveryId}/redeliver',
    sample: (fx) => `/webhooks/${fx.webhook}/deliveries/${fx.delivery}/redeliver`,
    cases: [
      ...idCases(
        'webhook',
        (id) => `/webhooks/${id}/deliveries/no-such-delivery/redeliver`,
        (o) => o.webhook,
      ),
      bad('unknown delivery id', 404, byMessage('"no-such-id-0000" does not exist in this account'), (fx) => ({
        path: `/webhooks/${fx.webhook}/deliveries/no-such-id-0000/redeliver`,
      })),
      bad('delivery of another account', 404, byMessage('does not exist in this account'), (fx) => ({
        path: `/webhooks/${fx.webhook}/deliveries/${fx.foreign.delivery}/redeliver`,
      })),
    ],
  },
  idOnly('POST /webhooks/{id}/test', 'webhook', 'webhook', (id) => `/webhooks/${id}/test`),
  { route: 'GET /feeds', sample: () => '/feeds', cases: [] },
  {
    route: 'POST /feeds',
    sample: () => '/feeds',
    cases: [
      ...jsonBodyBasics(),
      bad('url missing', 400, 'url', (fx) => ({ json: { channels: [fx.channel] } })),
      bad('an ftp:// url', 400, 'url', (fx) => ({ json: { url: 'ftp://example.com/feed.xml', channels: [fx.channel] } })),
      bad('a private url', 400, 'url', (fx) => ({ json: { url: 'http://10.0.0.1/feed.xml', channels: [fx.channel] } })),
      bad('channels missing', 400, 'channels', () => ({ json: { url: 'http://127.0.0.1:9/f.xml' } })),
      bad('channels: []', 400, 'channels', () => ({ json: { url: 'http://127.0.0.1:9/f.xml', channels: [] } })),
      bad('an unknown channel', 400, 'channels.0', () => ({ json: { url: 'http://127.0.0.1:9/f.xml', channels: ['no-such-channel'] } })),
      bad("another account's channel", 400, 'channels.0', (fx) => ({ json: { url: 'http://127.0.0.1:9/f.xml', channels: [fx.foreign.channel] } })),
      bad('an unknown placeholder', 400, 'template', (fx) => ({ json: { url: 'http://127.0.0.1:9/f.xml', channels: [fx.channel], template: '{body}' } })),
      bad('an unknown mode', 400, 'mode', (fx) => ({ json: { url: 'http://127.0.0.1:9/f.xml', channels: [fx.channel], mode: 'hourly' } })),
    ],
  },
  idOnly('GET /feeds/{id}', 'feed', 'feed', (id) => `/feeds/${id}`),
  {
    route: 'PATCH /feeds/{id}',
    sample: (fx) => `/feeds/${fx.feed}`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases(
        'feed',
        (id) => `/feeds/${id}`,
        (o) => o.feed,
        { paused: true },
      ),
      bad('paused: "yes"', 400, 'paused', () => ({ json: { paused: 'yes' } })),
      bad('channels: []', 400, 'channels', () => ({ json: { channels: [] } })),
      bad('a private url', 400, 'url', () => ({ json: { url: 'http://192.168.0.1/feed.xml' } })),
    ],
  },
  idOnly('DELETE /feeds/{id}', 'feed', 'feed', (id) => `/feeds/${id}`),
  idOnly('POST /feeds/{id}/check', 'feed', 'feed', (id) => `/feeds/${id}/check`),
];

/** Approvals, comments and preview links of a post (the fixture's post is a draft that never asked for approval). */
const UNKNOWN = 'no-such-id-0000';
function postChildCases(what: string, path: (post: string, child: string) => string, childOf: (o: Owned) => string): Case[] {
  return [
    bad(`unknown ${what} id`, 404, byMessage(`"${UNKNOWN}" does not exist in this account`), (fx) => ({ path: path(fx.post, UNKNOWN) })),
    bad(`${what} id of another account`, 404, byMessage('does not exist in this account'), (fx) => ({ path: path(fx.post, childOf(fx.foreign)) })),
    bad(`post id of another account`, 404, byMessage('does not exist in this account'), (fx) => ({ path: path(fx.foreign.post, childOf(fx.foreign)) })),
  ];
}

endpoints.push(
  { route: 'GET /approval-settings', sample: () => '/approval-settings', cases: [] },
  {
    route: 'PUT /approval-settings',
    sample: () => '/approval-settings',
    cases: [
      ...jsonBodyBasics(),
      bad('membersNeedApproval missing', 400, 'membersNeedApproval', () => ({ json: {} })),
      bad('membersNeedApproval: "yes"', 400, 'membersNeedApproval', () => ({ json: { membersNeedApproval: 'yes' } })),
    ],
  },
  {
    route: 'GET /posts/{id}/approval',
    sample: (fx) => `/posts/${fx.post}/approval`,
    cases: idCases('post', (id) => `/posts/${id}/approval`, postOf),
  },
  {
    route: 'POST /posts/{id}/approve',
    sample: (fx) => `/posts/${fx.post}/approve`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('post', (id) => `/posts/${id}/approve`, postOf, {}),
      bad('comment: 5', 400, 'comment', () => ({ json: { comment: 5 } })),
      bad('comment over 5,000 characters', 400, 'comment', () => ({ json: { comment: 'x'.repeat(5001) } })),
      bad('a post that never asked for approval', 409, byMessage('is not awaiting approval'), () => ({ json: {} })),
    ],
  },
  {
    route: 'POST /posts/{id}/reject',
    sample: (fx) => `/posts/${fx.post}/reject`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('post', (id) => `/posts/${id}/reject`, postOf, { comment: 'no' }),
      bad('comment missing', 400, 'comment', () => ({ json: {} })),
      bad('comment: "   "', 400, 'comment', () => ({ json: { comment: '   ' } })),
      bad('a post that never asked for approval', 409, byMessage('is not awaiting approval'), () => ({ json: { comment: 'no' } })),
    ],
  },
  {
    route: 'GET /posts/{id}/comments',
    sample: (fx) => `/posts/${fx.post}/comments`,
    cases: idCases('post', (id) => `/posts/${id}/comments`, postOf),
  },
  {
    route: 'POST /posts/{id}/comments',
    sample: (fx) => `/posts/${fx.post}/comments`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('post', (id) => `/posts/${id}/comments`, postOf, { content: 'hello' }),
      bad('content missing', 400, 'content', () => ({ json: {} })),
      bad('content: ""', 400, 'content', () => ({ json: { content: '' } })),
      bad('content: 5', 400, 'content', () => ({ json: { content: 5 } })),
      bad('content over 5,000 characters', 400, 'content', () => ({ json: { content: 'x'.repeat(5001) } })),
    ],
  },
  {
    route: 'DELETE /posts/{id}/comments/{commentId}',
    sample: (fx) => `/posts/${fx.post}/comments/${fx.comment}`,
    cases: postChildCases(
      'comment',
      (post, id) => `/posts/${post}/comments/${id}`,
      (o) => o.comment,
    ),
  },
  {
    route: 'GET /posts/{id}/preview-links',
    sample: (fx) => `/posts/${fx.post}/preview-links`,
    cases: idCases('post', (id) => `/posts/${id}/preview-links`, postOf),
  },
  {
    route: 'POST /posts/{id}/preview-links',
    sample: (fx) => `/posts/${fx.post}/preview-links`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases('post', (id) => `/posts/${id}/preview-links`, postOf, {}),
      bad('expiresInHours: 0', 400, 'expiresInHours', () => ({ json: { expiresInHours: 0 } })),
      bad('expiresInHours over 90 days', 400, 'expiresInHours', () => ({ json: { expiresInHours: 2161 } })),
      bad('expiresInHours: 1.5', 400, 'expiresInHours', () => ({ json: { expiresInHours: 1.5 } })),
      bad('expiresInHours: "soon"', 400, 'expiresInHours', () => ({ json: { expiresInHours: 'soon' } })),
    ],
  },
  {
    route: 'DELETE /posts/{id}/preview-links/{linkId}',
    sample: (fx) => `/posts/${fx.post}/preview-links/${fx.previewLink}`,
    cases: postChildCases(
      'preview link',
      (post, id) => `/posts/${post}/preview-links/${id}`,
      (o) => o.previewLink,
    ),
  },
);

/** The valid body the /series cases break one piece at a time. */
function seriesBody(fx: Fixtures, change?: (body: any) => void): any {
  const body = {
    repeat: { start: FUTURE, unit: 'week', weekdays: ['mon', 'thu'], timezone: 'Europe/Berlin', count: 4 },
    posts: [{ integration: { id: fx.channel }, value: [{ content: 'Weekly', image: [] }] }],
  };
  change?.(body);
  return body;
}

/** What POST /series and PUT /series/{id} refuse in the rule and the post. */
function seriesCases(): Case[] {
  const series = (name: string, named: Named, change: (body: any, fx: Fixtures) => void, status = 400) =>
    bad(name, status, named, (fx) => ({ json: seriesBody(fx, (b) => change(b, fx)) }));
  return [
    series('repeat missing', 'repeat', (b) => delete b.repeat),
    series('repeat.start not a date', 'repeat.start', (b) => (b.repeat.start = 'next monday')),
    series('repeat.unit: "month"', 'repeat.unit', (b) => (b.repeat.unit = 'month')),
    series('repeat.every: 0', 'repeat.every', (b) => (b.repeat.every = 0)),
    series('repeat.every: 1.5', 'repeat.every', (b) => (b.repeat.every = 1.5)),
    series('repeat.every over 365', 'repeat.every', (b) => (b.repeat.every = 366)),
    series('an unknown weekday', 'repeat.weekdays.0', (b) => (b.repeat.weekdays = ['someday'])),
    series('weekdays on a daily rule', 'repeat.weekdays', (b) => (b.repeat.unit = 'day')),
    series('an unknown time zone', 'repeat.timezone', (b) => (b.repeat.timezone = 'Mars/Olympus')),
    series('repeat.until not a date', 'repeat.until', (b) => (b.repeat = { ...b.repeat, count: undefined, until: 'soon' })),
    series('until and count', 'repeat.count', (b) => (b.repeat.until = '2031-01-01')),
    series('until before the start', 'repeat.until', (b) => (b.repeat = { ...b.repeat, count: undefined, until: '2030-05-01' })),
    series('repeat.count: 0', 'repeat.count', (b) => (b.repeat.count = 0)),
    series('a rule whose every occurrence is past', 'repeat', (b) => (b.repeat.start = '2020-01-06T09:00:00Z')),
    series('posts: []', 'posts', (b) => (b.posts = [])),
    series('an empty post', 'posts.0.value.0.content', (b) => (b.posts[0].value[0].content = '')),
    series('an unknown channel', 'posts.0.integration.id', (b) => (b.posts[0].integration.id = 'no-such-channel'), 404),
    series("another account's channel", 'posts.0.integration.id', (b, fx) => (b.posts[0].integration.id = fx.foreign.channel), 404),
    series("another account's media", 'posts.0.value.0.image.0.path', (b, fx) => (b.posts[0].value[0].image = [fx.foreign.media])),
  ];
}

endpoints.push(
  { route: 'GET /series', sample: () => '/series', cases: [] },
  { route: 'POST /series', sample: () => '/series', cases: [...jsonBodyBasics(), ...seriesCases()] },
  {
    route: 'GET /series/{id}',
    sample: (fx) => `/series/${fx.series}`,
    cases: idCases(
      'series',
      (id) => `/series/${id}`,
      (o) => o.series,
    ),
  },
  {
    route: 'PUT /series/{id}',
    sample: (fx) => `/series/${fx.series}`,
    cases: [
      ...jsonBodyBasics(),
      ...idCases(
        'series',
        (id) => `/series/${id}`,
        (o) => o.series,
        {
          repeat: { start: FUTURE, unit: 'day', count: 2 },
          posts: [{ integration: { id: 'any' }, value: [{ content: 'x', image: [] }] }],
        },
      ),
      ...seriesCases(),
    ],
  },
  {
    route: 'DELETE /series/{id}',
    sample: (fx) => `/series/${fx.series}`,
    cases: idCases(
      'series',
      (id) => `/series/${id}`,
      (o) => o.series,
    ),
  },
);

/** 8 entries x 100 items x 50 images, every path different: about 600 KB, under the body limit. */
function manyImagePaths(fx: Fixtures): unknown {
  let n = 0;
  const item = () => ({ content: 'x', image: Array.from({ length: 50 }, () => ({ path: `m${(n++).toString(36)}` })) });
  const entry = () => ({ integration: { id: fx.channel }, value: Array.from({ length: 100 }, item) });
  return postBody(fx, (b) => (b.posts = Array.from({ length: 8 }, entry)));
}

function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function methodOf(route: string): string {
  return route.split(' ')[0];
}

function namedExpectation(named: Named): { field?: string | RegExp; message?: string | RegExp } {
  return typeof named === 'object' && !(named instanceof RegExp) ? { message: named.message } : { field: named };
}

async function createOwned(herald: TestHerald, account: TestAccount, label: string): Promise<Owned> {
  const channel = await account.callUntyped('POST', '/integrations', {
    identifier: 'webhook',
    name: `${label} hook`,
    credentials: { url: `http://127.0.0.1:9/${label}` },
  });
  assert.equal(channel.status, 201, JSON.stringify(channel.body));
  const media = await upload(account, herald.api, PNG_1x1, `${label}.png`);
  assert.equal(media.status, 201, JSON.stringify(media.body));
  const webhook = await account.callUntyped('POST', '/webhooks', { url: `http://127.0.0.1:9/${label}-events`, events: ['post.created'] });
  assert.equal(webhook.status, 201, JSON.stringify(webhook.body));
  const post = await account.callUntyped('POST', '/posts', {
    type: 'draft',
    date: FUTURE,
    tags: [],
    shortLink: true,
    posts: [
      {
        integration: { id: channel.body.id },
        value: [{ content: `${label} draft https://example.com/${label}`, image: [{ id: media.body.id, path: media.body.path }] }],
      },
    ],
  });
  assert.equal(post.status, 201, JSON.stringify(post.body));
  const detail = await account.callUntyped('GET', `/posts/${post.body[0].postId}`);
  const shortLink = /\/s\/([A-Za-z0-9_-]+)/.exec(detail.body.content)?.[1];
  assert.ok(shortLink, detail.body.content);
  const customer = await account.callUntyped('POST', '/groups', { name: `${label} customer` });
  assert.equal(customer.status, 201, JSON.stringify(customer.body));
  const deliveries = await account.callUntyped('GET', `/webhooks/${webhook.body.id}/deliveries`);
  assert.equal(deliveries.body.deliveries.length, 1, JSON.stringify(deliveries.body));
  const feed = await account.callUntyped('POST', '/feeds', { url: `http://127.0.0.1:9/${label}.xml`, channels: [channel.body.id] });
  assert.equal(feed.status, 201, JSON.stringify(feed.body));
  const comment = await account.callUntyped('POST', `/posts/${post.body[0].postId}/comments`, { content: `${label} comment` });
  assert.equal(comment.status, 201, JSON.stringify(comment.body));
  const previewLink = await account.callUntyped('POST', `/posts/${post.body[0].postId}/preview-links`, {});
  assert.equal(previewLink.status, 201, JSON.stringify(previewLink.body));
  const series = await account.callUntyped('POST', '/series', {
    repeat: { start: FUTURE, unit: 'day', count: 3 },
    posts: [{ integration: { id: channel.body.id }, value: [{ content: `${label} every day`, image: [] }] }],
  });
  assert.equal(series.status, 201, JSON.stringify(series.body));
  return {
    channel: channel.body.id,
    comment: comment.body.id,
    previewLink: previewLink.body.id,
    series: series.body.id,
    shortLink,
    media: { id: media.body.id, path: media.body.path },
    post: post.body[0].postId,
    group: detail.body.group,
    customer: customer.body.id,
    webhook: webhook.body.id,
    delivery: deliveries.body.deliveries[0].id,
    feed: feed.body.id,
  };
}

async function createFixtures(herald: TestHerald): Promise<Fixtures> {
  const account = await herald.newAccount('Account A');
  const other = await herald.newAccount('Account B');
  const old = await herald.services.accounts.createKey(account.id, 'revoked');
  await herald.services.accounts.revokeKey(account.id, old.summary.id);
  return { herald, account, revokedKey: old.key, ...(await createOwned(herald, account, 'a')), foreign: await createOwned(herald, other, 'b') };
}

for (const store of await testStores()) {
  describe(`bad input: a 4xx naming the field, nothing changed (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fx: Fixtures;

    before(async () => {
      herald = await startHerald(store);
      fx = await createFixtures(herald);
    });
    after(async () => {
      await herald.close();
    });

    it('the table covers every route of the public API', async () => {
      const spec = herald.server.swagger() as { paths: Record<string, Record<string, unknown>> };
      const routes = Object.entries(spec.paths)
        .filter(([path]) => path.startsWith(API_PREFIX))
        .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path.slice(API_PREFIX.length)}`));
      assert.deepEqual(endpoints.map((e) => e.route).sort(), routes.sort());
    });

    for (const endpoint of endpoints) {
      const withoutKey = bad('no Authorization header', 401, 'headers.authorization', () => ({ auth: null }));
      describe(endpoint.route, () => {
        for (const c of [withoutKey, ...endpoint.cases]) {
          it(`${c.name}: ${c.status}`, async () => {
            const request = { method: methodOf(endpoint.route), path: endpoint.sample(fx), ...c.request(fx) };
            const what = `${endpoint.route} [${c.name}]`;
            const before = await snapshotState(herald);
            const answer = await send(herald.api, fx.account.key, request);
            assertContractError(answer, c.status, what);
            assertNames(answer, namedExpectation(c.named), what);
            assertSameState(before, await snapshotState(herald), what);
          });
        }
      });
    }

    it('GET with Content-Type: application/json and no body is not an error', async () => {
      const json = { 'content-type': 'application/json' };
      for (const endpoint of endpoints.filter((e) => methodOf(e.route) === 'GET' && !e.route.includes('analytics') && !e.route.includes('social'))) {
        const answer = await send(herald.api, fx.account.key, { method: 'GET', path: endpoint.sample(fx), headers: json });
        assert.equal(answer.status, 200, `${endpoint.route}: ${answer.text.slice(0, 300)}`);
        // The export's answer is the CSV file.
        assert.ok(answer.isJson || endpoint.route === 'GET /posts/export', endpoint.route);
      }
    });

    it('DELETE with Content-Type: application/json and no body: 404 for an unknown id, 200 for a real one', async () => {
      const json = { 'content-type': 'application/json' };
      const missing = await send(herald.api, fx.account.key, { method: 'DELETE', path: '/posts/no-such-post', headers: json });
      assertContractError(missing, 404, 'DELETE /posts/no-such-post');
      assert.equal(missing.body.code, 'not_found');

      const created = await fx.account.callUntyped('POST', '/posts', postBody(fx));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const deleted = await send(herald.api, fx.account.key, { method: 'DELETE', path: `/posts/${created.body[0].postId}`, headers: json });
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.deleted, true);
      const gone = await fx.account.callUntyped('GET', `/posts/${created.body[0].postId}`);
      assert.equal(gone.status, 404);

      const extra = await fx.account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: 'http://127.0.0.1:9/extra' } });
      assert.equal(extra.status, 201);
      const removed = await send(herald.api, fx.account.key, { method: 'DELETE', path: `/integrations/${extra.body.id}`, headers: json });
      assert.equal(removed.status, 200, removed.text);
    });

    it('control: the valid body the POST /posts cases break is accepted', async () => {
      const answer = await send(herald.api, fx.account.key, {
        method: 'POST',
        path: '/posts',
        json: postBody(fx, (b) => (b.posts[0].value[0].image = [fx.media])),
      });
      assert.equal(answer.status, 201, answer.text);
      assert.deepEqual(
        answer.body.map((r: { integration: string }) => r.integration),
        [fx.channel],
      );
    });
  });
}
