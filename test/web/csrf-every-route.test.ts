/**
 * "Every POST, PUT, PATCH and DELETE [under /api/app] must carry the session's
 * CSRF token in X-CSRF-Token" (README, "Web sessions"), held over the route table
 * itself: each state-changing route the server registered under /api/app is
 * asked with the session cookie and no token, and with another session's token,
 * and must refuse (403 csrf_failed, the contract's error body) without changing
 * anything; with the right token it is not refused for CSRF. A route added
 * tomorrow is in the table, and so in this test, without anyone listing it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { WebClient, type WebAnswer } from '../accounts/web-client.ts';
import { untypedCaller, PNG_1x1, startHerald, type UntypedCaller, type TestHerald } from '../helpers/herald.ts';
import { assertError, FUTURE } from '../helpers/api-fixtures.ts';
import { registeredRoutes } from '../helpers/routes.ts';

const PREFIX = '/api/app/';
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** They open a session (or, for a forgotten password, ask for the link that does), so there is none yet whose token they could ask for. */
const OPEN_A_SESSION = [
  'POST /api/app/auth/login',
  'POST /api/app/auth/signup',
  'POST /api/app/auth/password-reset',
  'POST /api/app/auth/password-reset/complete',
];
const PASSWORD = 'correct horse battery';

/**
 * Every row of every table, as text per table: what "changes nothing" is checked against. Request
 * counters are left out: the fixtures' own calls are counted in batches, written whenever.
 */
