/**
 * Herald's MCP server (/api/mcp) as an agent sees it: the SDK's own client over
 * Streamable HTTP against a running Herald with its engine, a local webhook
 * receiver for the channel that publishes, and the local WordPress server for
 * analytics. Scopes, rate limits and idempotency are the public API's own.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { untypedCaller, eventually, PNG_1x1, startHerald, type TestAccount, type TestHerald, testAccount } from '../helpers/herald.ts';
import { countRows, entry, postBody, scheduledPost, startFileServer, type FileServer } from '../helpers/api-fixtures.ts';
import { createPostsBody } from '../../src/contract/index.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { AUTHOR, startWordPressFake, type WordPressFake } from '../fakes/wordpress.ts';
import { WebClient } from '../accounts/web-client.ts';
import { callTool as call, toolResult as ok, mcpAgents } from '../helpers/mcp-client.ts';
import { oauthAccessToken } from '../helpers/oauth-token.ts';
import { teardown } from '../helpers/teardown.ts';

/** The review and CSV tools a posts:read credential sees (test/api/mcp-review.test.ts tests them). */
const REVIEW_READ_TOOLS = ['list_pending_approvals', 'list_comments', 'export_posts_csv'];
const READ_TOOLS = ['list_channels', 'find_next_slot', 'list_posts', 'get_post', 'list_series', 'get_series', ...REVIEW_READ_TOOLS];
const ALL_TOOLS = [
  'list_channels',
  'find_next_slot',
  'upload_media_from_url',
  'create_post',
  'list_posts',
  'get_post',
  'delete_post',
  'retry_post',
  'channel_analytics',
  'post_analytics',
  ...['list_feeds', 'add_feed', 'update_feed', 'delete_feed', 'check_feed_now'],
  ...['list_series', 'create_series', 'get_series', 'update_series', 'delete_series'],
  ...REVIEW_READ_TOOLS,
  ...['approve_post', 'reject_post', 'add_comment', 'create_preview_link', 'import_posts_csv'],
];
const POSTS_PER_HOUR = 5;

