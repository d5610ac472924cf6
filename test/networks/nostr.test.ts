import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decode, nsecEncode } from 'nostr-tools/nip19';
import { finalizeEvent, generateSecretKey, getPublicKey, verifyEvent, type Event } from 'nostr-tools/pure';
import { bytesToHex } from 'nostr-tools/utils';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startFakeRelay, type FakeRelay } from '../fakes/nostr-relay.ts';
import { publishNow, settled, uploadPng } from './publish.ts';
import { teardown } from '../helpers/teardown.ts';

/** The EVENT messages a relay received, newest last. */
const sentEvents = (relay: FakeRelay): Event[] => relay.received.filter((m) => m[0] === 'EVENT').map((m) => m[1] as Event);

for (const store of await testStores()) {
  describe(`nostr (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let relayA: FakeRelay;
    let relayB: FakeRelay;
    let serverRelay: FakeRelay;
    let deadRelayUrl: string;
    let account: TestAccount;
    let channelId: string;
    const secret = generateSecretKey();
    const pubkey = getPublicKey(secret);

    before(async () => {
      [relayA, relayB, serverRelay] = await Promise.all([startFakeRelay(), startFakeRelay(), startFakeRelay()]);
      const dead = await startFakeRelay();
      deadRelayUrl = dead.url;
      await dead.close();
      // The user's profile, published earlier by another client.
      relayA.seed(
        finalizeEvent(
          {
            kind: 0,
            created_at: 1_700_000_000,
            tags: [],
            content: JSON.stringify({ name: 'herald', display_name: 'Herald Notes', picture: 'https://example.com/me.png' }),
          },
          secret,
        ),
      );
      herald = await startHerald(store, { engine: { pollMs: 50 }, env: { HERALD_NOSTR_RELAYS: serverRelay.url, HERALD_NOSTR_RELAY_TIMEOUT_MS: '1000' } });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => Promise.all([relayA, relayB, serverRelay].map((r) => r?.close())),
      ),
    );

    it('connects with an nsec key and relays, reading the profile (kind 0) from the relays', async () => {
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'nostr',
        credentials: { privateKey: nsecEncode(secret), relays: [relayA.url, relayB.url] },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
      assert.equal(added.body.name, 'Herald Notes');
      const req = relayA.received.find((m) => m[0] === 'REQ')!;
      assert.deepEqual(req[2], { kinds: [0], authors: [pubkey], limit: 1 });
      const [listed] = (await account.callUntyped('GET', '/integrations')).body;
      assert.equal(listed.picture, 'https://example.com/me.png');
      assert.deepEqual(decode(listed.profile), { type: 'npub', data: pubkey });
      // The same key in hex is the same account: the channel is updated, not duplicated.
      const again = await account.callUntyped('POST', '/integrations', {
        identifier: 'nostr',
        credentials: { privateKey: bytesToHex(secret), relays: [relayA.url, relayB.url] },
      });
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.equal(again.body.id, channelId);
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(bytesToHex(secret)));
    });

    it('refuses a key that is not a Nostr private key and relays that are not WebSocket addresses', async () => {
      const bad = await account.callUntyped('POST', '/integrations', {
        identifier: 'nostr',
        credentials: { privateKey: 'nsec1notakey', relays: ['https://relay.example.com'] },
      });
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body.errors.map((e: { path: string }) => e.path).sort(), ['credentials.privateKey', 'credentials.relays.0']);
      const unreachable = await account.callUntyped('POST', '/integrations', {
        identifier: 'nostr',
        credentials: { privateKey: bytesToHex(generateSecretKey()), relays: [deadRelayUrl] },
      });
      assert.equal(unreachable.status, 502, JSON.stringify(unreachable.body));
      assert.match(unreachable.body.message, /none of the relays could be reached/);
    });

    it('publishes a signed kind-1 note to every relay', async () => {
      const post = await settled(account, await publishNow(account, channelId, ['Hello relays']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const [a] = sentEvents(relayA);
      const [b] = sentEvents(relayB);
      assert.deepEqual(a, b, 'the same event goes to every relay');
      assert.equal(a.kind, 1);
      assert.equal(a.pubkey, pubkey);
      assert.equal(a.content, 'Hello relays');
      assert.deepEqual(a.tags, []);
      assert.ok(verifyEvent({ ...a }), 'signed with the key');
      assert.equal(relayA.events.at(-1)!.id, a.id);
      assert.equal(relayB.events.at(-1)!.id, a.id);
      assert.equal(post.releaseId, a.id);
      const nevent = decode(post.releaseURL!.replace('https://njump.me/', ''));
      assert.equal(nevent.type, 'nevent');
      assert.equal((nevent.data as { id: string }).id, a.id);
    });

    it('puts media URLs in the note with NIP-92 imeta tags', async () => {
      const png = await uploadPng(account, herald.api);
      const post = await settled(account, await publishNow(account, channelId, [{ content: 'A picture', image: [{ id: png.id, path: png.path }] }]));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const note = sentEvents(relayA).at(-1)!;
      assert.equal(note.content, `A picture\n${png.path}`);
      assert.deepEqual(note.tags, [['imeta', `url ${png.path}`, 'm image/png', 'dim 4x3']]);
    });

    it('chains a thread with NIP-10 root/reply e tags and p tags', async () => {
      const post = await settled(
        account,
        await publishNow(account, channelId, ['root note', { content: 'first reply', delay: 0 }, { content: 'second reply', delay: 0 }]),
      );
      assert.deepEqual(
        post.thread.map((t) => t.state),
        ['PUBLISHED', 'PUBLISHED', 'PUBLISHED'],
      );
      const [root, first, second] = sentEvents(relayA).slice(-3);
      assert.deepEqual(root.tags, []);
      assert.deepEqual(first.tags, [
        ['e', root.id, relayA.url, 'root', pubkey],
        ['p', pubkey],
      ]);
      assert.deepEqual(second.tags, [
        ['e', root.id, relayA.url, 'root', pubkey],
        ['e', first.id, relayA.url, 'reply', pubkey],
        ['p', pubkey],
      ]);
      assert.deepEqual(
        post.thread.map((t) => t.releaseId),
        [root.id, first.id, second.id],
      );
    });

    it('is published when one relay accepts although another refuses or is down', async () => {
      relayB.failNext({ ok: false, message: 'blocked: not on the allow list' });
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'nostr',
        credentials: { privateKey: bytesToHex(secret), relays: [relayA.url, relayB.url, deadRelayUrl] },
      });
      assert.equal(added.status, 201);
      const post = await settled(account, await publishNow(account, channelId, ['one is enough']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(relayA.events.at(-1)!.content, 'one is enough');
      assert.notEqual(relayB.events.at(-1)!.content, 'one is enough');
    });

    it("fails with the relays' own messages when every relay refuses the note", async () => {
      const restored = await account.callUntyped('POST', '/integrations', {
        identifier: 'nostr',
        credentials: { privateKey: bytesToHex(secret), relays: [relayA.url, relayB.url] },
      });
      assert.equal(restored.status, 201);
      relayA.failNext({ ok: false, message: 'blocked: spam filter' });
      relayB.failNext({ ok: false, message: 'invalid: content not allowed' });
      const post = await settled(account, await publishNow(account, channelId, ['refused everywhere']));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error!, /relays refused the note/);
      assert.match(post.error!, /blocked: spam filter/);
      assert.match(post.error!, /invalid: content not allowed/);
      assert.equal(post.thread[0].attempts.length, 1);
    });

    it('retries after "rate-limited:" and sends the very same event again', async () => {
      relayA.failNext({ ok: false, message: 'rate-limited: slow down' });
      relayB.failNext({ ok: false, message: 'rate-limited: slow down' });
      const post = await settled(account, await publishNow(account, channelId, ['patience']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.deepEqual(
        post.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      const tries = sentEvents(relayA).filter((e) => e.content === 'patience');
      assert.equal(tries.length, 2);
      assert.equal(tries[0].id, tries[1].id, 'the retry re-creates the same event id');
      assert.equal(relayA.events.filter((e) => e.content === 'patience').length, 1, 'stored once');
    });

    it('after relays fall silent, asks them for the note by id: found is published, absent is sent again (the same event, stored once)', async () => {
      relayA.failNext({ silent: true, store: true });
      relayB.failNext({ silent: true });
      const found = await settled(account, await publishNow(account, channelId, ['stored but unconfirmed']));
      assert.equal(found.state, 'PUBLISHED', found.error ?? '');
      assert.deepEqual(
        found.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      const id = found.releaseId!;
      assert.equal(relayA.events.filter((e) => e.id === id).length, 1);
      assert.ok(
        relayA.received.some((m) => m[0] === 'REQ' && JSON.stringify(m[2]) === JSON.stringify({ ids: [id] })),
        'the relays were asked for the note by id',
      );

      relayA.failNext({ silent: true });
      relayB.failNext({ silent: true });
      const absent = await settled(account, await publishNow(account, channelId, ['lost in transit']), 30_000);
      assert.equal(absent.state, 'PUBLISHED', absent.error ?? '');
      assert.deepEqual(
        absent.thread[0].attempts.map((a) => a.outcome),
        ['unknown', 'published'],
      );
      const sent = sentEvents(relayA).filter((e) => e.content === 'lost in transit');
      assert.equal(sent.length, 2, 'sent twice');
      assert.equal(sent[0].id, sent[1].id, 'as the very same event');
      assert.equal(relayA.events.filter((e) => e.content === 'lost in transit').length, 1, 'stored once');
    });

    it("publishes through the server's relays for a key connected without relays", async () => {
      const other = generateSecretKey();
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'nostr', credentials: { privateKey: nsecEncode(other) } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      const post = await settled(account, await publishNow(account, added.body.id, ['via the server relays']));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      assert.equal(serverRelay.events.at(-1)!.pubkey, getPublicKey(other));
      assert.ok(!relayA.events.some((e) => e.content === 'via the server relays'), "!relayA.events.some((e) => e.content === 'via the server relays')");
    });
  });
}
