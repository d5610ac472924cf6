import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAnswer, type Verdict } from '../../src/providers/adapter-kit/http-failures.ts';
import type { PublishError } from '../../src/providers/errors.ts';

/** A network's answer with `status`, a JSON `body` and the given headers. */
function answer(status: number, body: unknown = {}, headers: Record<string, string> = {}) {
  return { status, headers: new Headers(headers), body, detail: typeof body === 'string' ? body : JSON.stringify(body) };
}

function classify(status: number, options: { body?: unknown; headers?: Record<string, string>; verdict?: Verdict; repeatable?: boolean } = {}) {
  return classifyAnswer('Net', answer(status, options.body, options.headers), options.verdict ?? {}, options.repeatable ?? false);
}

/** What the engine acts on: the class, the wait before a retry and the network's code. */
function outcome(error: PublishError) {
  return { kind: error.kind, retryAfterMs: error.retryAfterMs, code: error.code };
}

describe('classifyAnswer: what a failed answer means for the post', () => {
  describe('by status alone', () => {
    it('a 401 is an authorisation failure: the channel needs reconnecting', () => {
      assert.deepEqual(outcome(classify(401, { headers: { 'retry-after': '5' } })), { kind: 'auth', retryAfterMs: undefined, code: undefined });
    });

    it('a 429 or a 408 is retried, after the Retry-After the network asks for', () => {
      assert.deepEqual(outcome(classify(429, { headers: { 'retry-after': '30' } })), { kind: 'retryable', retryAfterMs: 30_000, code: undefined });
      assert.equal(classify(408).kind, 'retryable');
      assert.equal(classify(408).retryAfterMs, undefined, 'no header, no wait');
      const at = new Date(Date.now() + 3_600_000).toUTCString();
      const wait = classify(429, { headers: { 'retry-after': at } }).retryAfterMs!;
      assert.ok(wait > 3_500_000 && wait <= 3_600_000, `an HTTP date an hour ahead waits about an hour (${wait} ms)`);
    });

    it('any other 4xx is a refusal, never retried whatever the headers say', () => {
      for (const status of [400, 403, 404, 413, 422]) {
        assert.deepEqual(
          outcome(classify(status, { headers: { 'retry-after': '30' } })),
          { kind: 'refused', retryAfterMs: undefined, code: undefined },
          `${status}`,
        );
      }
    });
  });

  describe('a server error (5xx): the request had reached the network', () => {
    it('is retried after a request that is safe to repeat, with the wait asked for', () => {
      for (const status of [500, 502, 503, 504]) {
        assert.deepEqual(outcome(classify(status, { headers: { 'retry-after': '7' }, repeatable: true })), {
          kind: 'retryable',
          retryAfterMs: 7000,
          code: undefined,
        });
      }
    });

    it('is unknown after any other request, since the network may have published the post', () => {
      const error = classify(503, { body: { message: 'overloaded' }, headers: { 'retry-after': '7' } });
      assert.deepEqual(outcome(error), { kind: 'unknown', retryAfterMs: undefined, code: undefined });
      assert.equal(
        error.message,
        'Net answered 503: overloaded. The request had reached Net, so it may have been published. Check the channel before retrying.',
      );
    });

    it("stays a server error when the network's reading calls it retryable or refused", () => {
      for (const kind of ['retryable', 'refused'] as const) {
        assert.equal(classify(500, { verdict: { kind } }).kind, 'unknown', `${kind}, not repeatable`);
        assert.equal(classify(500, { verdict: { kind }, repeatable: true }).kind, 'retryable', `${kind}, repeatable`);
      }
    });

    it('keeps an authorisation failure the network reads in a 5xx', () => {
      assert.equal(classify(500, { verdict: { kind: 'auth' } }).kind, 'auth');
    });
  });

  describe("the network's own reading", () => {
    it('decides the class of a 4xx: a rate limit in a 400, an expired token in a 403', () => {
      assert.deepEqual(outcome(classify(400, { verdict: { kind: 'retryable', retryAfterMs: 60_000, code: 88 } })), {
        kind: 'retryable',
        retryAfterMs: 60_000,
        code: 88,
      });
      assert.equal(classify(403, { verdict: { kind: 'auth' } }).kind, 'auth');
    });

    it('turns a failure inside a 2xx body into an error, written without the status', () => {
      const error = classify(200, { body: { ok: false, error: 'channel_not_found' }, verdict: { kind: 'refused', code: 'channel_not_found' } });
      assert.deepEqual(outcome(error), { kind: 'refused', retryAfterMs: undefined, code: 'channel_not_found' });
      assert.equal(error.message, 'Net: channel_not_found');
    });

    it('reads a server failure inside a 2xx body as the 5xx it stands for', () => {
      assert.equal(classify(200, { verdict: { kind: 'server' } }).kind, 'unknown');
      assert.equal(classify(200, { verdict: { kind: 'server' }, repeatable: true }).kind, 'retryable');
    });
  });

  describe('the message', () => {
    it("prefers the network's own words, then the body's error fields, then the raw body", () => {
      assert.equal(
        classify(400, { body: { message: 'from the body' }, verdict: { detail: 'from the reading' } }).message,
        'Net answered 400: from the reading',
      );
      assert.equal(classify(400, { body: { error: { message: 'nested' } } }).message, 'Net answered 400: nested');
      assert.equal(classify(400, { body: 'plain text' }).message, 'Net answered 400: plain text');
    });

    it('says only the status when the answer says nothing, and cuts a long one at 500 characters', () => {
      assert.equal(classifyAnswer('Net', { status: 404, headers: new Headers(), body: '', detail: '' }, {}, false).message, 'Net answered 404');
      assert.equal(classify(400, { body: 'y'.repeat(600) }).message, `Net answered 400: ${'y'.repeat(500)}`);
    });
  });
});
