/**
 * API keys, channel lists, webhook endpoints and post lists are kept in memory
 * between requests (src/db/read-cache.ts). Two servers on one store stand for two
 * processes: what one changes, the other must stop serving from memory. On
 * SQLite that holds at once; on PostgreSQL once the change's NOTIFY arrives.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { untypedCaller, eventually, startHerald, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { CHANGES_CHANNEL, tables, WATCHED_TABLES } from '../../src/db/changes.ts';
import { entry, FUTURE, postBody } from '../helpers/api-fixtures.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`in-memory reads follow changes made by another process (${store})`, storeSuite(store), () => {
    let first: TestHerald;
    let second: TestHerald;
    let accountId: string;

    before(async () => {
      first = await startHerald(store);
      second = await startHerald(store, store === 'postgres' ? { databaseUrl: first.services.config.databaseUrl } : { dataDir: first.dataDir });
      accountId = await first.services.accounts.create('Cached');
    });
    after(() =>
      teardown(
        () => second?.close(),
        () => first?.close(),
      ),
    );

    /** On SQLite the other server must answer the new state at once; on PostgreSQL within 2 s. */
    async function seenOnSecond<T>(read: () => Promise<T>, expected: (value: T) => boolean, what: string): Promise<T> {
      if (store === 'sqlite') {
        const value = await read();
        assert.ok(expected(value), `${what}: got ${JSON.stringify(value)}`);
        return value;
      }
      return eventually(
        async () => {
          const value = await read();
          return expected(value) ? value : undefined;
        },
        2000,
        what,
      );
    }

    it('a key revoked through one server is refused by the other', async () => {
      const { key, summary } = await first.services.accounts.createKey(accountId, 'revoked soon');
      const onSecond = untypedCaller(second.api, key);
      // Twice, so the second answer comes from memory.
      assert.equal((await onSecond('GET', '/integrations')).status, 200);
      assert.equal((await onSecond('GET', '/integrations')).status, 200);

      await first.services.accounts.revokeKey(accountId, summary.id);
      const refused = await seenOnSecond(
        () => onSecond('GET', '/integrations'),
        (r) => r.status === 401,
        'the revoked key refused',
      );
      assert.equal(refused.body.code, 'invalid_api_key');
    });

    it('a rotated key: the old value is refused and the new one accepted by the other server', async () => {
      const { key, summary } = await first.services.accounts.createKey(accountId, 'rotated');
      assert.equal((await untypedCaller(second.api, key)('GET', '/is-connected')).status, 200);
      const rotated = await first.services.accounts.rotateKey(accountId, summary.id);
      await seenOnSecond(
        () => untypedCaller(second.api, key)('GET', '/is-connected'),
        (r) => r.status === 401,
        'the old value refused',
      );
      assert.equal((await untypedCaller(second.api, rotated.key)('GET', '/is-connected')).status, 200);
    });

    it('channels added, renamed, disabled and removed through one server show in the other', async () => {
      const { key } = await first.services.accounts.createKey(accountId, 'channels');
      const onFirst = untypedCaller(first.api, key);
      const onSecond = untypedCaller(second.api, key);
      const names = async () =>
        ((await onSecond('GET', '/integrations')).body as { name: string; disabled: boolean }[]).map((c) => `${c.name}${c.disabled ? ' (off)' : ''}`);
      assert.deepEqual(await names(), []);

      const added = await onFirst('POST', '/integrations', { identifier: 'webhook', name: 'Hook', credentials: { url: 'https://hooks.example.com/a' } });
      assert.equal(added.status, 201);
      await seenOnSecond(names, (list) => list.join() === 'Hook', 'the new channel listed');

      assert.equal((await onFirst('PATCH', `/integrations/${added.body.id}`, { name: 'Renamed', disabled: true })).status, 200);
      await seenOnSecond(names, (list) => list.join() === 'Renamed (off)', 'the new name and state listed');

      assert.equal((await onFirst('DELETE', `/integrations/${added.body.id}`)).status, 200);
      await seenOnSecond(names, (list) => list.length === 0, 'the removed channel gone');
    });

    it('post lists follow posts created, changed by the publisher, updated and deleted, and channel renames, through the other server', async () => {
      const { key } = await first.services.accounts.createKey(accountId, 'posts');
      const onFirst = untypedCaller(first.api, key);
      const onSecond = untypedCaller(second.api, key);
      const channel = await onFirst('POST', '/integrations', {
        identifier: 'webhook',
        name: 'Posts hook',
        credentials: { url: 'https://hooks.example.com/posts' },
      });
      const listed = async () => {
        const answer = await onSecond(
          'GET',
          `/posts?startDate=${encodeURIComponent('2031-01-01T00:00:00.000Z')}&endDate=${encodeURIComponent('2031-12-31T00:00:00.000Z')}`,
        );
        assert.equal(answer.status, 200);
        return (answer.body.posts as { id: string; content: string; state: string; error: string | null; integration: { name: string } }[]).map(
          (p) => `${p.content}|${p.state}|${p.error ?? ''}|${p.integration.name}`,
        );
      };
      // Twice, so the second answer comes from memory.
      assert.deepEqual(await listed(), []);
      assert.deepEqual(await listed(), []);

      const created = await onFirst('POST', '/posts', postBody('schedule', [entry(channel.body.id, ['First'])]));
      assert.equal(created.status, 201);
      const postId = created.body[0].postId as string;
      await seenOnSecond(listed, (l) => l.join() === 'First|QUEUE||Posts hook', 'the new post listed');

      // As the publishing engine leaves a post that failed.
      await first.services.store.db.updateTable('posts').set({ state: 'ERROR', error: 'refused by the network' }).where('id', '=', postId).execute();
      await seenOnSecond(listed, (l) => l.join() === 'First|ERROR|refused by the network|Posts hook', 'the new state listed');

      const group = (await onFirst('GET', `/posts/${postId}`)).body.group as string;
      assert.equal((await onFirst('POST', '/posts', postBody('update', [entry(channel.body.id, ['Second'], { group })], { date: FUTURE }))).status, 201);
      await seenOnSecond(listed, (l) => l.length === 1 && l[0]!.startsWith('Second|QUEUE'), 'the updated post listed');

      assert.equal((await onFirst('PATCH', `/integrations/${channel.body.id}`, { name: 'Renamed hook' })).status, 200);
      await seenOnSecond(listed, (l) => l.length === 1 && l[0]!.endsWith('|Renamed hook'), "the channel's new name listed");

      assert.equal((await onFirst('DELETE', `/posts/group/${group}`)).status, 200);
      await seenOnSecond(listed, (l) => l.length === 0, 'the deleted post gone');
    });

    if (store === 'postgres')
      it('every watched table has its NOTIFY triggers, one per kind of write (migrations 007 and 025)', async () => {
        const { rows } = await sql<{ trigger: string }>`SELECT t.tgname AS trigger FROM pg_trigger t WHERE NOT t.tgisinternal`.execute(first.services.store.db);
        const names = new Set(rows.map((r) => r.trigger));
        for (const table of WATCHED_TABLES) {
          for (const write of ['insert', 'update', 'delete', 'truncate']) assert.ok(names.has(`${table}_${write}_changes`), `${table}_${write}_changes`);
        }
      });

    // On SQLite only Herald's own writes are signalled; PostgreSQL's triggers see every write.
    if (store === 'postgres')
      it('a change made with SQL outside Herald shows too', async () => {
        const { key } = await first.services.accounts.createKey(accountId, 'outside');
        const onSecond = untypedCaller(second.api, key);
        const added = await untypedCaller(first.api, key)('POST', '/integrations', {
          identifier: 'webhook',
          name: 'Before',
          credentials: { url: 'https://hooks.example.com/b' },
        });
        await seenOnSecond(
          async () => (await onSecond('GET', '/integrations')).body.map((c: { name: string }) => c.name),
          (n) => n.includes('Before'),
          'listed',
        );
        const client = new pg.Client({ connectionString: first.services.config.databaseUrl });
        await client.connect();
        try {
          await client.query('UPDATE channels SET name = $1 WHERE id = $2', ['Edited by hand', added.body.id]);
        } finally {
          await client.end();
        }
        await seenOnSecond(
          async () => (await onSecond('GET', '/integrations')).body.map((c: { name: string }) => c.name),
          (n) => n.includes('Edited by hand'),
          'the hand edit listed',
        );
      });

    it('the writing server itself answers its own change at once', async () => {
      const { key } = await first.services.accounts.createKey(accountId, 'own');
      const call = untypedCaller(second.api, key);
      const before = (await call('GET', '/integrations')).body.length;
      for (let i = 0; i < 5; i++) {
        assert.equal(
          (await call('POST', '/integrations', { identifier: 'webhook', name: `Own ${i}`, credentials: { url: `https://hooks.example.com/own/${i}` } })).status,
          201,
        );
        assert.equal((await call('GET', '/integrations')).body.length, before + i + 1);
      }
    });
  });
}

