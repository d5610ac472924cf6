/**
 * The MCP server's review and CSV tools as agents use them, with the SDK's own
 * client: in an account whose members' posts need approval, a member's agent
 * (an OAuth token of theirs) creates posts that wait, and the owner's agent lists,
 * approves, returns them with a comment and shares preview links; a key's agent
 * checks, imports and exports CSV files. Each tool keeps its public route's rules.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { stringify } from 'csv-stringify/sync';
import { untypedCaller, startHerald, type TestAccount, type TestHerald, testAccount } from '../helpers/herald.ts';
import { addWebhookChannel, countRows } from '../helpers/api-fixtures.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { callTool as call, toolResult as ok, mcpAgents } from '../helpers/mcp-client.ts';
import { oauthAccessToken } from '../helpers/oauth-token.ts';
import { WebClient } from '../accounts/web-client.ts';
import { EXPORT_COLUMNS } from '../../src/contract/index.ts';
import { teardown } from '../helpers/teardown.ts';

const HOUR = 3_600_000;
/** Whole hours ahead, so dates read back from a CSV file compare equal. */
const hoursAhead = (hours: number) => new Date((Math.floor(Date.now() / HOUR) + hours) * HOUR).toISOString();
const csv = (rows: string[][]) => stringify([['date', 'type', 'channels', 'group', 'content', 'delay'], ...rows]);

