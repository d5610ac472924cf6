/**
 * Approvals on every path that creates or re-queues posts on a member's behalf,
 * as one table: with "Posts by members need approval" on, each path (the web
 * session, the member's OAuth token, their MCP session; posts, CSV, series,
 * status, moves, edits, settings, feeds) leaves the member's post a DRAFT with
 * approval "pending" and the member as its author, and the engine never sends
 * it: a post of an API key due at the same time is published first, and the
 * webhook receiver never gets the waiting one. Beside each kind, a control row
 * of an API key (which acts for the account) goes out, so the table cannot pass
 * if everything were held back (an MCP tool that calls the domain its route
 * calls shares the route's control; create_post, which states the post's state
 * itself, has its own).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { untypedCaller, eventually, startHerald, type UntypedResult, type UntypedCaller, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { entry, postBody } from '../helpers/api-fixtures.ts';
import { mcpAgents, toolResult } from '../helpers/mcp-client.ts';
import { oauthAccessToken } from '../helpers/oauth-token.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startFeedServer, type FeedServer } from '../fakes/feed-server.ts';
import { WebClient } from '../accounts/web-client.ts';
import { FeedPoller } from '../../src/scheduler/feed-poller.ts';
import { teardown } from '../helpers/teardown.ts';

const PASSWORD = 'correct horse battery';
const DAY = 86_400_000;
/** How far ahead a series starts: long enough for the engine to make its first occurrence before it is due. */
const SERIES_LEAD_MS = 2_000;
/** The longest wait for the engine (publishing, making occurrences). */
const ENGINE_MS = 15_000;

/** A row of the table: a way a post comes to be queued (or to wait) on someone's behalf. */
interface Path {
  name: string;
  /** Whose the posts are (author_id): the member's, or nobody's for an API key's. */
  author: 'member' | 'key';
  /** Whether they wait for approval; the API key's control rows (and a retry of approved content) go out. */
  waits: boolean;
  /** Makes the post(s) by this path; resolves to their root post ids. */
  make: () => Promise<string[]>;
}

const iso = (at: number) => new Date(at).toISOString();

