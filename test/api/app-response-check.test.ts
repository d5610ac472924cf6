/**
 * The tests hold the web application's own routes (/api/app) to the answers
 * their entries declare, as they hold the public ones: an answer off its
 * schema, a success or an error, fails the test that got it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { WebClient } from '../accounts/web-client.ts';
import { appRoutes } from '../../src/contract/routes/app.ts';
import { publicRoutes } from '../../src/contract/routes/public.ts';
import { checkResponsesAgainstSchemas } from '../../src/api/response-check.ts';
import { serve } from '../../src/api/serve.ts';
import { startHerald } from '../helpers/herald.ts';
import { teardown } from '../helpers/teardown.ts';

const { routes } = appRoutes;

describe('the response check on /api/app', () => {
  it('fails the Herald of a test whose /api/app route answered off its schema', async () => {
    const herald = await startHerald('sqlite');
    let closed = false;
    try {
      const owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com');
      // A template without its content: what a broken handler would send.
      herald.services.templates.list = async () => [{ id: 'template-1', name: 'Signature' }] as never;
      const listed = await owner.app('GET', '/templates');
      assert.equal(listed.status, 200);
      closed = true;
      await assert.rejects(herald.close(), /GET \/api\/app\/templates answered 200 off its schema/);
    } finally {
      if (!closed) await teardown(() => herald.close());
    }
  });

  it('declares the contract error body on every /api/app route that answers JSON, as on the public ones', () => {
    for (const [name, entry] of Object.entries(routes)) {
      const declared = Object.keys(entry.responses);
      if (declared.length === 0) continue; // a stream (the live events): nothing to check
      for (const status of ['400', '401', '403', '404', '409', '429', '503']) assert.ok(declared.includes(status), `${name} declares ${status}`);
    }
    // The same schema object as the public routes' errors: one error body.
    assert.equal((routes.templates.responses as Record<number, unknown>)[404], (publicRoutes.routes.integrations.responses as Record<number, unknown>)[400]);
  });

  it('reports an /api/app error answer that is not the contract error body', async () => {
    const problems: string[] = [];
    const app = Fastify({ logger: false });
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(() => (data) => JSON.stringify(data));
    checkResponsesAgainstSchemas(app, (problem) => problems.push(problem));
    await app.register(
      async (scope) => {
        serve(scope, routes.deleteTemplate, { handler: async (_request, reply) => reply.code(404).send({ message: 'gone' } as never) });
      },
      { prefix: '/api/app' },
    );
    const answer = await app.inject({ method: 'DELETE', url: '/api/app/templates/t-1' });
    await app.close();
    assert.equal(answer.statusCode, 404);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0], /DELETE \/api\/app\/templates\/:id answered 404 off its schema/);
  });
});
