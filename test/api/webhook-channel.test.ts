import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifiedByStandardWebhooks } from '../helpers/standard-webhooks.ts';
import { eventually, PNG_1x1, startHerald, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { teardown } from '../helpers/teardown.ts';

for (const store of await testStores()) {
  describe(`webhook channel: add, post, deliver (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    let channel: { id: string; secrets: { signingSecret: string } };

    before(async () => {
      herald = await startHerald(store, { engine: true });
      receiver = await startWebhookReceiver();
      account = await herald.newAccount();
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', name: 'My hook', credentials: { url: receiver.url } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channel = added.body;
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it('shows the channel in GET /integrations with the contract fields', async () => {
      const list = await account.callUntyped('GET', '/integrations');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.map((c: any) => ({ id: c.id, name: c.name, identifier: c.identifier, disabled: c.disabled })),
        [{ id: channel.id, name: 'My hook', identifier: 'webhook', disabled: false }],
      );
      assert.ok('picture' in list.body[0] && 'profile' in list.body[0], "'picture' in list.body[0] && 'profile' in list.body[0]");
      assert.match(channel.secrets.signingSecret, /^whsec_/);
    });

    it('delivers a thread as signed JSON POSTs, in order, replies naming the previous release', async () => {
      receiver.respond((_d, i) => ({ body: { id: `release-${i}`, url: `https://example.net/p/${i}` } }));
      const media = await upload(account, herald.api, PNG_1x1, 'photo.png');
      assert.equal(media.status, 201);
      const created = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [
          {
            integration: { id: channel.id },
            value: [
              { content: 'first', image: [{ id: media.body.id, path: media.body.path }] },
              { content: 'second', image: [], delay: 0 },
            ],
          },
        ],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const postId = created.body[0].postId;
      const detail = await eventually(
        async () => {
          const r = await account.callUntyped('GET', `/posts/${postId}`);
          return r.body.thread.every((t: any) => t.state === 'PUBLISHED') ? r.body : undefined;
        },
        10_000,
        'thread published',
      );

      assert.equal(receiver.deliveries.length, 2);
      const [first, second] = receiver.deliveries;
      for (const d of receiver.deliveries) {
        assert.ok(verifiedByStandardWebhooks(channel.secrets.signingSecret, d.headers, d.body), 'signature verifies with the channel secret');
        assert.equal(verifiedByStandardWebhooks('whsec_' + Buffer.from('wrong').toString('base64'), d.headers, d.body), false);
      }
      assert.equal(first.json.post.content, 'first');
      assert.deepEqual(
        first.json.post.media.map((m: any) => m.url),
        [media.body.path],
      );
      assert.equal(first.json.thread.length, 2);
      assert.equal(first.json.channel.id, channel.id);
      assert.equal(second.json.post.content, 'second');
      assert.equal(second.json.post.replyTo, 'release-0');
      assert.equal(detail.releaseId, 'release-0');
      assert.equal(detail.releaseURL, 'https://example.net/p/0');
      assert.equal(detail.thread[1].releaseId, 'release-1');
      assert.equal(detail.thread[0].attempts.length, 1);
      assert.equal(detail.thread[0].attempts[0].outcome, 'published');
    });

    it("ends in ERROR with the receiver's own message when it refuses the post", async () => {
      receiver.respond(() => ({ status: 422, body: { error: 'content not allowed here' } }));
      const created = await account.callUntyped('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channel.id }, value: [{ content: 'refused one', image: [] }] }],
      });
      assert.equal(created.status, 201);
      const detail = await eventually(
        async () => {
          const r = await account.callUntyped('GET', `/posts/${created.body[0].postId}`);
          return r.body.state === 'ERROR' ? r.body : undefined;
        },
        10_000,
        'post failed',
      );
      assert.match(detail.error, /422/);
      assert.match(detail.error, /content not allowed here/);
      const notes = await account.callUntyped('GET', '/notifications');
      assert.ok(
        notes.body.notifications.some((n: any) => /content not allowed here/.test(n.content)),
        'notes.body.notifications.some((n: any) => /content not allowed here/.test(n.content))',
      );
    });

    it('keeps only an http(s) release URL the receiver answers: javascript: and data: are not served', async () => {
      const answers: Record<string, string> = {
        'answers javascript': 'javascript:alert(1)',
        'answers data': 'data:text/html,<script>alert(1)</script>',
        'answers https': 'https://example.net/kept/1',
      };
      receiver.respond((d, i) => ({ body: { id: `url-${i}`, url: answers[d.json.post.content] } }));
      const ids: Record<string, string> = {};
      for (const content of Object.keys(answers)) {
        const created = await account.callUntyped('POST', '/posts', {
          type: 'now',
          date: new Date().toISOString(),
          shortLink: false,
          tags: [],
          posts: [{ integration: { id: channel.id }, value: [{ content, image: [] }] }],
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        ids[content] = created.body[0].postId;
      }
      const served: Record<string, any> = {};
      for (const [content, id] of Object.entries(ids)) {
        served[content] = await eventually(
          async () => {
            const r = await account.callUntyped('GET', `/posts/${id}`);
            return r.body.state === 'PUBLISHED' ? r.body : undefined;
          },
          10_000,
          `${content}: published`,
        );
      }
      assert.equal(served['answers javascript'].releaseURL, null);
      assert.equal(served['answers data'].releaseURL, null);
      assert.equal(served['answers https'].releaseURL, 'https://example.net/kept/1');
      assert.match(served['answers javascript'].releaseId, /^url-\d+$/, 'published all the same, with its id');
      const hour = 3_600_000;
      const range = `startDate=${new Date(Date.now() - hour).toISOString()}&endDate=${new Date(Date.now() + hour).toISOString()}`;
      const listed = await account.callUntyped('GET', `/posts?${range}`);
      assert.ok(
        listed.body.posts.some((p: { id: string }) => p.id === ids['answers javascript']),
        'the list holds the post',
      );
      for (const text of [JSON.stringify(served), JSON.stringify(listed.body)]) {
        assert.doesNotMatch(text, /javascript:|data:text/, 'nowhere in what the API serves');
      }
    });
  });
}

describe('a webhook channel on a private address', () => {
  let herald: TestHerald;
  after(async () => herald?.close());

  it('is refused when it is added, as it would be when it publishes, naming the variable that allows it', async () => {
    herald = await startHerald('sqlite', { env: { HERALD_ALLOW_PRIVATE_HOSTS: '' } });
    const account = await herald.newAccount();
    // "localhost" is a name: only resolving it shows that it is this machine.
    const added = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: 'http://localhost:9/hook' } });
    assert.equal(added.status, 400, JSON.stringify(added.body));
    assert.match(added.body.message, /localhost resolves to a private or reserved address.*HERALD_ALLOW_PRIVATE_HOSTS/);
    const literal = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: 'http://10.0.0.5/hook' } });
    assert.equal(literal.status, 400);
    assert.match(literal.body.message, /HERALD_ALLOW_PRIVATE_HOSTS/);
    assert.deepEqual((await account.callUntyped('GET', '/integrations')).body, [], 'nothing was added');
  });
});
