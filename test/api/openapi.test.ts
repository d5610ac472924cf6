import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { ERROR_CODES } from '../../src/domain/error-codes.ts';
import { registeredRoutes } from '../helpers/routes.ts';

const PREFIX = '/api/public/v1';

describe('OpenAPI document and docs UI', () => {
  let herald: TestHerald;
  let doc: any;

  before(async () => {
    herald = await startHerald('sqlite');
    const response = await fetch(`${herald.url}/api/docs/json`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    doc = await response.json();
  });
  after(() => herald.close());

  it('is an OpenAPI 3 document, served without an API key', () => {
    assert.match(doc.openapi, /^3\./);
    assert.equal(typeof doc.info.title, 'string');
    // Relative first: "Try it out" works on whatever host the page was opened on.
    assert.deepEqual(
      doc.servers.map((s: { url: string }) => s.url),
      ['/', herald.url],
    );
    assert.ok(!/<[^>]*>/.test(doc.info.description), 'no angle brackets for the docs page to swallow');
    assert.match(doc.info.description, /Authorization: YOUR_API_KEY/);
    assert.deepEqual(doc.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'Authorization' });
  });

  it('lists every public route the server serves, and nothing else', () => {
    const served = registeredRoutes(herald.server, PREFIX)
      .map((r) => r.replace(/:(\w+)/g, '{$1}'))
      .sort();
    assert.ok(served.includes('POST /api/public/v1/posts') && served.includes('GET /api/public/v1/posts/{id}'), 'the route table was read');
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    assert.deepEqual(documented, served);
  });

  it('documents the routes the contract names', () => {
    const contract = [
      'GET /integrations',
      'GET /find-slot/{id}',
      'POST /upload',
      'POST /upload-from-url',
      'GET /posts',
      'POST /posts',
      'DELETE /posts/{id}',
      'GET /is-connected',
      'GET /groups',
      'DELETE /posts/group/{group}',
      'PUT /posts/{id}/status',
      'PUT /posts/{id}/settings',
      'PUT /posts/{id}/release-id',
      'GET /posts/{id}/missing',
      'GET /integration-settings/{id}',
      'POST /integration-trigger/{id}',
      'GET /notifications',
      'GET /social/{provider}',
      'DELETE /integrations/{id}',
      'GET /analytics/{id}',
      'GET /analytics/post/{id}',
      'GET /posts/{id}',
    ];
    for (const route of contract) {
      const [method, path] = route.split(' ');
      assert.ok(doc.paths[PREFIX + path]?.[method.toLowerCase()], `${route} is documented`);
    }
  });

  it('documents on every route the errors any request can meet, and what each error code means', () => {
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      if (!path.startsWith(PREFIX)) continue;
      for (const [method, operation] of Object.entries(operations)) {
        for (const status of ['400', '401', '403', '429', '503']) {
          assert.ok(operation.responses[status], `${method.toUpperCase()} ${path} documents ${status}`);
        }
      }
    }
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      assert.ok(doc.info.description.includes(`| \`${code}\` | ${status} |`), `the description lists ${code}`);
    }
  });

  it('generates request schemas from the zod schemas', () => {
    const create = doc.paths[`${PREFIX}/posts`].post;
    const body = create.requestBody.content['application/json'].schema;
    assert.deepEqual(body.properties.type.enum, ['draft', 'schedule', 'now', 'update']);
    assert.deepEqual([...body.required].sort(), ['posts', 'type']);
    assert.equal(body.properties.shortLink.type, 'boolean');
    const entry = body.properties.posts.items;
    assert.equal(body.properties.posts.minItems, 1);
    assert.ok(
      entry.required.includes('integration') && entry.required.includes('value'),
      "entry.required.includes('integration') && entry.required.includes('value')",
    );
    assert.ok(create.responses['201'] && create.responses['400'] && create.responses['429'], 'answers are documented');

    const list = doc.paths[`${PREFIX}/posts`].get.parameters;
    const query = Object.fromEntries(list.filter((p: any) => p.in === 'query').map((p: any) => [p.name, p.required]));
    assert.deepEqual(query, { startDate: true, endDate: true, customer: false });

    const fromUrl = doc.paths[`${PREFIX}/upload-from-url`].post.requestBody.content['application/json'].schema;
    assert.deepEqual(fromUrl.required, ['url']);
    const idParam = doc.paths[`${PREFIX}/posts/{id}`].get.parameters.find((p: any) => p.in === 'path');
    assert.equal(idParam.name, 'id');
  });

  it('serves the HTML docs UI at /api/docs', async () => {
    const response = await fetch(`${herald.url}/api/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
    const html = await response.text();
    assert.match(html, /swagger/i);
    const script = await fetch(`${herald.url}/api/docs/static/swagger-initializer.js`);
    assert.equal(script.status, 200);
    assert.match(await script.text(), /json/, 'the UI loads the JSON document');
  });
});