for (const store of await testStores()) {
  describe(`MCP server (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let files: FileServer;
    let wordpress: WordPressFake;
    let owner: WebClient;
    let account: TestAccount;
    let agent: Client;
    let channel: string;
    /** Whether the receiver takes the post "Refuse me". */
    let accepting = true;
    const { connect, closeAll } = mcpAgents(() => herald.url);

    before(async () => {
      receiver = await startWebhookReceiver();
      receiver.respond((d, i) =>
        d.json?.post?.content === 'Refuse me' && !accepting
          ? { status: 400, body: { error: 'the receiver does not take this one' } }
          : { body: { id: `release-${i}`, url: `https://receiver.example/p/${i}` } },
      );
      files = await startFileServer(PNG_1x1);
      wordpress = await startWordPressFake();
      herald = await startHerald(store, { engine: { pollMs: 100 }, env: { HERALD_POSTS_PER_HOUR: String(POSTS_PER_HOUR) } });
      // A person (for the OAuth grant) owns the account the agent works in.
      owner = new WebClient(herald.url);
      const accountId = (await owner.signUp('owner@example.com')).body.account.id;
      const { key } = await herald.services.accounts.createKey(accountId, 'agent');
      account = testAccount(herald.api, accountId, key);
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', name: 'Agent hook', credentials: { url: receiver.url } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channel = added.body.id;
      agent = await connect(key);
    });
    after(() =>
      teardown(
        () => closeAll(),
        () => herald?.close(),
        () => receiver?.close(),
        () => files?.close(),
        () => wordpress?.close(),
      ),
    );

    it('answers 401 JSON without a credential or with a wrong one, and 405 to GET, as the public API answers', async () => {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      };
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      for (const [authorization, code] of [
        [undefined, 'missing_api_key'],
        ['hk_not_a_key', 'invalid_api_key'],
      ] as const) {
        const response = await fetch(`${herald.url}/api/mcp`, {
          method: 'POST',
          headers: { ...headers, ...(authorization ? { authorization } : {}) },
          body: JSON.stringify(initialize),
        });
        assert.equal(response.status, 401);
        const body = (await response.json()) as any;
        assert.equal(body.code, code);
        assert.equal(body.errors[0].path, 'headers.authorization');
      }
      const get = await fetch(`${herald.url}/api/mcp`, { headers: { authorization: account.key, accept: 'text/event-stream' } });
      assert.equal(get.status, 405);
      assert.equal(get.headers.get('allow'), 'POST');
      assert.equal(((await get.json()) as any).code, 'method_not_allowed');
    });

    it('lists every tool to a full-access key, each with a description and an input schema from the contract', async () => {
      const { tools } = await agent.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...ALL_TOOLS].sort());
      for (const tool of tools) {
        assert.ok((tool.description ?? '').length > 80, `${tool.name} is described`);
        assert.equal(tool.inputSchema.type, 'object');
      }
      const create = tools.find((t) => t.name === 'create_post')!;
      const props = create.inputSchema.properties as Record<string, any>;
      assert.deepEqual(props.when.enum, ['now', 'at', 'next_slot', 'draft']);
      // The thread item of the public API's contract, delay and its description included.
      const item = props.posts.items.properties.value.items;
      assert.deepEqual(Object.keys(item.properties).sort(), ['content', 'delay', 'id', 'image']);
      assert.match(JSON.stringify(item.properties.delay), /Minutes after the previous item/);
      assert.equal(tools.find((t) => t.name === 'list_posts')!.annotations?.readOnlyHint, true);
      assert.equal(tools.find((t) => t.name === 'delete_post')!.annotations?.destructiveHint, true);
    });

    it("lists channels with their network's rules and settings schema, and finds the next free slot", async () => {
      const { channels } = await ok(agent, 'list_channels');
      assert.equal(channels.length, 1);
      assert.equal(channels[0].id, channel);
      assert.equal(channels[0].name, 'Agent hook');
      assert.equal(channels[0].network.name, 'Webhook');
      assert.equal(channels[0].network.rules.threads, true);
      assert.equal(typeof channels[0].network.rules.maxLength, 'number');
      assert.equal(channels[0].network.settings.type, 'object');
      const slot = await ok(agent, 'find_next_slot', { id: channel });
      assert.ok(Date.parse(slot.date) > Date.now(), `the slot ${slot.date} is ahead`);
    });

    it('uploads media from a URL and schedules a thread with it, which the engine delivers in order', async () => {
      const media = await ok(agent, 'upload_media_from_url', { url: `${files.url}/file.png` });
      assert.equal(media.mimeType, 'image/png');
      const date = new Date(Date.now() + 1_500).toISOString();
      const created = await ok(agent, 'create_post', {
        when: 'at',
        date,
        posts: [
          {
            integration: { id: channel },
            value: [
              { content: 'Hello from an agent', image: [{ id: media.id, path: media.path }] },
              { content: 'And a reply', delay: 0 },
            ],
          },
        ],
      });
      assert.equal(created.posts.length, 1);
      const { postId } = created.posts[0];
      assert.equal(created.posts[0].state, 'QUEUE');
      assert.equal(created.posts[0].publishDate, date);
      const post = await eventually(
        async () => {
          const detail = await ok(agent, 'get_post', { id: postId });
          return detail.thread.every((t: any) => t.state === 'PUBLISHED') ? detail : undefined;
        },
        15_000,
        'the thread published',
      );
      const deliveries = receiver.deliveries.filter((d) => d.json.post.group === post.group);
      assert.deepEqual(
        deliveries.map((d) => d.json.post.content),
        ['Hello from an agent', 'And a reply'],
      );
      assert.deepEqual(
        deliveries[0].json.post.media.map((m: any) => m.url),
        [media.path],
      );
      assert.equal(deliveries[1].json.post.replyTo, post.releaseId);
      assert.equal(post.thread[0].attempts[0].outcome, 'published');
      assert.equal(post.creationMethod, 'mcp');
      const { posts } = await ok(agent, 'list_posts', {
        startDate: new Date(Date.now() - 60_000).toISOString(),
        endDate: new Date(Date.now() + 60_000).toISOString(),
      });
      assert.deepEqual(
        posts.map((p: any) => [p.id, p.state]),
        [[postId, 'PUBLISHED']],
      );
    });

    it("shows a failed post's error, and retry_post sends it again", async () => {
      accepting = false;
      const [created] = (await ok(agent, 'create_post', { when: 'now', posts: [{ integration: { id: channel }, value: [{ content: 'Refuse me' }] }] })).posts;
      const failed = await eventually(
        async () => {
          const detail = await ok(agent, 'get_post', { id: created.postId });
          return detail.state === 'ERROR' ? detail : undefined;
        },
        15_000,
        'the post failed',
      );
      assert.match(failed.thread[0].error, /the receiver does not take this one/);
      accepting = true;
      const retried = await ok(agent, 'retry_post', { id: created.postId });
      assert.equal(retried.state, 'QUEUE');
      await eventually(
        async () => ((await ok(agent, 'get_post', { id: created.postId })).state === 'PUBLISHED' ? true : undefined),
        15_000,
        'published on retry',
      );
      const again = await call(agent, 'retry_post', { id: created.postId });
      assert.equal(again.isError, true);
      assert.match(again.text, /has no failed item to retry/);
      assert.match(again.text, /code: not_failed/);
    });

    it('answers a bad argument with a tool error naming the field and the rule, and stores nothing', async () => {
      const before = await countRows(herald, 'posts', account.id);
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ when: 'at', date: 'next tuesday', posts: [{ integration: { id: channel }, value: [{ content: 'x' }] }] }, /date: must be an ISO 8601 date-time/],
        [{ when: 'at', posts: [{ integration: { id: channel }, value: [{ content: 'x' }] }] }, /date: is required when "when" is "at"/],
        [
          { when: 'now', posts: [{ integration: { id: 'no-such-channel' }, value: [{ content: 'x' }] }] },
          /posts\.0\.integration\.id: channel "no-such-channel" does not exist/,
        ],
        [{ when: 'now', posts: [{ integration: { id: channel }, value: [{ content: '' }] }] }, /posts\.0\.value\.0\.content: is empty and there is no media/],
        [{ when: 'now', text: 'Hello', posts: [{ integration: { id: channel }, value: [{ content: 'x' }] }] }, /Unrecognized key: "text"/],
        [{ when: 'soon', posts: [] }, /when: .*"now"/],
      ];
      for (const [args, expected] of cases) {
        const answer = await call(agent, 'create_post', args);
        assert.equal(answer.isError, true, JSON.stringify(args));
        assert.match(answer.text, expected);
        assert.ok(answer.data.error.errors.length > 0, 'the structured error names the fields');
      }
      assert.equal(await countRows(herald, 'posts', account.id), before);
      const missing = await call(agent, 'get_post', { id: 'nope' });
      assert.equal(missing.isError, true);
      assert.match(missing.text, /does not exist in this account/);
      // Text no store can keep is refused with the request, as on the public API, before any tool runs.
      await assert.rejects(
        call(agent, 'create_post', { when: 'now', posts: [{ integration: { id: channel }, value: [{ content: 'a\u0000b' }] }] }),
        /posts\.0\.value\.0\.content: must not contain the NUL character/,
      );
      // The session goes on after errors.
      assert.equal((await ok(agent, 'list_channels')).channels.length, 1);
    });

    it('an idempotency_key makes create_post safe to repeat, as the Idempotency-Key header does', async () => {
      const args = { when: 'draft', posts: [{ integration: { id: channel }, value: [{ content: 'Only once' }] }], idempotency_key: crypto.randomUUID() };
      const first = await ok(agent, 'create_post', args);
      const before = await countRows(herald, 'posts', account.id);
      const repeat = await ok(agent, 'create_post', args);
      assert.deepEqual(repeat.posts, first.posts);
      assert.equal(repeat.replayed, true);
      assert.equal(await countRows(herald, 'posts', account.id), before, 'the repeat created nothing');
      const other = await call(agent, 'create_post', { ...args, posts: [{ integration: { id: channel }, value: [{ content: 'Something else' }] }] });
      assert.equal(other.isError, true);
      assert.match(other.text, /already used with a different request body/);
      assert.match(other.text, /code: idempotency_key_mismatch/);

      const deleted = await ok(agent, 'delete_post', { id: first.posts[0].postId });
      assert.equal(deleted.deleted, true);
      assert.equal((await call(agent, 'get_post', { id: first.posts[0].postId })).isError, true);
    });

    it('create_post counts against the hourly posting allowance POST /posts counts against', async () => {
      const busy = await herald.newAccount('Busy account');
      const hook = await busy.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: `${receiver.url}/busy` } });
      const busyAgent = await connect(busy.key);
      const draft = { when: 'draft', posts: [{ integration: { id: hook.body.id }, value: [{ content: 'Counted' }] }] };
      for (let i = 0; i < POSTS_PER_HOUR - 1; i++) await ok(busyAgent, 'create_post', draft);
      // A call refused for its arguments is not counted, as on the public API.
      assert.equal((await call(busyAgent, 'create_post', { ...draft, when: 'at' })).isError, true);
      assert.equal((await busy.callUntyped('POST', '/posts', scheduledPost(hook.body.id, 'via HTTP'))).status, 201);
      const refused = await call(busyAgent, 'create_post', draft);
      assert.equal(refused.isError, true);
      assert.match(refused.text, new RegExp(`at most ${POSTS_PER_HOUR} requests per 1 hour\\(s\\); try again in \\d+ s`));
      assert.match(refused.text, /code: rate_limited/);
      assert.equal((await busy.callUntyped('POST', '/posts', scheduledPost(hook.body.id, 'via HTTP'))).status, 429);
    });

    it('a read-only key sees only the read tools, and is refused a write tool with the scope it lacks: nothing is created or deleted', async () => {
      const { key } = await herald.services.accounts.createKey(account.id, 'reader', ['posts:read', 'channels:read']);
      const reader = await connect(key);
      const { tools } = await reader.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...READ_TOOLS].sort());
      const before = await countRows(herald, 'posts', account.id);
      const refused = await call(reader, 'create_post', { when: 'now', posts: [{ integration: { id: channel }, value: [{ content: 'Not allowed' }] }] });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /may not use create_post: it needs the scope posts:write, and it has posts:read, channels:read/);
      assert.equal(refused.data.error.code, 'insufficient_scope');
      assert.equal(await countRows(herald, 'posts', account.id), before);
      // A real post of the account (stored directly, spending none of its hourly allowance): only the scope check can keep it.
      const plan = await herald.services.posts.plan(account.id, createPostsBody.parse(postBody('draft', [entry(channel, ["Not the reader's to delete"])])));
      const [{ postId }] = await herald.services.posts.commit(plan);
      const kept = await call(reader, 'delete_post', { id: postId });
      assert.equal(kept.isError, true, `a read-only key may not delete the account's post: ${kept.text}`);
      assert.match(kept.text, /may not use delete_post: it needs the scope posts:write/);
      assert.equal(kept.data.error.code, 'insufficient_scope');
      assert.equal((await ok(reader, 'get_post', { id: postId })).id, postId, 'the post the read-only key tried to delete is still there');
      assert.equal((await ok(reader, 'list_channels')).channels[0].id, channel);
      assert.equal((await ok(agent, 'delete_post', { id: postId })).deleted, true, 'a key with posts:write deletes the same post');
    });

    it('channel and post analytics are read from the network, or refused saying why', async () => {
      const site = await account.callUntyped('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: wordpress.url, username: AUTHOR.login, password: AUTHOR.password },
      });
      assert.equal(site.status, 201, JSON.stringify(site.body));
      const { analytics } = await ok(agent, 'channel_analytics', { id: site.body.id, date: 7 });
      assert.deepEqual(
        analytics.map((s: any) => s.label),
        ['Posts'],
      );
      const webhook = await call(agent, 'channel_analytics', { id: channel });
      assert.equal(webhook.isError, true);
      assert.match(webhook.text, /Webhook/);
      assert.match(webhook.text, /code: analytics_unavailable/);
      const days = await call(agent, 'post_analytics', { id: 'x', date: 1000 });
      assert.equal(days.isError, true);
      assert.match(days.text, /date: /);
    });

    it('"next_slot" schedules each channel at its own next free slot, errors naming the entry as it was sent', async () => {
      const early = await account.callUntyped('POST', '/integrations', {
        identifier: 'webhook',
        credentials: { url: `${receiver.url}/early` },
        postingTimes: ['03:00'],
      });
      assert.equal(early.status, 201, JSON.stringify(early.body));
      const entries = (second: string) => [
        { integration: { id: channel }, value: [{ content: 'At the next slot' }] },
        { integration: { id: early.body.id }, value: [{ content: second }] },
      ];
      const refused = await call(agent, 'create_post', { when: 'next_slot', posts: entries('') });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /^posts\.1\.value\.0\.content: is empty/);
      const slots = [(await ok(agent, 'find_next_slot', { id: channel })).date, (await ok(agent, 'find_next_slot', { id: early.body.id })).date];
      assert.notEqual(slots[0], slots[1]);
      const { posts } = await ok(agent, 'create_post', { when: 'next_slot', posts: entries('Early bird') });
      assert.deepEqual(
        posts.map((p: any) => [p.channel, p.publishDate, p.state]),
        [
          [channel, slots[0], 'QUEUE'],
          [early.body.id, slots[1], 'QUEUE'],
        ],
      );
    });

    it('an OAuth access token from Herald works, with the scopes it was granted', async () => {
      const accessToken = await oauthAccessToken(herald.url, owner, owner, 'channels:read posts:read analytics:read');
      assert.match(accessToken, /^hat_/);
      const app = await connect(`Bearer ${accessToken}`);
      const { tools } = await app.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...READ_TOOLS, 'channel_analytics', 'post_analytics'].sort());
      assert.ok(
        (await ok(app, 'list_channels')).channels.some((c: any) => c.id === channel),
        "the OAuth app sees the account's channels",
      );
    });
  });
}