for (const store of await testStores()) {
  describe(`approvals on every path that posts for a member (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let site: FeedServer;
    let poller: FeedPoller;
    let ownerWeb: WebClient;
    let memberWeb: WebClient;
    /** The public API with the owner's and the member's web sessions, the member's OAuth token, and an API key. */
    let owner: UntypedCaller;
    let member: UntypedCaller;
    let memberToken: UntypedCaller;
    let key: UntypedCaller;
    let memberAgent: Client;
    let keyAgent: Client;
    let memberId: string;
    let channel: string;
    const { connect, closeAll } = mcpAgents(() => herald.url);

    // Helpers -------------------------------------------------------------------

    let serial = 0;
    /** A text no other post of the run has, so the receiver's deliveries tell the posts apart. */
    const text = (what: string) => `${what} (${++serial})`;

    /** The public API as the web application calls it: a person's session cookie and CSRF token. */
    const session =
      (person: WebClient): UntypedCaller =>
      (method, route, body, headers = {}) => {
        const cookie = [...person.jar].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('; ');
        return untypedCaller(`${herald.url}/api/app/public/v1`)(method, route, body, { cookie, 'x-csrf-token': person.csrf ?? '', ...headers });
      };

    const row = (id: string) => herald.services.store.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const sentToReceiver = (id: string, content: string) => receiver.deliveries.some((d) => d.json?.post?.id === id || d.json?.post?.content === content);

    function ok(answer: UntypedResult, status = 200) {
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      return answer.body;
    }
    const rootIds = (answer: UntypedResult) => ok(answer, 201).map((p: { postId: string }) => p.postId) as string[];

    const nowBody = (content: string) => postBody('now', [entry(channel, [content])], { date: undefined });
    const atBody = (type: Parameters<typeof postBody>[0], content: string, at: number) => postBody(type, [entry(channel, [content])], { date: iso(at) });
    const mcpPost = (content: string) => ({ when: 'now', posts: [{ integration: { id: channel }, value: [{ content }] }] });
    const csvFile = (content: string) => `date,type,channels,content\n,now,${channel},${content}\n`;
    const seriesBody = (content: string, start: number) => ({
      repeat: { start: iso(start), unit: 'day', count: 1 },
      shortLink: false,
      tags: [],
      posts: [entry(channel, [content])],
    });

    /** A post scheduled a day ahead by `as`; its id. */
    const scheduled = async (as: UntypedCaller, content: string) => rootIds(await as('POST', '/posts', atBody('schedule', content, Date.now() + DAY)))[0];

    /** A member's post, approved by the owner: queued a day ahead. */
    async function approved(content: string): Promise<string> {
      const id = await scheduled(member, content);
      assert.equal(ok(await owner('POST', `/posts/${id}/approve`, {})).postState, 'QUEUE');
      return id;
    }

    /** The calendar's drag (a web application route): moves a post to now. */
    async function moveToNow(person: WebClient, id: string): Promise<void> {
      const moved = await person.app('PUT', `/posts/${id}/date`, { date: iso(Date.now()) });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
    }

    /** The root posts of a series' occurrences with `content`, once the engine has made them. */
    function occurrences(seriesId: string, content: string): Promise<string[]> {
      return eventually(
        async () => {
          const rows = await herald.services.store.db
            .selectFrom('posts')
            .select('id')
            .where('series_id', '=', seriesId)
            .where('thread_index', '=', 0)
            .where('content', '=', content)
            .where('deleted_at', 'is', null)
            .execute();
          return rows.length > 0 ? rows.map((r) => r.id) : undefined;
        },
        ENGINE_MS,
        `the occurrence "${content}"`,
      );
    }

    /** A series starting shortly, made with `create` (answering the series); its first occurrence. */
    async function seriesOccurrence(create: (body: unknown) => Promise<{ id: string }>, content: string): Promise<string[]> {
      const made = await create(seriesBody(content, Date.now() + SERIES_LEAD_MS));
      return occurrences(made.id, content);
    }

    /** A series of the API key a day ahead (its occurrence made and queued), then written again by `as` to start shortly. */
    async function editedSeries(as: UntypedCaller, content: string): Promise<string[]> {
      const first = text('Series of the key');
      const made = ok(await key('POST', '/series', seriesBody(first, Date.now() + DAY)), 201);
      await occurrences(made.id, first);
      ok(await as('PUT', `/series/${made.id}`, seriesBody(content, Date.now() + SERIES_LEAD_MS)));
      return occurrences(made.id, content);
    }

    /**
     * A feed subscribed with `subscribe` (answering its id) in mode "now": the
     * first read only records the item there, then an item is published and the
     * second read posts it. The feed reader is driven with its clock, as the
     * engine's would run at the feed's next read. The feed is ended after.
     */
    async function feedPosts(subscribe: (url: string) => Promise<string>, title: string): Promise<string[]> {
      const path = `/feed-${++serial}.xml`;
      const url = site.publish(path, { items: [{ guid: 'old', title: 'Old news', link: 'http://blog.example/old' }] });
      const feedId = await subscribe(url);
      const items = () => herald.services.store.db.selectFrom('feed_items').selectAll().where('feed_id', '=', feedId).execute();
      await poller.run(Date.now());
      assert.deepEqual(
        (await items()).map((i) => [i.item_key, i.post_ids]),
        [['old', null]],
        'the first read only records',
      );
      site.add(path, { guid: 'new', title, link: `http://blog.example/${serial}` });
      const feed = await herald.services.store.db.selectFrom('feeds').select('next_fetch_at').where('id', '=', feedId).executeTakeFirstOrThrow();
      await poller.run(Math.max(Date.now(), Number(feed.next_fetch_at)));
      const posted = (await items()).find((i) => i.item_key === 'new');
      assert.ok(posted?.post_ids, `the new item was posted: ${JSON.stringify(await items())}`);
      // Ended (its posts stay), so the next rows' reads do not read it again.
      ok(await key('DELETE', `/feeds/${feedId}`));
      return JSON.parse(posted.post_ids) as string[];
    }
    const feedBody = (url: string) => ({ url, channels: [channel], mode: 'now', template: '{title}' });

    /** The engine has run what was due with `due`: a post of the API key due then is published. */
    async function engineRanUntil(due: number): Promise<void> {
      assert.ok(due < Date.now() + 10_000, `the row's posts are due soon, so the engine would have sent them: due ${iso(due)}`);
      const body = due > Date.now() ? atBody('schedule', text('Key post due then'), due) : nowBody(text('Key post due now'));
      const [id] = rootIds(await key('POST', '/posts', body));
      await eventually(async () => ((await row(id)).state === 'PUBLISHED' ? true : undefined), ENGINE_MS, 'the key post due at the same time to publish');
    }

    // Setup ---------------------------------------------------------------------

    before(async () => {
      receiver = await startWebhookReceiver();
      site = await startFeedServer();
      herald = await startHerald(store, {
        // The engine publishes and makes occurrences; feeds are read only when the test says (FeedPoller.run).
        engine: { pollMs: 100, feedLookEveryMs: 3_600_000 },
        env: { HERALD_POSTS_PER_HOUR: '1000', HERALD_FEED_POLL_SECONDS: '1' },
      });
      poller = new FeedPoller(herald.services, 'test-reader');
      ownerWeb = new WebClient(herald.url);
      await ownerWeb.signUp('owner@example.com', PASSWORD, { name: 'Olivia Owner' });
      const invited = await ownerWeb.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
      memberWeb = new WebClient(herald.url);
      const joined = await memberWeb.signUp('member@example.com', PASSWORD, { name: 'Max Member', invitation: invited.body.token });
      memberId = joined.body.user.id;
      owner = session(ownerWeb);
      member = session(memberWeb);
      const keyValue = (await herald.services.accounts.createKey(joined.body.account.id, 'script')).key;
      key = untypedCaller(herald.api, keyValue);
      channel = ok(await key('POST', '/integrations', { identifier: 'webhook', name: 'Receiver', credentials: { url: receiver.url } }), 201).id;
      ok(await owner('PUT', '/approval-settings', { membersNeedApproval: true }));
      const token = await oauthAccessToken(herald.url, ownerWeb, memberWeb, 'channels:read posts:read posts:write feeds:read feeds:write');
      memberToken = untypedCaller(herald.api, `Bearer ${token}`);
      memberAgent = await connect(`Bearer ${token}`);
      keyAgent = await connect(keyValue);
    });
    after(() =>
      teardown(
        () => closeAll(),
        () => herald?.close(),
        () => receiver?.close(),
        () => site?.close(),
      ),
    );

    // The table -----------------------------------------------------------------

    const paths: Path[] = [
      {
        name: 'POST /posts (web session)',
        author: 'member',
        waits: true,
        make: async () => rootIds(await member('POST', '/posts', nowBody(text('Member, web session')))),
      },
      {
        name: 'control: POST /posts (API key)',
        author: 'key',
        waits: false,
        make: async () => rootIds(await key('POST', '/posts', nowBody(text('Key, POST /posts')))),
      },
      {
        name: "POST /posts with an application's OAuth token for the member",
        author: 'member',
        waits: true,
        make: async () => rootIds(await memberToken('POST', '/posts', nowBody(text('Member, OAuth token')))),
      },
      {
        name: 'CSV import (web session)',
        author: 'member',
        waits: true,
        make: async () =>
          ok(await member('POST', '/posts/import', csvFile(text('Member CSV row')), { 'content-type': 'text/csv' }), 201).created.map((c: any) => c.postId),
      },
      {
        name: 'control: CSV import (API key)',
        author: 'key',
        waits: false,
        make: async () =>
          ok(await key('POST', '/posts/import', csvFile(text('Key CSV row')), { 'content-type': 'text/csv' }), 201).created.map((c: any) => c.postId),
      },
      {
        name: 'a repeating series, its first occurrence (web session)',
        author: 'member',
        waits: true,
        make: () => seriesOccurrence(async (body) => ok(await member('POST', '/series', body), 201), text('Member series')),
      },
      {
        name: 'control: a repeating series (API key)',
        author: 'key',
        waits: false,
        make: () => seriesOccurrence(async (body) => ok(await key('POST', '/series', body), 201), text('Key series')),
      },
      {
        name: "the API key's series written again by the member (PUT /series)",
        author: 'member',
        waits: true,
        make: () => editedSeries(member, text('Series rewritten by the member')),
      },
      {
        name: 'control: the series written again by the API key',
        author: 'key',
        waits: false,
        make: () => editedSeries(key, text('Series rewritten by the key')),
      },
      {
        name: "the member's draft moved to the queue (PUT /posts/{id}/status)",
        author: 'member',
        waits: true,
        make: async () => {
          const [id] = rootIds(await member('POST', '/posts', atBody('draft', text('Member draft'), Date.now())));
          assert.equal(ok(await member('PUT', `/posts/${id}/status`, { status: 'schedule' })).state, 'DRAFT');
          return [id];
        },
      },
      {
        name: "control: the API key's draft moved to the queue",
        author: 'key',
        waits: false,
        make: async () => {
          const [id] = rootIds(await key('POST', '/posts', atBody('draft', text('Key draft'), Date.now())));
          assert.equal(ok(await key('PUT', `/posts/${id}/status`, { status: 'schedule' })).state, 'QUEUE');
          return [id];
        },
      },
      {
        name: "the member's waiting post moved to now on the calendar (PUT /api/app/posts/{id}/date)",
        author: 'member',
        waits: true,
        make: async () => {
          const id = await scheduled(member, text('Member post moved'));
          await moveToNow(memberWeb, id);
          return [id];
        },
      },
      {
        name: "control: the API key's queued post moved to now on the calendar (by the owner)",
        author: 'key',
        waits: false,
        make: async () => {
          const id = await scheduled(key, text('Key post moved'));
          await moveToNow(ownerWeb, id);
          return [id];
        },
      },
      {
        name: "the member's approved post edited by the member (POST /posts type update, now)",
        author: 'member',
        waits: true,
        make: async () => {
          const { group_id: group } = await row(await approved(text('Approved words')));
          const body = postBody('update', [entry(channel, [text('Changed words')], { group })], { date: iso(Date.now()) });
          return rootIds(await member('POST', '/posts', body));
        },
      },
      {
        name: "control: the API key's queued post edited by the key",
        author: 'key',
        waits: false,
        make: async () => {
          const { group_id: group } = await row(await scheduled(key, text('Key words')));
          const body = postBody('update', [entry(channel, [text('Key changed words')], { group })], { date: iso(Date.now()) });
          return rootIds(await key('POST', '/posts', body));
        },
      },
      {
        name: "the member's approved post's settings changed by the member (PUT /posts/{id}/settings), then moved to now",
        author: 'member',
        waits: true,
        make: async () => {
          const id = await approved(text('Approved with settings'));
          ok(await member('PUT', `/posts/${id}/settings`, { settings: { campaign: 'unapproved' } }));
          await moveToNow(memberWeb, id);
          return [id];
        },
      },
      {
        name: "control: the API key's queued post's settings changed by the key, then moved to now",
        author: 'key',
        waits: false,
        make: async () => {
          const id = await scheduled(key, text('Key post with settings'));
          ok(await key('PUT', `/posts/${id}/settings`, { settings: { campaign: 'key' } }));
          await moveToNow(ownerWeb, id);
          return [id];
        },
      },
      {
        // What goes out is what was approved, unchanged: a retry re-sends it and asks nothing.
        name: "retry of the member's approved post that failed (POST /posts/{id}/retry, web session): re-sends what was approved",
        author: 'member',
        waits: false,
        make: async () => {
          const id = await approved(text('Approved, fails once'));
          let refused = false;
          receiver.respond((d) => {
            if (d.json?.post?.id !== id || refused) return undefined;
            refused = true;
            return { status: 400, body: { error: 'not this time' } };
          });
          await moveToNow(ownerWeb, id);
          await eventually(async () => ((await row(id)).state === 'ERROR' ? true : undefined), ENGINE_MS, 'the post to fail');
          receiver.respond(() => undefined);
          assert.equal(ok(await member('POST', `/posts/${id}/retry`)).state, 'QUEUE');
          return [id];
        },
      },
      {
        name: 'MCP create_post with the member’s OAuth token',
        author: 'member',
        waits: true,
        make: async () => (await toolResult(memberAgent, 'create_post', mcpPost(text('Member agent post')))).posts.map((p: any) => p.postId),
      },
      {
        name: 'control: MCP create_post with the API key',
        author: 'key',
        waits: false,
        make: async () => (await toolResult(keyAgent, 'create_post', mcpPost(text('Key agent post')))).posts.map((p: any) => p.postId),
      },
      {
        name: 'MCP import_posts_csv with the member’s OAuth token',
        author: 'member',
        waits: true,
        make: async () =>
          (await toolResult(memberAgent, 'import_posts_csv', { csv: csvFile(text('Member agent CSV row')), dry_run: false })).created.map((c: any) => c.postId),
      },
      {
        name: 'MCP create_series with the member’s OAuth token, its first occurrence',
        author: 'member',
        waits: true,
        make: () => seriesOccurrence((body) => toolResult(memberAgent, 'create_series', body as Record<string, unknown>), text('Member agent series')),
      },
      {
        name: 'a feed in mode "now" added by the member (POST /feeds, web session)',
        author: 'member',
        waits: true,
        make: () => feedPosts(async (url) => ok(await member('POST', '/feeds', feedBody(url)), 201).id, text('Feed item of the member')),
      },
      {
        name: 'control: a feed in mode "now" added by the API key',
        author: 'key',
        waits: false,
        make: () => feedPosts(async (url) => ok(await key('POST', '/feeds', feedBody(url)), 201).id, text('Feed item of the key')),
      },
      {
        name: "the API key's feed changed by the member (PATCH /feeds/{id}, web session)",
        author: 'member',
        waits: true,
        make: () =>
          feedPosts(async (url) => {
            const { id } = ok(await key('POST', '/feeds', feedBody(url)), 201);
            ok(await member('PATCH', `/feeds/${id}`, { template: '{title}!' }));
            return id;
          }, text('Feed item after the member changed it')),
      },
      {
        name: 'a feed in mode "now" added by MCP add_feed with the member’s OAuth token',
        author: 'member',
        waits: true,
        make: () => feedPosts(async (url) => (await toolResult(memberAgent, 'add_feed', feedBody(url))).id, text('Feed item of the member agent')),
      },
    ];

    for (const path of paths) {
      it(`${path.name}: ${path.waits ? 'waits for approval, never sent' : 'goes out'}`, async () => {
        const ids = await path.make();
        assert.ok(ids.length > 0, 'the path made a post');
        const author = path.author === 'member' ? memberId : null;
        if (path.waits) {
          const posts = await Promise.all(ids.map(row));
          for (const post of posts) {
            assert.deepEqual([post.thread_index, post.state, post.approval, post.author_id], [0, 'DRAFT', 'pending', author], `post ${post.id}`);
          }
          await engineRanUntil(Math.max(...posts.map((p) => Number(p.publish_at))));
          for (const post of posts) {
            const after = await row(post.id);
            assert.deepEqual([after.state, after.approval], ['DRAFT', 'pending'], 'it still waits');
            assert.ok(!sentToReceiver(post.id, post.content), `"${post.content}" was never sent`);
          }
        } else {
          for (const id of ids) {
            const post = await eventually(async () => ((await row(id)).state === 'PUBLISHED' ? row(id) : undefined), ENGINE_MS, `post ${id} to publish`);
            assert.deepEqual([post.thread_index, post.author_id], [0, author]);
            assert.notEqual(post.approval, 'pending');
            assert.ok(sentToReceiver(post.id, post.content), `"${post.content}" was sent`);
          }
        }
      });
    }
  });
}