async function everything(herald: TestHerald): Promise<Record<string, string>> {
  const db = herald.services.store.db;
  const tables = await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'rate_counters' ORDER BY name`.execute(db);
  const out: Record<string, string> = {};
  for (const { name } of tables.rows) out[name] = JSON.stringify((await sql`SELECT * FROM ${sql.table(name)} ORDER BY rowid`.execute(db)).rows);
  return out;
}

/** The tables whose rows differ. */
const changedTables = (before: Record<string, string>, after: Record<string, string>) =>
  [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((t) => before[t] !== after[t]);

describe('CSRF on every state-changing /api/app route', () => {
  let herald: TestHerald;
  let owner: WebClient;
  let member: WebClient;
  let routes: string[];
  /** Real ids for the routes' parameters, by the path segment before them; others get an unknown id. */
  const ids: Record<string, string> = {};

  before(async () => {
    herald = await startHerald('sqlite', { env: { HERALD_POSTS_PER_HOUR: '1000' } });
    owner = new WebClient(herald.url);
    const session = (await owner.signUp('owner@example.com', PASSWORD)).body;
    const invited = await owner.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    member = new WebClient(herald.url);
    ids.people = (await member.signUp('member@example.com', PASSWORD, { invitation: invited.body.token })).body.user.id;
    ids.invitations = (await created(owner.app('POST', '/invitations', { email: 'later@example.com', role: 'member' }))).id;

    // Something real behind every kind of id, so a request that got through would change it.
    const api: UntypedCaller = untypedCaller(herald.api, (await herald.services.accounts.createKey(session.account.id, 'fixtures')).key);
    const ok = async (answer: Promise<{ status: number; body: any }>) => {
      const { status, body } = await answer;
      assert.ok(status === 200 || status === 201, JSON.stringify(body));
      return body;
    };
    const channel = await ok(api('POST', '/integrations', { identifier: 'webhook', credentials: { url: 'http://127.0.0.1:9/hook/csrf' } }));
    ids.integrations = ids['integration-trigger'] = channel.id;
    const [post] = await ok(
      api('POST', '/posts', {
        type: 'draft',
        date: FUTURE,
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channel.id }, value: [{ content: 'kept' }] }],
      }),
    );
    ids.posts = post.postId;
    ids.group = (await ok(api('GET', `/posts/${post.postId}`))).group;
    ids.comments = (await ok(api('POST', `/posts/${post.postId}/comments`, { content: 'a comment' }))).id;
    ids['preview-links'] = (await ok(api('POST', `/posts/${post.postId}/preview-links`, {}))).id;
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(PNG_1x1)]), 'pixel.png');
    ids.media = (await ok(api('POST', '/upload', form))).id;
    ids.webhooks = (await ok(api('POST', '/webhooks', { url: 'http://127.0.0.1:9/events', events: ['post.published'] }))).id;
    ids.keys = (await created(owner.app('POST', '/keys', { name: 'kept' }))).id;
    ids.customers = (await created(owner.app('POST', '/customers', { name: 'kept' }))).id;
    ids.apps = (await created(owner.app('POST', '/oauth/apps', { name: 'kept', redirectUris: ['https://app.example.com/back'] }))).clientId;
    ids.templates = (await created(owner.app('POST', '/templates', { kind: 'template', name: 'kept', content: 'kept' }))).id;

    routes = registeredRoutes(herald.server, PREFIX).filter((r) => STATE_CHANGING.has(r.split(' ')[0]));
  });
  after(() => herald.close());

  async function created(answer: Promise<WebAnswer>): Promise<any> {
    const { status, body } = await answer;
    assert.equal(status, 201, JSON.stringify(body));
    return body;
  }

  /** The route with its parameters filled in. */
  const pathOf = (route: string) =>
    route
      .split(' ')[1]
      .replace(PREFIX.slice(0, -1), '')
      .replace(/([^/]+)\/:\w+/g, (_, before: string) => `${before}/${ids[before] ?? 'no-such-id'}`);

  /** A call as the browser makes it, with the session cookie; `token` is the X-CSRF-Token header, if any. */
  function call(route: string, token: string | undefined): Promise<WebAnswer> {
    const method = route.split(' ')[0];
    const headers: Record<string, string> = token === undefined ? {} : { 'x-csrf-token': token };
    return owner.app(method, pathOf(route), method === 'DELETE' ? undefined : {}, { csrf: false, headers });
  }

  it('reads the route table: every state-changing route under /api/app, many of them', () => {
    assert.ok(routes.length >= 30, `only ${routes.length} state-changing routes read from the table:\n${routes.join('\n')}`);
    for (const known of ['POST /api/app/keys', 'PUT /api/app/posts/:id/date', 'DELETE /api/app/public/v1/posts/:id', ...OPEN_A_SESSION]) {
      assert.ok(routes.includes(known), `${known} is in the table read`);
    }
  });

  it('refuses each without the token, with another session’s and with a made-up one: 403 csrf_failed, nothing changed', async () => {
    const checked = routes.filter((r) => !OPEN_A_SESSION.includes(r));
    const before = await everything(herald);
    const wrong = member.csrf;
    assert.ok(wrong && owner.csrf && wrong !== owner.csrf, 'two sessions, two tokens');
    const problems: string[] = [];
    for (const route of checked) {
      for (const [how, token] of [
        ['without a token', undefined],
        ['with another session’s token', wrong],
        ['with a made-up token', 'x'.repeat(owner.csrf!.length)],
      ] as const) {
        const answer = await call(route, token);
        try {
          assertError(answer, 403, { code: 'csrf_failed', path: 'headers.x-csrf-token' });
        } catch (err) {
          problems.push(`${route} ${how}: answered ${answer.status} ${(err as Error).message.split('\n')[0]}`);
        }
      }
    }
    assert.deepEqual(
      { notRefused: problems, changedTables: changedTables(before, await everything(herald)) },
      { notRefused: [], changedTables: [] },
      'every state-changing route refuses a request without the session’s CSRF token, and changes nothing',
    );
  });

  it('does not refuse any with the session’s own token', async () => {
    // Signing out ends the session the others use: last.
    const checked = routes.filter((r) => !OPEN_A_SESSION.includes(r)).sort((a, b) => Number(a.endsWith('/auth/logout')) - Number(b.endsWith('/auth/logout')));
    const refused: string[] = [];
    for (const route of checked) {
      const answer = await call(route, owner.csrf);
      if (answer.status === 401 || answer.body?.code === 'csrf_failed') refused.push(`${route}: ${answer.status} ${answer.body?.code}`);
    }
    assert.deepEqual(refused, [], 'with the right token the session is accepted (the request may fail for its own reasons)');
  });
});
