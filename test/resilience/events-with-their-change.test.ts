/**
 * An account event is written in the same transaction as the change it
 * describes (README, "How posts go out"): when either write fails, neither is
 * kept. The store is made to refuse one of the two writes (a trigger that
 * raises) and the test looks at what was committed: never a change without its
 * event, nor an event without its change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import { eventually, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { type StoreKind, storeSuite, testStores } from '../helpers/stores.ts';
import { addWebhookChannel, type Channel, entry, postBody, schedulePost } from '../helpers/api-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { teardown } from '../helpers/teardown.ts';

const REFUSED = 'refused by the test';

/**
 * Makes the store refuse, until the returned function is called, inserts into
 * `table` (or updates of it) whose new row has `column` = `value`.
 */
async function refuse(
  db: Kysely<Database>,
  store: StoreKind,
  what: { table: 'webhook_deliveries' | 'posts'; on: 'INSERT' | 'UPDATE'; column: string; value: string },
): Promise<() => Promise<void>> {
  const name = `refuse_${what.table}_${what.on.toLowerCase()}`;
  if (store === 'sqlite') {
    await sql
      .raw(`CREATE TRIGGER ${name} BEFORE ${what.on} ON ${what.table} WHEN NEW.${what.column} = '${what.value}' BEGIN SELECT RAISE(ABORT, '${REFUSED}'); END`)
      .execute(db);
    return async () => void (await sql.raw(`DROP TRIGGER ${name}`).execute(db));
  }
  await sql
    .raw(
      `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.${what.column} = '${what.value}' THEN RAISE EXCEPTION '${REFUSED}'; END IF; RETURN NEW; END $$`,
    )
    .execute(db);
  await sql.raw(`CREATE TRIGGER ${name} BEFORE ${what.on} ON ${what.table} FOR EACH ROW EXECUTE FUNCTION ${name}()`).execute(db);
  return async () => {
    await sql.raw(`DROP TRIGGER ${name} ON ${what.table}`).execute(db);
    await sql.raw(`DROP FUNCTION ${name}()`).execute(db);
  };
}

/**
 * Records, in a table of the test's, every post whose PUBLISHED state was
 * committed (a rolled-back transaction leaves no row), even if it changed
 * again afterwards.
 */