for (const store of await testStores()) {
  describe(`MCP review and CSV tools (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let channel: string;
    /** Agents of the owner and of a member (OAuth tokens, so they act as those people), and of an API key. */
    let ownerAgent: Client;
    let memberAgent: Client;
    let keyAgent: Client;
    const { connect, closeAll } = mcpAgents(() => herald.url);

    const postArgs = (content: string, date = hoursAhead(48)) => ({ when: 'at', date, posts: [{ integration: { id: channel }, value: [{ content }] }] });
    const pendingIds = async () =>
      (await ok(ownerAgent, 'list_pending_approvals', { startDate: hoursAhead(-24), endDate: hoursAhead(24 * 30) })).posts.map((p: any) => p.id);

    before(async () => {
      herald = await startHerald(store, { env: { HERALD_POSTS_PER_HOUR: '1000' } });
      const owner = new WebClient(herald.url);
      const accountId = (await owner.signUp('owner@example.com', undefined, { name: 'Olivia Owner' })).body.account.id;
      const invited = await owner.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
      const member = new WebClient(herald.url);
      await member.signUp('member@example.com', undefined, { name: 'Max Member', invitation: invited.body.token });
      const on = await owner.app('PUT', '/public/v1/approval-settings', { membersNeedApproval: true });
      assert.equal(on.status, 200, JSON.stringify(on.body));
      const { key } = await herald.services.accounts.createKey(accountId, 'script');
      account = testAccount(herald.api, accountId, key);
      channel = (await addWebhookChannel(account, { name: 'Newsroom' })).id;
      const scopes = 'channels:read posts:read posts:write';
      ownerAgent = await connect(`Bearer ${await oauthAccessToken(herald.url, owner, owner, scopes)}`);
      memberAgent = await connect(`Bearer ${await oauthAccessToken(herald.url, owner, member, scopes)}`);
      keyAgent = await connect(key);
    });
    after(() =>
      teardown(
        () => closeAll(),
        () => herald?.close(),
      ),
    );

    it("a member's create_post waits; the owner lists it as pending and approves it, which schedules it at its time", async () => {
      const date = hoursAhead(48);
      const [waiting] = (await ok(memberAgent, 'create_post', postArgs('Member writes', date))).posts;
      assert.deepEqual([waiting.state, waiting.approval], ['DRAFT', 'pending']);
      const [byOwner] = (await ok(ownerAgent, 'create_post', postArgs('Owner writes', date))).posts;
      assert.equal(byOwner.state, 'QUEUE', "an owner's post does not wait");

      const pending = await pendingIds();
      assert.ok(pending.includes(waiting.postId), 'the waiting post is listed');
      assert.ok(!pending.includes(byOwner.postId), 'a queued post is not');

      const approved = await ok(ownerAgent, 'approve_post', { id: waiting.postId, comment: 'Good to go' });
      assert.deepEqual([approved.state, approved.postState, approved.publishDate], ['approved', 'QUEUE', date]);
      assert.deepEqual(
        approved.history.map((h: any) => [h.action, h.by.name, h.comment]),
        [
          ['requested', 'Max Member', null],
          ['approved', 'Olivia Owner', 'Good to go'],
        ],
      );
      assert.equal((await ok(ownerAgent, 'get_post', { id: waiting.postId })).state, 'QUEUE');
      assert.ok(!(await pendingIds()).includes(waiting.postId), 'an approved post no longer waits');
      const again = await call(ownerAgent, 'approve_post', { id: waiting.postId });
      assert.equal(again.isError, true);
      assert.equal(again.data.error.code, 'not_pending');
    });

    it('a member may not approve or return a post: the tool error names the role it needs, and the post still waits', async () => {
      const [waiting] = (await ok(memberAgent, 'create_post', postArgs('Approve my own?'))).posts;
      for (const [tool, args] of [
        ['approve_post', { id: waiting.postId }],
        ['reject_post', { id: waiting.postId, comment: 'Nope' }],
      ] as const) {
        const refused = await call(memberAgent, tool, args);
        assert.equal(refused.isError, true, tool);
        assert.match(refused.text, /Your role \(member\) may not (approve|return) posts; it needs one of: owner, admin/);
        assert.equal(refused.data.error.code, 'forbidden');
      }
      assert.ok((await pendingIds()).includes(waiting.postId), "a member's refused verdict leaves the post waiting for approval");
    });

    it('reject_post returns a post with a comment its author reads through list_comments; add_comment joins the discussion', async () => {
      const [waiting] = (await ok(memberAgent, 'create_post', postArgs('Prices go up tomorrow'))).posts;
      const missing = await call(ownerAgent, 'reject_post', { id: waiting.postId });
      assert.equal(missing.isError, true);
      assert.match(missing.text, /comment: /);
      const returned = await ok(ownerAgent, 'reject_post', { id: waiting.postId, comment: 'Say which prices, please' });
      assert.deepEqual([returned.state, returned.postState], ['rejected', 'DRAFT']);
      assert.ok(!(await pendingIds()).includes(waiting.postId), 'a returned post is with its author, not waiting');

      const asked = await ok(memberAgent, 'add_comment', { id: waiting.postId, content: 'The coffee ones?' });
      assert.deepEqual([asked.content, asked.by.name, asked.own], ['The coffee ones?', 'Max Member', true]);
      const seen = await ok(memberAgent, 'list_comments', { id: waiting.postId });
      assert.equal(seen.approval.state, 'rejected');
      const decision = seen.approval.history.at(-1);
      assert.deepEqual([decision.action, decision.by.name, decision.comment], ['rejected', 'Olivia Owner', 'Say which prices, please']);
      assert.deepEqual(
        seen.comments.map((c: any) => [c.content, c.by.name]),
        [['The coffee ones?', 'Max Member']],
      );
    });

    it('a preview link made through MCP opens at /p/:token and shows the post', async () => {
      const [post] = (await ok(memberAgent, 'create_post', postArgs('Show the client'))).posts;
      const link = await ok(ownerAgent, 'create_preview_link', { id: post.postId, expiresInHours: 48 });
      assert.match(link.url, new RegExp(`^${herald.url}/p/hp_[A-Za-z0-9_-]{43}$`));
      assert.equal(Date.parse(link.expiresAt) - Date.parse(link.createdAt), 48 * HOUR);
      const page = await fetch(link.url);
      assert.equal(page.status, 200);
      const view = await untypedCaller(herald.url)('GET', `/api/preview/${link.url.split('/p/')[1]}`);
      assert.equal(view.status, 200, JSON.stringify(view.body));
      assert.deepEqual(
        view.body.post.items.map((i: any) => i.content),
        ['Show the client'],
      );
      const tooLong = await call(ownerAgent, 'create_preview_link', { id: post.postId, expiresInHours: 100_000 });
      assert.equal(tooLong.isError, true);
      assert.match(tooLong.text, /expiresInHours: /);
    });

    it('a CSV dry run answers each problem by line and column and creates nothing; the real import of that file is refused whole', async () => {
      const file = csv([
        [hoursAhead(72), 'schedule', 'Newsroom', '', 'A good row', ''],
        ['next tuesday', 'schedule', 'Newsroom', '', 'A bad date', ''],
        [hoursAhead(72), 'schedule', 'No such channel', '', 'A bad channel', ''],
      ]);
      const before = await countRows(herald, 'posts', account.id);
      const report = await ok(keyAgent, 'import_posts_csv', { csv: file, dry_run: true });
      assert.equal(report.valid, false);
      assert.deepEqual(
        report.problems.map((p: any) => [p.line, p.column]),
        [
          [3, 'date'],
          [4, 'channels'],
        ],
      );
      assert.deepEqual(report.created, []);
      const refused = await call(keyAgent, 'import_posts_csv', { csv: file, dry_run: false });
      assert.equal(refused.isError, true);
      assert.equal(refused.data.error.code, 'invalid_csv');
      assert.match(refused.text, /The file has 2 problem\(s\); nothing was imported\. line 3, date: .*; line 4, channels: /);
      assert.deepEqual(
        refused.data.error.errors.map((e: any) => e.path),
        ['line.3.date', 'line.4.channels'],
      );
      assert.equal(await countRows(herald, 'posts', account.id), before);
      // A file larger than one MCP request takes (HERALD_BODY_LIMIT, 1 MiB here) is refused with the request, as the description says.
      const large = `channels,content\n${'Newsroom,too much\n'.repeat(60_000)}`;
      await assert.rejects(call(keyAgent, 'import_posts_csv', { csv: large, dry_run: true }), /413.*body_too_large/);
    });

    const imported = [
      [hoursAhead(96), 'schedule', 'Newsroom', 'launch', 'Launch day', ''],
      ['', '', '', 'launch', 'More at noon', '180'],
      [hoursAhead(120), 'draft', 'Newsroom', '', 'An idea to work on', ''],
    ];

    it('import_posts_csv creates the posts all at once, and the same file again creates nothing new', async () => {
      const before = await countRows(herald, 'posts', account.id);
      const first = await ok(keyAgent, 'import_posts_csv', { csv: csv(imported), dry_run: false });
      assert.deepEqual([first.valid, first.posts, first.problems], [true, 2, []]);
      assert.deepEqual(
        first.created.map((c: any) => [c.line, c.integration]),
        [
          [2, channel],
          [4, channel],
        ],
      );
      const launch = await ok(keyAgent, 'get_post', { id: first.created[0].postId });
      assert.deepEqual(
        launch.thread.map((t: any) => [t.content, t.delay]),
        [
          ['Launch day', 0],
          ['More at noon', 180],
        ],
      );
      assert.equal(launch.creationMethod, 'csv');
      assert.equal(await countRows(herald, 'posts', account.id), before + 3, 'two posts, one with a reply');
      const again = await ok(keyAgent, 'import_posts_csv', { csv: csv(imported), dry_run: false });
      assert.deepEqual([again.valid, again.alreadyImported, again.created], [true, 2, []]);
      assert.equal(await countRows(herald, 'posts', account.id), before + 3);
    });

    it('export_posts_csv answers CSV that import_posts_csv reads back into an account with a channel of the same name', async () => {
      const range = { startDate: hoursAhead(90), endDate: hoursAhead(130) };
      const exported = await ok(keyAgent, 'export_posts_csv', range);
      assert.equal(exported.rows, 3);
      assert.equal(exported.csv.split('\n')[0], EXPORT_COLUMNS.join(','));
      assert.match(exported.csv, /Launch day/);
      // In a zone, the same instants are written as local times with their offset.
      const zoned = await ok(keyAgent, 'export_posts_csv', { ...range, timezone: 'America/New_York' });
      const dates = (text: string) =>
        text
          .split('\n')
          .slice(1)
          .map((line) => line.split(',')[0])
          .filter(Boolean);
      assert.deepEqual(
        dates(zoned.csv).map((d) => new Date(d).getTime()),
        dates(exported.csv).map((d) => new Date(d).getTime()),
      );
      for (const date of dates(zoned.csv)) assert.match(date, /-0[45]:00$/);

      const other = await herald.newAccount('Copy');
      const copy = await addWebhookChannel(other, { name: 'Newsroom' });
      const otherAgent = await connect(other.key);
      const read = await ok(otherAgent, 'import_posts_csv', { csv: exported.csv, dry_run: false });
      assert.deepEqual([read.valid, read.posts, read.problems], [true, 2, []]);
      const { posts } = await ok(otherAgent, 'list_posts', range);
      assert.deepEqual(
        posts.map((p: any) => [p.content, p.publishDate, p.state, p.integration.id]),
        [
          ['Launch day', imported[0][0], 'QUEUE', copy.id],
          ['An idea to work on', imported[2][0], 'DRAFT', copy.id],
        ],
      );
      const thread = await ok(otherAgent, 'get_post', { id: posts[0].id });
      assert.deepEqual(
        thread.thread.map((t: any) => t.content),
        ['Launch day', 'More at noon'],
      );
    });

    it('a read-only key sees neither the import nor the approving tools, and is refused them naming the scope', async () => {
      const { key } = await herald.services.accounts.createKey(account.id, 'reader', ['posts:read', 'channels:read']);
      const reader = await connect(key);
      const names = (await reader.listTools()).tools.map((t) => t.name);
      for (const hidden of ['import_posts_csv', 'approve_post', 'reject_post', 'add_comment', 'create_preview_link']) {
        assert.ok(!names.includes(hidden), `${hidden} is not listed`);
      }
      for (const shown of ['list_pending_approvals', 'list_comments', 'export_posts_csv']) assert.ok(names.includes(shown), `${shown} is listed`);
      const before = await countRows(herald, 'posts', account.id);
      const refused = await call(reader, 'import_posts_csv', { csv: csv(imported.slice(2)), dry_run: false });
      assert.equal(refused.isError, true);
      assert.equal(refused.data.error.code, 'insufficient_scope');
      assert.match(refused.text, /needs the scope posts:write/);
      assert.equal((await call(reader, 'approve_post', { id: 'x' })).data.error.code, 'insufficient_scope');
      assert.equal(await countRows(herald, 'posts', account.id), before);
    });
  });
}
