/**
 * The route table of src/contract is the list of routes: each entry is served
 * at its table's prefix, and every route the server has under the prefixes the
 * tables cover comes from an entry (src/api/serve.ts), so none can exist
 * without one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROUTE_TABLES } from '../../src/contract/routes/index.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { registeredRoutes } from '../helpers/routes.ts';

/** Where only table routes may be: the public API (both copies), the web application's API, the OAuth server and pages, the preview links. */
const COVERED = ['/api/public/v1/', '/api/app/', '/api/oauth/', '/oauth/', '/api/preview/', '/p/'];

describe('route table', () => {
  let herald: TestHerald;
  before(async () => {
    herald = await startHerald('sqlite');
  });
  after(() => herald.close());

  it('serves every entry, and nothing under the covered prefixes besides', () => {
    const entries = ROUTE_TABLES.flatMap((table) => Object.values(table.routes).map((r) => `${r.method} ${table.prefix}${r.path}`)).sort();
    assert.equal(new Set(entries).size, entries.length, 'no route is declared twice');
    for (const read of ['GET /api/app/session', 'POST /api/oauth/token', 'GET /api/public/v1/posts', 'GET /api/app/public/v1/posts'])
      assert.ok(entries.includes(read), `the tables were read (${read})`);
    const served = registeredRoutes(herald.server, '/');
    for (const entry of entries) assert.ok(served.includes(entry), `${entry} is served`);
    const undeclared = served.filter((r) => {
      const path = r.slice(r.indexOf(' ') + 1);
      return COVERED.some((prefix) => path.startsWith(prefix)) && !entries.includes(r);
    });
    assert.deepEqual(undeclared, [], 'routes served without an entry in the table');
  });
});