async function watchPublishedCommits(db: Kysely<Database>, store: StoreKind): Promise<() => Promise<string[]>> {
  await sql.raw('CREATE TABLE test_published_commits (post_id TEXT NOT NULL)').execute(db);
  if (store === 'sqlite') {
    await sql
      .raw(
        `CREATE TRIGGER test_published_commits AFTER UPDATE ON posts WHEN NEW.state = 'PUBLISHED' AND OLD.state <> 'PUBLISHED'
         BEGIN INSERT INTO test_published_commits (post_id) VALUES (NEW.id); END`,
      )
      .execute(db);
  } else {
    await sql
      .raw(
        `CREATE FUNCTION test_published_commits() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN INSERT INTO test_published_commits (post_id) VALUES (NEW.id); RETURN NEW; END $$`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER test_published_commits AFTER UPDATE ON posts FOR EACH ROW
         WHEN (NEW.state = 'PUBLISHED' AND OLD.state <> 'PUBLISHED') EXECUTE FUNCTION test_published_commits()`,
      )
      .execute(db);
  }
  return async () => {
    const { rows } = await sql<{ post_id: string }>`SELECT post_id FROM test_published_commits`.execute(db);
    return rows.map((r) => r.post_id);
  };
}

for (const store of await testStores()) {
  describe(`an event and its change are kept together or not at all (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    let channel: Channel;
    let db: Kysely<Database>;
    let publishedCommits: () => Promise<string[]>;

    before(async () => {
      receiver = await startWebhookReceiver();
      // The refused writes are logged as errors on purpose; the test reads the outcome from the store.
      herald = await startHerald(store, { engine: true, env: { HERALD_LOG_LEVEL: 'fatal' } });
      db = herald.services.store.db;
      account = await herald.newAccount();
      channel = await addWebhookChannel(account, {}, receiver.url);
      // Events are written only for an account with a webhook that wants them (nothing sends them here).
      const hook = await account.callUntyped('POST', '/webhooks', {
        url: `${receiver.url}/account-events`,
        name: 'Every post event',
        events: ['post.created', 'post.updated', 'post.deleted', 'post.published', 'post.failed'],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      publishedCommits = await watchPublishedCommits(db, store);
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => receiver?.close(),
      ),
    );

    /** The account events recorded about a post, by type. */
    async function eventsOf(postId: string): Promise<string[]> {
      const rows = await db.selectFrom('webhook_deliveries').select(['event_type', 'payload']).where('account_id', '=', account.id).execute();
      return rows
        .filter((r) => JSON.parse(r.payload).data?.post?.id === postId)
        .map((r) => r.event_type)
        .sort();
    }

    async function post(id: string) {
      return db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirst();
    }

    it('post.created refused: the post is not created', async () => {
      const allow = await refuse(db, store, { table: 'webhook_deliveries', on: 'INSERT', column: 'event_type', value: 'post.created' });
      try {
        const answer = await account.callUntyped('POST', '/posts', postBody('schedule', [entry(channel.id, ['never stored'])]));
        assert.notEqual(answer.status, 201, 'the request fails with its event');
      } finally {
        await allow();
      }
      const stored = await db.selectFrom('posts').select('id').where('account_id', '=', account.id).where('content', '=', 'never stored').execute();
      assert.deepEqual(stored, [], 'no post was stored without its post.created');
    });

    it('post.updated refused: the post keeps its content and version', async () => {
      const id = await schedulePost(account, channel.id, 'kept words');
      const before = await post(id);
      const allow = await refuse(db, store, { table: 'webhook_deliveries', on: 'INSERT', column: 'event_type', value: 'post.updated' });
      try {
        const answer = await account.callUntyped('POST', '/posts', postBody('update', [entry(channel.id, ['changed words'], { group: before!.group_id })]));
        assert.notEqual(answer.status, 201, 'the request fails with its event');
      } finally {
        await allow();
      }
      const now = await post(id);
      assert.equal(now?.content, 'kept words', 'the update was rolled back with its post.updated');
      assert.equal(now?.version, before!.version);
      assert.deepEqual(await eventsOf(id), ['post.created']);
    });

    it('post.deleted refused: the post stays', async () => {
      const id = await schedulePost(account, channel.id, 'still here');
      const allow = await refuse(db, store, { table: 'webhook_deliveries', on: 'INSERT', column: 'event_type', value: 'post.deleted' });
      try {
        const answer = await account.callUntyped('DELETE', `/posts/${id}`);
        assert.notEqual(answer.status, 200, 'the request fails with its event');
      } finally {
        await allow();
      }
      assert.equal((await post(id))?.deleted_at, null, 'the deletion was rolled back with its post.deleted');
      assert.deepEqual(await eventsOf(id), ['post.created']);
    });

    /** Queues a post due now and waits until the engine has finished with it (it leaves QUEUE). */
    async function publishedByEngine(content: string): Promise<string> {
      const created = await account.callUntyped('POST', '/posts', postBody('now', [entry(channel.id, [content])]));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body[0].postId as string;
      await eventually(async () => ((await post(id))?.state !== 'QUEUE' ? true : undefined), 20_000, `the engine to finish with "${content}"`);
      return id;
    }

    it("post.published refused: the post's PUBLISHED state is never committed", async () => {
      const allow = await refuse(db, store, { table: 'webhook_deliveries', on: 'INSERT', column: 'event_type', value: 'post.published' });
      let id: string;
      try {
        id = await publishedByEngine('event refused');
      } finally {
        await allow();
      }
      assert.ok(
        receiver.deliveries.some((d) => d.body.includes('event refused')),
        'the network (the receiver) did get the post',
      );
      assert.deepEqual(
        (await publishedCommits()).filter((p) => p === id),
        [],
        'no PUBLISHED state was committed without its post.published event',
      );
      const now = await post(id);
      assert.equal(now?.state, 'ERROR', 'the engine says it may have been published');
      assert.equal(now?.release_id, null, 'the release was rolled back with the event');
      const attempts = await db.selectFrom('post_attempts').select('outcome').where('post_id', '=', id).execute();
      assert.deepEqual(
        attempts.map((a) => a.outcome).filter((o) => o === 'published'),
        [],
        'no attempt recorded as published',
      );
      assert.deepEqual(await eventsOf(id), ['post.created', 'post.failed'], 'every committed change has its event, and only those');
    });

    it('the PUBLISHED state refused: no post.published event is kept', async () => {
      const allow = await refuse(db, store, { table: 'posts', on: 'UPDATE', column: 'state', value: 'PUBLISHED' });
      let id: string;
      try {
        id = await publishedByEngine('change refused');
      } finally {
        await allow();
      }
      assert.equal((await post(id))?.state, 'ERROR');
      assert.deepEqual(await eventsOf(id), ['post.created', 'post.failed'], 'no post.published without the post being published');
    });

    it('and with nothing refused, the post is published with its event', async () => {
      const id = await publishedByEngine('nothing refused');
      assert.equal((await post(id))?.state, 'PUBLISHED');
      assert.deepEqual(
        (await publishedCommits()).filter((p) => p === id),
        [id],
      );
      assert.deepEqual(await eventsOf(id), ['post.created', 'post.published']);
    });
  });
}
