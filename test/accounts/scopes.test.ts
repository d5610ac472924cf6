/**
 * The scope table (src/api/scopes.ts) covers every documented public endpoint,
 * so a scoped key is never refused an endpoint by oversight, and never let
 * through one it should not reach. The table does not depend on the store, so
 * this runs on SQLite only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { requiredScope } from '../../src/api/scopes.ts';
import { isScope } from '../../src/domain/scopes.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';

describe('scopes of the public API', () => {
  let herald: TestHerald;
  before(async () => {
    herald = await startHerald('sqlite');
  });
  after(async () => herald?.close());

  it('every documented public endpoint needs a known scope (or none, for the credential check)', async () => {
    const doc = (await (await fetch(`${herald.url}/api/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths).flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => [m.toUpperCase(), p.replace(/\{(\w+)\}/g, ':$1')] as const),
    );
    const publicRoutes = routes.filter(([, p]) => p.startsWith('/api/public/v1/'));
    assert.ok(publicRoutes.length >= 20, `found only ${publicRoutes.length} public routes`);
    const unmapped = publicRoutes.filter(([m, p]) => {
      const need = requiredScope(m, p);
      return need === undefined || (need !== 'any' && !isScope(need));
    });
    assert.deepEqual(unmapped, [], 'add these routes to RESOURCES in src/api/scopes.ts');
  });

  it('reading and writing a resource need different scopes', () => {
    assert.equal(requiredScope('GET', '/api/public/v1/posts'), 'posts:read');
    assert.equal(requiredScope('POST', '/api/public/v1/posts'), 'posts:write');
    assert.equal(requiredScope('DELETE', '/api/public/v1/posts/:id'), 'posts:write');
    assert.equal(requiredScope('POST', '/api/public/v1/upload'), 'media:write');
    assert.equal(requiredScope('GET', '/api/public/v1/integrations'), 'channels:read');
    assert.equal(requiredScope('GET', '/api/public/v1/social/:provider'), 'channels:write');
    assert.equal(requiredScope('GET', '/api/public/v1/is-connected'), 'any');
    assert.equal(requiredScope('GET', '/api/public/v1/something-new'), undefined);
  });
});