/**
 * A TCP hop between a Herald and PostgreSQL that can cut the Herald's change
 * listener (the connection that sends `LISTEN herald_changes`) and keep it cut:
 * while held, every new connection that tries to LISTEN is closed before the
 * statement reaches the server. The Herald's other connections pass untouched.
 */
async function listenerCutter(target: string) {
  const to = new URL(target);
  const open = new Set<net.Socket>();
  const listening = new Set<net.Socket>();
  let held = false;
  let refused = 0;
  const waiting: { after: number; resolve: () => void }[] = [];
  const cut = (client: net.Socket, upstream: net.Socket) => {
    client.destroy();
    upstream.destroy();
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(to.port || 5432), to.hostname);
    open.add(client);
    open.add(upstream);
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('close', () => {
      open.delete(client);
      listening.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      open.delete(upstream);
      client.destroy();
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('data', (chunk: Buffer) => {
      if (chunk.includes('LISTEN herald_changes')) {
        if (held) {
          cut(client, upstream);
          refused++;
          for (const w of waiting.splice(0)) if (refused > w.after) w.resolve();
          return;
        }
        listening.add(client);
      }
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    /** The database's URL through this hop. */
    url: url.toString(),
    /** Cuts the listening connection and refuses every new one until `release`. */
    hold(): void {
      held = true;
      for (const client of listening) client.destroy();
    },
    /**
     * Resolves when the next attempt to listen has been refused: the listener has
     * noticed the cut (it only tries again after it went down).
     */
    nextRefusal(): Promise<void> {
      return new Promise((resolve) => waiting.push({ after: refused, resolve }));
    },
    release(): void {
      held = false;
    },
    async close(): Promise<void> {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('in-memory reads on PostgreSQL while changes cannot be heard', async () => {
  await testStores();
  it(
    'a listening connection held down: reads go to the database meanwhile, and nothing read before is served stale once it is back',
    storeSuite('postgres'),
    async () => {
      const first = await startHerald('postgres');
      const cutter = await listenerCutter(first.services.config.databaseUrl!);
      // The second server reaches the database through the hop, which can keep its listener down.
      const second = await startHerald('postgres', { databaseUrl: cutter.url });
      const admin = new pg.Client({ connectionString: first.services.config.databaseUrl });
      await admin.connect();
      try {
        const accountId = await first.services.accounts.create('Unheard');
        const { key } = await first.services.accounts.createKey(accountId, 'k');
        const added = await untypedCaller(first.api, key)('POST', '/integrations', {
          identifier: 'webhook',
          name: 'One',
          credentials: { url: 'https://hooks.example.com/one' },
        });
        const names = async () => (await untypedCaller(second.api, key)('GET', '/integrations')).body.map((c: { name: string }) => c.name).join();
        const listening = () => second.services.store.changes.generation(tables('channels')) !== undefined;
        // The second server may have listened before the channel was added, and that insert's NOTIFY can reach it
        // late (through the hop, on a busy machine), so that it drops what it read afterwards. Notifications arrive
        // in the order they were sent: once a marker sent now is heard, the insert's has been heard too.
        const heardEverythingSentSoFar = async () => {
          const webhooks = () => second.services.store.changes.generation(tables('webhooks'));
          const before = webhooks();
          assert.notEqual(before, undefined, 'the second server listens');
          await admin.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, 'webhooks']);
          await eventually(async () => ((webhooks() ?? -1) > before! ? true : undefined), 5000, 'the marker to be heard');
        };
        // Writes in this session fire no trigger, so nobody is told of them (as with a NOTIFY that was lost).
        await admin.query("SET session_replication_role = 'replica'");
        const rename = (name: string) => admin.query('UPDATE channels SET name = $1 WHERE id = $2', [name, added.body.id]);

        await eventually(async () => ((await names()) === 'One' ? true : undefined), 2000, 'listed on the second server');
        // The second server listens once it first reads; from then on its list is kept in memory.
        await eventually(async () => (listening() ? true : undefined), 5000, 'the second server to listen');
        await heardEverythingSentSoFar();
        assert.equal(await names(), 'One');
        await rename('Unannounced');
        assert.equal(await names(), 'One', 'the list is served from memory: an unannounced change is not seen while the listener is up');

        // Cut the listening connection and keep it down: its reconnections are refused until released.
        const refused = cutter.nextRefusal();
        cutter.hold();
        // The refused attempt comes only after the listener noticed the cut (it tries again once down).
        await refused;
        // While nobody listens, every read goes to the database: each change is seen at once, although none is announced.
        assert.equal(await names(), 'Unannounced', 'the change made before the cut, read from the database');
        await rename('Two');
        assert.equal(await names(), 'Two', 'a change made while the listener is down is seen at once');
        await rename('Three');
        assert.equal(await names(), 'Three', 'a second change made while the listener is down is seen at once');

        // Let it back: whatever the server kept from before the cut ('One') must not be served again.
        cutter.release();
        await eventually(async () => (listening() ? true : undefined), 10_000, 'the second server to listen again');
        assert.equal(await names(), 'Three', 'once listening again, the change made during the outage is seen, not what was kept before it');
        assert.equal(await names(), 'Three');
      } finally {
        await admin.end();
        await second.close();
        await cutter.close();
        await first.close();
      }
    },
  );
});
