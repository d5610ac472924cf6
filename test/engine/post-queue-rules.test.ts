/**
 * The post queue's own rules (src/domain/posts/post-queue.ts), each held by a test that
 * fails without it:
 *
 * - a change a person makes takes the post back from any worker: its version goes
 *   up and its lease is cleared, whichever transition makes it, so a worker that
 *   claimed the post before the change (and stalled past its lease) can no longer
 *   renew, hand back or send it;
 * - a failed thread item fails the items after it: the replies end in ERROR, never
 *   left waiting for a parent that will not be published, and never sent.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { addWebhookChannel, createPosts, entry, postBody, type Channel } from '../helpers/api-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import * as queue from '../../src/domain/posts/post-queue.ts';
import { claimDue } from '../../src/scheduler/claim.ts';
import { Engine } from '../../src/scheduler/engine.ts';
import type { PostRow } from '../../src/db/schema.ts';
import { teardown } from '../helpers/teardown.ts';

const HOUR = 3_600_000;
const LEASE_MS = 60_000;

/** Every export of post-queue.ts, by who calls it; a new one must be placed here (and, if a person's, given a case below). */
const PERSON_TRANSITIONS = ['changeGroup', 'decideApproval', 'deleteGroups', 'markPublishedByHand', 'requeueFailed', 'rewriteThread'];
const ENGINE_TRANSITIONS = [
  'beginAttempt',
  'complete',
  'confirmRelease',
  'failAfterPublish',
  'failWithThread',
  'followUp',
  'handBack',
  'renewLease',
  'scheduleReply',
  'settleAbandonedAttempt',
];
const NOT_TRANSITIONS = ['addThread', 'assertNotPublishing', 'dueOnChannel'];

/** The engine's handling of one item it claimed, as its work loop calls it: a worker resuming with what it holds. */
function resume(engine: Engine, item: PostRow): Promise<void> {
  return (engine as unknown as { handle(item: PostRow): Promise<void> }).handle(item);
}

interface Case {
  name: string;
  /** The post-queue.ts transition the change goes through. */
  transition: string;
  /** The post's state before the change, written over the worker's claim (default: queued, as claimed). */
  before?: Partial<Pick<PostRow, 'state' | 'error' | 'approval'>>;
  change(ctx: { herald: TestHerald; account: TestAccount; channel: Channel; post: PostRow }): Promise<{ status: number; body?: unknown }>;
  /** What the change leaves. */
  expect: Partial<Pick<PostRow, 'state' | 'approval'>> & { deleted?: boolean };
}

const CASES: Case[] = [
  {
    name: 'an edit (POST /posts type "update")',
    transition: 'rewriteThread',
    change: ({ account, channel, post }) =>
      account.callUntyped(
        'POST',
        '/posts',
        postBody('update', [entry(channel.id, [{ content: `${post.content} (edited)`, id: post.id }], { group: post.group_id })]),
      ),
    expect: { state: 'QUEUE' },
  },
  {
    name: 'a move to drafts (PUT /posts/:id/status)',
    transition: 'changeGroup',
    change: ({ account, post }) => account.callUntyped('PUT', `/posts/${post.id}/status`, { status: 'draft' }),
    expect: { state: 'DRAFT' },
  },
  {
    name: 'new settings (PUT /posts/:id/settings)',
    transition: 'changeGroup',
    change: ({ account, post }) => account.callUntyped('PUT', `/posts/${post.id}/settings`, { settings: { topic: 'changed' } }),
    expect: { state: 'QUEUE' },
  },
  {
    name: 'a move to another time (the calendar’s drag)',
    transition: 'changeGroup',
    change: async ({ herald, account, post }) => {
      await herald.services.posts.reschedule(account.id, post.id, Date.now() + HOUR);
      return { status: 200 };
    },
    expect: { state: 'QUEUE' },
  },
  {
    name: 'a deletion (DELETE /posts/:id)',
    transition: 'deleteGroups',
    change: ({ account, post }) => account.callUntyped('DELETE', `/posts/${post.id}`),
    expect: { deleted: true },
  },
  {
    name: 'the removal of its channel (DELETE /integrations/:id)',
    transition: 'deleteGroups',
    change: ({ account, channel }) => account.callUntyped('DELETE', `/integrations/${channel.id}`),
    expect: { deleted: true },
  },
  {
    name: 'a retry of the failed post (POST /posts/:id/retry)',
    transition: 'requeueFailed',
    before: { state: 'ERROR', error: 'The webhook receiver answered 400' },
    change: ({ account, post }) => account.callUntyped('POST', `/posts/${post.id}/retry`),
    expect: { state: 'QUEUE' },
  },
  {
    name: 'marking it published by hand (PUT /posts/:id/release-id)',
    transition: 'markPublishedByHand',
    change: ({ account, post }) => account.callUntyped('PUT', `/posts/${post.id}/release-id`, { releaseId: 'published-by-hand' }),
    expect: { state: 'PUBLISHED' },
  },
  {
    name: 'an approval (POST /posts/:id/approve)',
    transition: 'decideApproval',
    before: { state: 'DRAFT', approval: 'pending' },
    change: ({ account, post }) => account.callUntyped('POST', `/posts/${post.id}/approve`, {}),
    expect: { state: 'QUEUE', approval: 'approved' },
  },
  {
    name: 'a return to its author (POST /posts/:id/reject)',
    transition: 'decideApproval',
    before: { state: 'DRAFT', approval: 'pending' },
    change: ({ account, post }) => account.callUntyped('POST', `/posts/${post.id}/reject`, { comment: 'Not this week' }),
    expect: { state: 'DRAFT', approval: 'rejected' },
  },
];

