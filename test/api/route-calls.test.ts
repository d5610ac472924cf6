/**
 * A call named by its method and path finds its entry in the route table at
 * compile time (src/contract/calls.ts): the web application's api() and the
 * tests' caller rest on it. The checks below are read by `tsc -p .`; each
 * @ts-expect-error is a call the table must refuse, so a lookup that let it
 * through fails the type check. The run only confirms the names it reaches.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AnswerFor, BodyArgument, PathsOf, Prefixed, RouteNameFor } from '../../src/contract/calls.ts';
import type { Method } from '../../src/contract/route.ts';
import type { appRoutes, publicRoutes } from '../../src/contract/routes/index.ts';

type Session = typeof appRoutes.routes & Prefixed<typeof publicRoutes.routes, '/public/v1'>;

/** The web application's signature, without its fetch. */
type Call = <M extends Method, P extends PathsOf<Session, M>>(method: M, path: P, ...body: BodyArgument<Session, M, P>) => AnswerFor<Session, M, P>;

/** Type checks only: never run. */
function typeChecks(call: Call, id: string) {
  // The answer comes from the entry, per segment of the path.
  const reschedule: { id: string; publishDate: string } = call('PUT', `/posts/${id}/date`, { date: '2030-01-01T00:00:00Z' });
  const state: 'QUEUE' | 'PUBLISHED' | 'ERROR' | 'DRAFT' = call('GET', `/public/v1/posts/${id}`).state;
  const page: number = call('GET', `/public/v1/media?page=${1}`).page;
  // @ts-expect-error the body of PUT /posts/:id/date has no `when`
  call('PUT', `/posts/${id}/date`, { when: 'soon' });
  // @ts-expect-error PUT /posts/:id/date takes a body
  call('PUT', `/posts/${id}/date`);
  // @ts-expect-error DELETE /posts/:id takes none
  call('DELETE', `/public/v1/posts/${id}`, {});
  // @ts-expect-error no route is PATCH /session
  call('PATCH', '/session', {});
  // @ts-expect-error '/posts/:id/date' has three segments, not four ('${string}' must not span a slash)
  call('PUT', `/posts/${id}/x/date`, { date: '2030-01-01T00:00:00Z' });
  // @ts-expect-error a role is admin or member
  call('PATCH', `/people/${id}`, { role: 'owner' });
  // @ts-expect-error /session takes no query string
  call('GET', '/session?x=1');
  return [reschedule, state, page];
}

describe('calls typed from the route table', () => {
  it('reaches an entry by method and path, a literal segment before a parameter', () => {
    const names: [RouteNameFor<Session, 'GET', '/public/v1/posts/export'>, RouteNameFor<Session, 'GET', `/public/v1/posts/${string}`>] = [
      '/public/v1 exportPosts',
      '/public/v1 post',
    ];
    assert.deepEqual(names, ['/public/v1 exportPosts', '/public/v1 post']);
    assert.equal(typeof typeChecks, 'function');
  });
});
