/**
 * The MCP server's automation tools as an agent sees them: feed subscriptions
 * against a local blog (test/fakes/feed-server.ts) and repeating posts, through
 * the SDK's own client, checked against what the public API shows. No engine
 * runs: feeds are read by check_feed_now, and a series' occurrences are made by
 * running the engine's task, so nothing waits for an interval.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { addWebhookChannel, entry, scheduledPost } from '../helpers/api-fixtures.ts';
import { callTool, toolResult, mcpAgents } from '../helpers/mcp-client.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { startFeedServer, type FeedServer } from '../fakes/feed-server.ts';
import { SeriesExtender } from '../../src/scheduler/series-extender.ts';
import { teardown } from '../helpers/teardown.ts';

const FEED_TOOLS = ['list_feeds', 'add_feed', 'update_feed', 'delete_feed', 'check_feed_now'];
const SERIES_TOOLS = ['list_series', 'create_series', 'get_series', 'update_series', 'delete_series'];
const DAY = 86_400_000;
const POSTS_PER_HOUR = 3;

for (const store of await testStores()) {
  describe(`MCP feed and series tools (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let site: FeedServer;
    let account: TestAccount;
    let agent: Client;
    let channel: string;
    /** The engine's task that creates occurrences, run by hand. */
    let extender: SeriesExtender;
    const { connect, closeAll } = mcpAgents(() => herald.url);

    before(async () => {
      site = await startFeedServer();
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: String(POSTS_PER_HOUR) } });
      account = await herald.newAccount();
      channel = (await addWebhookChannel(account)).id;
      agent = await connect(account.key);
      extender = new SeriesExtender(herald.services, 'test-worker');
    });
    after(() =>
      teardown(
        () => closeAll(),
        () => herald?.close(),
        () => site?.close(),
      ),
    );

    /** The posts list_posts shows for the series over the next five weeks, in time order. */
    async function occurrencePosts(seriesId: string): Promise<any[]> {
      const { posts } = await toolResult(agent, 'list_posts', {
        startDate: new Date().toISOString(),
        endDate: new Date(Date.now() + 35 * DAY).toISOString(),
      });
      return posts.filter((p: any) => p.seriesId === seriesId);
    }

    it('lists the feed and series tools to a full key with schemas from the contract, and only the read ones to a read-only key', async () => {
      const { tools } = await agent.listTools();
      const names = tools.map((t) => t.name);
      for (const name of [...FEED_TOOLS, ...SERIES_TOOLS]) assert.ok(names.includes(name), `${name} is listed`);
      const tool = (name: string) => tools.find((t) => t.name === name)!;
      const addFeed = tool('add_feed').inputSchema.properties as Record<string, any>;
      assert.deepEqual(addFeed.mode.enum, ['now', 'slot', 'draft']);
      assert.deepEqual(tool('add_feed').inputSchema.required, ['url', 'channels']);
      const repeat = (tool('create_series').inputSchema.properties as Record<string, any>).repeat;
      assert.deepEqual(repeat.properties.unit.enum, ['day', 'week']);
      assert.ok(repeat.properties.weekdays, 'weekdays are in the rule');
      assert.ok(
        'idempotency_key' in (tool('create_series').inputSchema.properties as object),
        'create_series takes an idempotency_key, so an agent may safely repeat it',
      );
      assert.equal(tool('delete_series').annotations?.destructiveHint, true);
      assert.equal(tool('list_feeds').annotations?.readOnlyHint, true);
      assert.match(tool('delete_series').description ?? '', /Published occurrences are kept/);

      const { key } = await herald.services.accounts.createKey(account.id, 'reader', ['posts:read', 'feeds:read']);
      const reader = await connect(key);
      const readable = (await reader.listTools()).tools.map((t) => t.name);
      assert.deepEqual(readable.filter((n) => FEED_TOOLS.includes(n) || SERIES_TOOLS.includes(n)).sort(), ['get_series', 'list_feeds', 'list_series']);
      const refused = await callTool(reader, 'add_feed', { url: site.publish('/reader.xml', {}), channels: [channel] });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /may not use add_feed: it needs the scope feeds:write/);
      assert.deepEqual(await herald.services.feeds.list(account.id), [], 'nothing was subscribed');
    });

    it('subscribes to a feed, reads it now (recording, then posting what is new), pauses, resumes and ends it', async () => {
      const url = site.publish('/blog.xml', { title: 'The blog', items: [{ guid: 'old-1', title: 'Old post', link: 'http://blog.example/old-1' }] });
      const made = await toolResult(agent, 'add_feed', { url, channels: [channel], template: 'New: {title} {link}', name: 'Blog' });
      assert.equal(made.state, 'waiting');
      assert.equal(made.mode, 'now', "the contract's default mode");

      const first = await toolResult(agent, 'check_feed_now', { id: made.id });
      assert.equal(first.outcome, 'recorded');
      assert.deepEqual(first.posts, [], 'what the feed had is not posted');
      site.add('/blog.xml', { guid: 'fresh-1', title: 'Fresh post', link: 'http://blog.example/fresh-1' });
      const second = await toolResult(agent, 'check_feed_now', { id: made.id });
      assert.equal(second.outcome, 'posted');
      assert.equal(second.newItems, 1);
      assert.equal(second.posts.length, 1);
      const post = await toolResult(agent, 'get_post', { id: second.posts[0] });
      assert.equal(post.thread[0].content, 'New: Fresh post http://blog.example/fresh-1');

      const listed = await account.callUntyped('GET', '/feeds');
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.map((f: any) => [f.id, f.url, f.name, f.title, f.state, f.channels, f.template]),
        [[made.id, url, 'Blog', 'The blog', 'ok', [channel], 'New: {title} {link}']],
      );
      assert.deepEqual((await toolResult(agent, 'list_feeds')).feeds, listed.body);

      const paused = await toolResult(agent, 'update_feed', { id: made.id, paused: true });
      assert.equal(paused.state, 'paused');
      assert.equal(paused.template, 'New: {title} {link}', 'what was not sent is kept');
      const refused = await callTool(agent, 'check_feed_now', { id: made.id });
      assert.equal(refused.isError, true);
      assert.equal(refused.data.error.code, 'feed_paused');
      assert.match(refused.text, /update_feed \("paused": false\)/);
      assert.equal((await toolResult(agent, 'update_feed', { id: made.id, paused: false, mode: 'draft' })).state, 'ok');
      assert.equal((await account.callUntyped('GET', `/feeds/${made.id}`)).body.mode, 'draft');

      assert.deepEqual(await toolResult(agent, 'delete_feed', { id: made.id }), { deleted: true, id: made.id });
      assert.deepEqual((await account.callUntyped('GET', '/feeds')).body, []);
      assert.equal((await account.callUntyped('GET', `/posts/${second.posts[0]}`)).status, 200, 'the posts it made stay');
      const gone = await callTool(agent, 'check_feed_now', { id: made.id });
      assert.equal(gone.data.error.code, 'not_found');
      assert.match(gone.text, /list_feeds the feed ids/);
    });

    it('answers a bad feed subscription with a tool error naming the field, and subscribes nothing', async () => {
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [{ url: 'http://10.0.0.1/feed.xml', channels: [channel] }, 'url', /^url: /],
        [{ url: 'ftp://example.com/feed.xml', channels: [channel] }, 'url', /url: must be an http\(s\) URL/],
        [{ url: site.publish('/bad.xml', {}), channels: ['no-such-channel'] }, 'channels.0', /channels\.0: channel "no-such-channel" does not exist/],
        [{ url: site.publish('/bad.xml', {}), channels: [channel], template: '{headline}' }, 'template', /unknown placeholder \{headline\}/],
      ];
      for (const [args, path, text] of cases) {
        const answer = await callTool(agent, 'add_feed', args);
        assert.equal(answer.isError, true, JSON.stringify(args));
        assert.match(answer.text, text);
        assert.ok(
          answer.data.error.errors.some((e: { path: string }) => e.path === path),
          `names ${path}: ${JSON.stringify(answer.data.error)}`,
        );
      }
      const privateAddress = await callTool(agent, 'add_feed', cases[0][0]);
      assert.equal(privateAddress.data.error.code, 'url_refused');
      assert.deepEqual((await toolResult(agent, 'list_feeds')).feeds, []);
    });

    it('creates a weekly series whose occurrences become posts, changes its post and stops it', async () => {
      // Tomorrow at this minute, weekly, three times: two occurrences fall within the 14 days made ahead, the third after.
      const start = new Date(Math.ceil((Date.now() + DAY) / 60_000) * 60_000);
      const times = [0, 7, 14].map((weeks) => new Date(start.getTime() + weeks * DAY).toISOString());
      const created = await toolResult(agent, 'create_series', {
        name: 'Weekly tip',
        repeat: { start: start.toISOString(), unit: 'week', count: 3 },
        posts: [entry(channel, ['Tip of the week'])],
      });
      assert.equal(created.state, 'active');
      assert.deepEqual(created.upcoming, times);
      assert.deepEqual(
        (await toolResult(agent, 'list_series')).series.map((s: any) => s.id),
        [created.id],
      );

      await extender.run(Date.now());
      const occurrences = await occurrencePosts(created.id);
      assert.deepEqual(
        occurrences.map((p) => [p.publishDate, p.content, p.state]),
        times.slice(0, 2).map((t) => [t, 'Tip of the week', 'QUEUE']),
      );
      const detail = (await account.callUntyped('GET', `/series/${created.id}`)).body;
      assert.deepEqual(
        detail.occurrences.map((o: any) => o.posts[0].id),
        occurrences.map((p) => p.id),
      );
      assert.deepEqual((await toolResult(agent, 'get_series', { id: created.id })).occurrences, detail.occurrences);

      // What is not sent stays: null removes the name and keeps the post; then a new post keeps the rule and no name.
      const renamed = await toolResult(agent, 'update_series', { id: created.id, name: null });
      assert.equal(renamed.name, null);
      assert.deepEqual(renamed.posts, created.posts);
      const updated = await toolResult(agent, 'update_series', { id: created.id, posts: [entry(channel, ['Tip of the week, revised'])] });
      assert.equal(updated.name, null);
      assert.deepEqual(updated.repeat, created.repeat);
      assert.equal(updated.posts[0].value[0].content, 'Tip of the week, revised');
      await extender.run(Date.now());
      const remade = await occurrencePosts(created.id);
      assert.deepEqual(
        remade.map((p) => [p.publishDate, p.content]),
        times.slice(0, 2).map((t) => [t, 'Tip of the week, revised']),
      );
      assert.equal((await account.callUntyped('GET', `/posts/${occurrences[0].id}`)).status, 404, 'the old occurrences were replaced');

      const stopped = await toolResult(agent, 'delete_series', { id: created.id });
      assert.equal(stopped.deleted, true);
      assert.deepEqual([...stopped.removedPosts].sort(), remade.map((p) => p.id).sort());
      assert.match(stopped.kept, /Published occurrences stay/);
      assert.deepEqual(await occurrencePosts(created.id), []);
      assert.equal((await account.callUntyped('GET', `/series/${created.id}`)).status, 404);
    });

    it('refuses a bad rule naming the field, and an idempotency_key makes create_series safe to repeat', async () => {
      const start = new Date(Date.now() + 2 * DAY).toISOString();
      const bad = await callTool(agent, 'create_series', {
        repeat: { start, unit: 'day', timezone: 'Mars/Olympus' },
        posts: [entry(channel, ['Daily'])],
      });
      assert.equal(bad.isError, true);
      assert.match(bad.text, /repeat\.timezone: must be an IANA time zone/);

      const before = (await toolResult(agent, 'list_series')).series.length;
      const args = { repeat: { start, unit: 'day', count: 2 }, posts: [entry(channel, ['Only one series'])], idempotency_key: crypto.randomUUID() };
      const first = await toolResult(agent, 'create_series', args);
      const repeat = await toolResult(agent, 'create_series', args);
      assert.equal(repeat.id, first.id);
      assert.equal(repeat.replayed, true);
      assert.equal((await toolResult(agent, 'list_series')).series.length, before + 1, 'the repeat created nothing');
      await toolResult(agent, 'delete_series', { id: first.id });
    });

    it('create_series counts against the hourly posting allowance POST /posts and POST /series count against', async () => {
      // An account of its own, so the other tests' series leave its allowance whole.
      const busy = await herald.newAccount('Busy account');
      const hook = (await addWebhookChannel(busy)).id;
      const busyAgent = await connect(busy.key);
      const args = { repeat: { start: new Date(Date.now() + DAY).toISOString(), unit: 'day', count: 2 }, posts: [entry(hook, ['Counted'])] };
      for (let i = 0; i < POSTS_PER_HOUR - 1; i++) await toolResult(busyAgent, 'create_series', args);
      // A call refused for its arguments is not counted, as on the public API.
      assert.equal((await callTool(busyAgent, 'create_series', { ...args, posts: [entry('no-such-channel', ['x'])] })).isError, true);
      assert.equal((await busy.callUntyped('POST', '/posts', scheduledPost(hook, 'via HTTP'))).status, 201);
      const refused = await callTool(busyAgent, 'create_series', args);
      assert.equal(refused.isError, true);
      assert.equal(refused.data.error.code, 'rate_limited');
      assert.match(refused.text, new RegExp(`at most ${POSTS_PER_HOUR} requests per 1 hour\\(s\\)`));
      assert.equal((await busy.callUntyped('POST', '/series', { shortLink: false, tags: [], ...args })).status, 429);
      assert.equal((await toolResult(busyAgent, 'list_series')).series.length, POSTS_PER_HOUR - 1, 'the refused call made no series');
    });

    it('a read-only key is refused create_series with the scope it lacks, and creates nothing', async () => {
      const { key } = await herald.services.accounts.createKey(account.id, 'series reader', ['posts:read', 'channels:read']);
      const reader = await connect(key);
      const refused = await callTool(reader, 'create_series', {
        repeat: { start: new Date(Date.now() + DAY).toISOString(), unit: 'day' },
        posts: [entry(channel, ['Not allowed'])],
      });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /may not use create_series: it needs the scope posts:write, and it has posts:read, channels:read/);
      assert.equal(refused.data.error.code, 'insufficient_scope');
      assert.deepEqual((await toolResult(reader, 'list_series')).series, []);
    });
  });
}