describe('the transitions of post-queue.ts', () => {
  it('are each known here as a person’s or the engine’s, and every person’s transition has a case', () => {
    assert.deepEqual(
      Object.keys(queue).sort(),
      [...PERSON_TRANSITIONS, ...ENGINE_TRANSITIONS, ...NOT_TRANSITIONS].sort(),
      'a new export of post-queue.ts: say here whose transition it is',
    );
    assert.deepEqual([...new Set(CASES.map((c) => c.transition))].sort(), PERSON_TRANSITIONS, 'each person’s transition is tried below');
  });
});

for (const store of await testStores()) {
  describe(`a person’s change takes the post back from a worker (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    /** A worker whose claims outlive their lease (stalled, its process paused): it resumes with what it claimed. */
    let stalled: Engine;
    let claims = 0;

    before(async () => {
      receiver = await startWebhookReceiver();
      // No engine of its own: the only worker is the stalled one, and it moves only when told.
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '100000' } });
      account = await herald.newAccount();
      stalled = new Engine(herald.services, { leaseMs: LEASE_MS });
    });
    after(() =>
      teardown(
        () => stalled.stop(),
        () => herald.close(),
        () => receiver.close(),
      ),
    );
    // Each case claims "every due post": what earlier cases left is moved out of the way.
    afterEach(async () => {
      await herald.services.store.db
        .updateTable('posts')
        .set({ deleted_at: Date.now() })
        .where('account_id', '=', account.id)
        .where('deleted_at', 'is', null)
        .execute();
    });

    const row = async (id: string) => herald.services.store.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const attemptsOf = async (id: string) => herald.services.store.db.selectFrom('post_attempts').select('outcome').where('post_id', '=', id).execute();

    /** A post due now, claimed by the stalled worker (the engine's own claim statement), in the state the case starts from. */
    async function claimedPost(c: Case, tag: string): Promise<{ channel: Channel; post: PostRow }> {
      const channel = await addWebhookChannel(account, {}, `${receiver.url}?${tag}`);
      const [created] = await createPosts(account, postBody('now', [entry(channel.id, [`${tag}: as claimed`])]));
      const claimed = await claimDue(herald.services.store, `stalled-worker#${++claims}`, 10, LEASE_MS);
      assert.deepEqual(
        claimed.map((p) => p.id),
        [created.postId],
        'the worker claimed this post',
      );
      const [post] = claimed;
      if (c.before) await herald.services.store.db.updateTable('posts').set(c.before).where('id', '=', post.id).execute();
      return { channel, post };
    }

    /** The change, then its mark on the post: one version more, no lease, the state it leads to. */
    async function change(c: Case, channel: Channel, post: PostRow): Promise<PostRow> {
      const answer = await c.change({ herald, account, channel, post });
      assert.ok(answer.status >= 200 && answer.status < 300, `${c.name} was refused: ${answer.status} ${JSON.stringify(answer.body)}`);
      const changed = await row(post.id);
      assert.equal(changed.version, post.version + 1, `${c.name} must raise the post's version (${c.transition})`);
      assert.deepEqual(
        { lease_owner: changed.lease_owner, lease_until: changed.lease_until },
        { lease_owner: null, lease_until: null },
        `${c.name} must clear the worker's lease (${c.transition})`,
      );
      if (c.expect.state) assert.equal(changed.state, c.expect.state);
      if (c.expect.approval) assert.equal(changed.approval, c.expect.approval);
      assert.equal(changed.deleted_at !== null, c.expect.deleted === true);
      return changed;
    }

    for (const c of CASES) {
      it(`${c.name}, after the worker's lease ran out: the worker can no longer renew, hand back or send it`, async () => {
        const tag = `expired-${c.transition}-${CASES.indexOf(c)}`;
        const { channel, post } = await claimedPost(c, tag);
        // The worker stalls past its lease: a person may change the post now (a live lease would answer 409).
        await herald.services.store.db
          .updateTable('posts')
          .set({ lease_until: Date.now() - 1 })
          .where('id', '=', post.id)
          .execute();
        const changed = await change(c, channel, post);

        // The worker resumes with the post as it claimed it.
        await queue.renewLease(herald.services.store.db, post, LEASE_MS);
        await queue.handBack(herald.services.store.db, post, Date.now() + HOUR, { error: 'tried later' });
        assert.deepEqual(await row(post.id), changed, 'the stalled worker’s renewal and hand-back do not apply');
        await resume(stalled, post);
        assert.deepEqual(
          receiver.deliveries.filter((d) => d.path.endsWith(`?${tag}`)),
          [],
          'the stalled worker sends nothing',
        );
        assert.deepEqual(await attemptsOf(post.id), [], 'no attempt is begun');
        assert.deepEqual(await row(post.id), changed, 'the post stays as the change left it');
        const told = await herald.services.store.db
          .selectFrom('notifications')
          .select('content')
          .where('link', 'like', `%/posts/${post.id}`)
          .where('content', 'like', '%could not be published%')
          .execute();
        assert.deepEqual(told, [], 'nobody is told of a failure');
      });

      it(`${c.name}, after the worker handed it back for later: the later time goes with the lease`, async () => {
        const { channel, post } = await claimedPost(c, `handed-back-${c.transition}-${CASES.indexOf(c)}`);
        // A temporary failure: the engine gives the post back, to be claimed again in an hour.
        await queue.handBack(herald.services.store.db, post, Date.now() + HOUR, { error: 'The webhook receiver answered 503' });
        const handedBack = await row(post.id);
        assert.equal(handedBack.lease_owner, null);
        assert.ok(handedBack.lease_until !== null && handedBack.lease_until > Date.now(), 'handed back until later');
        await change(c, channel, { ...post, version: handedBack.version });
      });
    }
  });

  describe(`a failed thread item fails the items after it (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;

    before(async () => {
      receiver = await startWebhookReceiver();
      // The receiver refuses (400: not retried) every item whose content says so.
      receiver.respond((delivery) => (/refuse me/.test(delivery.json?.post?.content ?? '') ? { status: 400, body: { error: 'refused' } } : undefined));
      herald = await startHerald(store, { engine: { pollMs: 100 }, env: { HERALD_POSTS_PER_HOUR: '100000' } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    /** The thread's items in order, read from the store. */
    async function items(group: string) {
      const rows = await sql<Pick<PostRow, 'id' | 'thread_index' | 'state' | 'error' | 'lease_owner'>>`
        SELECT id, thread_index, state, error, lease_owner FROM posts WHERE group_id = ${group} ORDER BY thread_index`.execute(herald.services.store.db);
      return rows.rows;
    }

    for (const failing of [0, 1]) {
      it(`item ${failing + 1} of 4 refused: the items after it end in ERROR naming it, and are never sent`, async () => {
        const tag = `thread-${failing}`;
        const channel = await addWebhookChannel(account, {}, `${receiver.url}?${tag}`);
        const texts = [0, 1, 2, 3].map((i) => `${tag} item ${i + 1}${i === failing ? ' refuse me' : ''}`);
        const [created] = await createPosts(
          account,
          postBody('now', [
            entry(
              channel.id,
              texts.map((content, i) => (i === 0 ? content : { content, delay: 0 })),
            ),
          ]),
        );
        const group = (await herald.services.posts.root(account.id, created.postId)).group_id;
        // The refused item's failure and the later items' are one transaction: once it reads ERROR, so must they.
        await eventually(async () => ((await items(group))[failing].state === 'ERROR' ? true : undefined), 20_000, `item ${failing + 1} to fail`);
        const thread = await items(group);
        assert.match(thread[failing].error ?? '', /The webhook receiver answered 400/);
        for (const earlier of thread.slice(0, failing)) assert.equal(earlier.state, 'PUBLISHED');
        for (const later of thread.slice(failing + 1)) {
          assert.deepEqual(
            { item: later.thread_index + 1, state: later.state, error: later.error },
            { item: later.thread_index + 1, state: 'ERROR', error: `Not published because item ${failing + 1} of the thread failed.` },
            'a reply after the failed item ends in ERROR, not waiting for a parent that will never be published',
          );
        }
        const sent = receiver.deliveries.filter((d) => d.path.endsWith(`?${tag}`)).map((d) => d.json.post.threadIndex);
        assert.deepEqual(sent, [...Array(failing + 1).keys()], 'nothing after the failed item was sent');
        // The post as the API shows it: failed, with the reason of each item.
        const post = (await account.callUntyped('GET', `/posts/${created.postId}`)).body;
        assert.deepEqual(
          post.thread.map((t: { state: string }) => t.state),
          thread.map((t) => t.state),
        );
      });
    }
  });
}
