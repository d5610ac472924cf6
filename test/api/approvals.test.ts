/**
 * Approvals, comments and preview links against a real Herald with its engine
 * and webhook dispatcher: a member's posts wait for an owner or admin, who
 * approves (the engine then publishes to a webhook channel) or returns them with
 * a comment; every decision is recorded and told to account webhooks and in
 * notifications; a preview link shows a post to a visitor without an account.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { untypedCaller, eventually, startHerald, type UntypedResult, type UntypedCaller, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { assertError, entry, postBody } from '../helpers/api-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { WebClient } from '../accounts/web-client.ts';
import { sha256 } from '../../src/lib/secrets.ts';
import { Herald, HeraldApiError } from '../../src/sdk/index.ts';
import { WRITE_WINDOW_MS, WRITES_PER_ADDRESS } from '../../src/api/preview.ts';
import { teardown } from '../helpers/teardown.ts';

const PASSWORD = 'correct horse battery';

/** A visitor's JSON POST sent from `localAddress` (a loopback address of its own), which Herald sees as the visitor's address. */
function postFrom(localAddress: string, url: string, body: unknown): Promise<UntypedResult> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) headers.set(name, String(value));
          const text = Buffer.concat(chunks).toString();
          resolve({ status: response.statusCode ?? 0, headers, body: text === '' ? undefined : JSON.parse(text) });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

for (const store of await testStores()) {
  describe(`approvals, comments and preview links (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let hooks: WebhookReceiver;
    let owner: WebClient;
    let member: WebClient;
    let key: UntypedCaller;
    let keyValue: string;
    let accountId: string;
    let channel: string;
    let ownerId: string;
    let memberId: string;

    /** The public API's routes as the web application reaches them with a person's session. */
    const as = (person: WebClient) => (method: string, path: string, body?: unknown) => person.app(method, `/public/v1${path}`, body);
    const schedule = (content: string, type: Parameters<typeof postBody>[0] = 'schedule', date = new Date(Date.now() + 86_400_000).toISOString()) =>
      postBody(type, [entry(channel, [content])], type === 'now' ? { date: undefined } : { date });
    const row = (id: string) => herald.services.store.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const events = (type: string, postId: string) => hooks.deliveries.filter((d) => d.json?.type === type && d.json.data.post.id === postId);
    const notices = async () => (await key('GET', '/notifications')).body.notifications.map((n: { content: string }) => n.content) as string[];

    async function create(person: WebClient | UntypedCaller, body: unknown): Promise<string> {
      const made = typeof person === 'function' ? await person('POST', '/posts', body) : await as(person)('POST', '/posts', body);
      assert.equal(made.status, 201, JSON.stringify(made.body));
      return made.body[0].postId;
    }

    before(async () => {
      receiver = await startWebhookReceiver();
      hooks = await startWebhookReceiver();
      herald = await startHerald(store, { engine: { pollMs: 100 }, webhooks: { pollMs: 100 }, env: { HERALD_POSTS_PER_HOUR: '1000' } });
      owner = new WebClient(herald.url);
      ownerId = (await owner.signUp('owner@example.com', PASSWORD, { name: 'Olivia Owner' })).body.user.id;
      const invited = await owner.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
      member = new WebClient(herald.url);
      const joined = await member.signUp('member@example.com', PASSWORD, { name: 'Max Member', invitation: invited.body.token });
      memberId = joined.body.user.id;
      accountId = joined.body.account.id;
      keyValue = (await herald.services.accounts.createKey(accountId, 'script')).key;
      key = untypedCaller(herald.api, keyValue);
      const added = await key('POST', '/integrations', { identifier: 'webhook', name: 'Receiver', credentials: { url: receiver.url } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channel = added.body.id;
      const hook = await key('POST', '/webhooks', { url: hooks.url, events: ['post.approval_requested', 'post.approved', 'post.rejected', 'post.updated'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => receiver?.close(),
        () => hooks?.close(),
      ),
    );

    it('the setting is off by default; a member may not turn it on, an owner may', async () => {
      assert.deepEqual((await as(member)('GET', '/approval-settings')).body, { membersNeedApproval: false });
      const refused = await as(member)('PUT', '/approval-settings', { membersNeedApproval: true });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'forbidden');
      const bad = await as(owner)('PUT', '/approval-settings', { membersNeedApproval: 'yes' });
      assertError(bad, 400, { code: 'invalid_body', path: 'membersNeedApproval' });
      // Before it is on, a member's post goes to the queue as before.
      const before = await create(member, schedule('Before approvals'));
      assert.deepEqual((({ state, approval }) => ({ state, approval }))(await row(before)), { state: 'QUEUE', approval: null });
      const on = await as(owner)('PUT', '/approval-settings', { membersNeedApproval: true });
      assert.deepEqual([on.status, on.body], [200, { membersNeedApproval: true }]);
      assert.deepEqual((await as(member)('GET', '/approval-settings')).body, { membersNeedApproval: true });
    });

    let waiting: string;

    it("a member's post waits: DRAFT for the engine, pending in the API, never published even when due; keys and drafts do not wait", async () => {
      waiting = await create(member, schedule('Member says hello', 'now'));
      const detail = await as(member)('GET', `/posts/${waiting}`);
      assert.deepEqual([detail.body.state, detail.body.approval], ['DRAFT', 'pending']);
      const listed = (await key('GET', '/posts?startDate=2000-01-01T00:00:00Z&endDate=2100-01-01T00:00:00Z')).body.posts.find(
        (p: { id: string }) => p.id === waiting,
      );
      assert.deepEqual([listed.state, listed.approval], ['DRAFT', 'pending']);
      assert.equal((await row(waiting)).author_id, memberId);
      const draft = await create(member, schedule('Just a draft', 'draft'));
      assert.equal((await row(draft)).approval, null, 'a draft does not ask yet');

      // A post of the API key (which acts for the account) is queued at once; the engine publishes it and not the waiting one, due earlier.
      const byKey = await create(key, schedule('From the script', 'now'));
      assert.equal((await row(byKey)).approval, null);
      await eventually(async () => ((await row(byKey)).state === 'PUBLISHED' ? true : undefined), 10_000, 'the key post to publish');
      assert.equal((await row(waiting)).state, 'DRAFT');
      assert.ok(!receiver.deliveries.some((d) => d.json?.post?.content === 'Member says hello'), 'the waiting post was never sent');

      const asked = await eventually(async () => events('post.approval_requested', waiting)[0], 10_000, 'post.approval_requested');
      assert.equal(asked.json.data.approval.state, 'pending');
      assert.deepEqual(asked.json.data.approval.by, { kind: 'person', id: memberId, name: 'Max Member' });
      assert.ok(
        (await notices()).some((n) => n.startsWith('Max Member asks for approval of a post on Receiver')),
        'the team is notified that a member asks for approval',
      );
    });

    it('a member may not approve or return a post', async () => {
      const approve = await as(member)('POST', `/posts/${waiting}/approve`, {});
      assert.equal(approve.status, 403);
      assert.equal(approve.body.code, 'forbidden');
      assert.equal((await as(member)('POST', `/posts/${waiting}/reject`, { comment: 'no' })).status, 403);
      assert.deepEqual((({ state, approval }) => ({ state, approval }))(await row(waiting)), { state: 'DRAFT', approval: 'pending' });
    });

    it("approving a post whose time has passed schedules it at the channel's next free slot", async () => {
      const slot = (await key('GET', `/find-slot/${channel}`)).body.date as string;
      const approved = await key('POST', `/posts/${waiting}/approve`, {});
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.deepEqual([approved.body.state, approved.body.postState, approved.body.publishDate], ['approved', 'QUEUE', slot]);
      assert.deepEqual(approved.body.history.at(-1).by, { kind: 'key', id: approved.body.history.at(-1).by.id, name: 'API key "script"' });
      const again = await key('POST', `/posts/${waiting}/approve`, {});
      assertError(again, 409, { code: 'not_pending' });
    });

    it('an owner approves a waiting post: it is scheduled at its time and the engine publishes it to the webhook channel', async () => {
      const soon = new Date(Date.now() + 3000).toISOString();
      const id = await create(member, schedule('Launch, once approved', 'schedule', soon));
      assert.equal((await row(id)).state, 'DRAFT');
      const approved = await as(owner)('POST', `/posts/${id}/approve`, { comment: 'Looks good' });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.deepEqual([approved.body.state, approved.body.postState, approved.body.publishDate], ['approved', 'QUEUE', soon]);
      assert.deepEqual(
        approved.body.history.map((h: { action: string; by: { name: string }; comment: string | null }) => [h.action, h.by.name, h.comment]),
        [
          ['requested', 'Max Member', null],
          ['approved', 'Olivia Owner', 'Looks good'],
        ],
      );
      assert.deepEqual(approved.body.requestedBy, { kind: 'person', id: memberId, name: 'Max Member' });
      await eventually(async () => ((await row(id)).state === 'PUBLISHED' ? true : undefined), 15_000, 'the approved post to publish');
      assert.ok(
        receiver.deliveries.some((d) => d.json?.post?.content === 'Launch, once approved'),
        'the approved post reached its channel',
      );
      const event = await eventually(async () => events('post.approved', id)[0], 10_000, 'post.approved');
      assert.deepEqual(event.json.data.approval, { state: 'approved', by: { kind: 'person', id: ownerId, name: 'Olivia Owner' }, comment: 'Looks good' });
      assert.equal(event.json.data.post.state, 'QUEUE');
      assert.ok(
        (await notices()).some((n) => n.startsWith('Olivia Owner approved the post on Receiver: “Launch, once approved”')),
        'the team is notified of who approved which post',
      );
    });

    let returned: string;

    it('returning a post needs a comment, which its author sees; changing it asks again', async () => {
      returned = await create(member, schedule('Prices go up tomorrow'));
      assertError(await as(owner)('POST', `/posts/${returned}/reject`, {}), 400, { code: 'invalid_body', path: 'comment' });
      assertError(await as(owner)('POST', `/posts/${returned}/reject`, { comment: '   ' }), 400, { path: 'comment' });
      const rejected = await as(owner)('POST', `/posts/${returned}/reject`, { comment: 'Say which prices, please' });
      assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
      assert.deepEqual([rejected.body.state, rejected.body.postState], ['rejected', 'DRAFT']);

      const seen = await as(member)('GET', `/posts/${returned}/approval`);
      const last = seen.body.history.at(-1);
      assert.deepEqual([seen.body.state, last.action, last.by.name, last.comment], ['rejected', 'rejected', 'Olivia Owner', 'Say which prices, please']);
      assert.equal((await as(member)('GET', `/posts/${returned}`)).body.approval, 'rejected');
      const event = await eventually(async () => events('post.rejected', returned)[0], 10_000, 'post.rejected');
      assert.deepEqual(event.json.data.approval.comment, 'Say which prices, please');
      assert.ok(
        (await notices()).some((n) => n === 'Olivia Owner returned the post on Receiver to Max Member: “Say which prices, please”'),
        'the member is notified that the post came back, with the comment saying why',
      );
      assertError(await as(owner)('POST', `/posts/${returned}/reject`, { comment: 'again' }), 409, { code: 'not_pending' });

      const group = (await row(returned)).group_id;
      const edited = await as(member)('POST', '/posts', postBody('update', [entry(channel, ['Coffee prices go up tomorrow'], { group })], { date: undefined }));
      assert.equal(edited.status, 201, JSON.stringify(edited.body));
      const after = await as(member)('GET', `/posts/${returned}/approval`);
      assert.deepEqual([after.body.state, after.body.postState], ['pending', 'DRAFT']);
      assert.deepEqual(
        after.body.history.map((h: { action: string }) => h.action),
        ['requested', 'rejected', 'requested'],
      );
    });

    it("a member's draft asks when moved to the queue; a waiting post cannot be queued around its approval", async () => {
      const draft = await create(member, schedule('Draft first', 'draft'));
      const moved = await as(member)('PUT', `/posts/${draft}/status`, { status: 'schedule' });
      assert.deepEqual([moved.status, moved.body.state], [200, 'DRAFT']);
      assert.equal((await row(draft)).approval, 'pending');
      assertError(await as(owner)('PUT', `/posts/${draft}/status`, { status: 'schedule' }), 409, { code: 'awaiting_approval' });
      assertError(await key('PUT', `/posts/${draft}/status`, { status: 'schedule' }), 409, { code: 'awaiting_approval' });
      // A member changing an approved post asks again: what was approved is not what would go out.
      const approvedByOwner = await create(owner, schedule('Approved words'));
      assert.equal((await row(approvedByOwner)).state, 'QUEUE', "an owner's post does not wait");
      const group = (await row(approvedByOwner)).group_id;
      await as(member)('POST', '/posts', postBody('update', [entry(channel, ['Changed words'], { group })], { date: undefined }));
      assert.deepEqual((({ state, approval }) => ({ state, approval }))(await row(approvedByOwner)), { state: 'DRAFT', approval: 'pending' });
    });

    it('comments: the team reads them, each deletes their own, an owner any; bad input names the field', async () => {
      const byMember = await as(member)('POST', `/posts/${returned}/comments`, { content: 'Which prices did you mean?' });
      assert.equal(byMember.status, 201, JSON.stringify(byMember.body));
      const byOwner = await as(owner)('POST', `/posts/${returned}/comments`, { content: 'The coffee ones.' });
      const byKey = await key('POST', `/posts/${returned}/comments`, { content: 'Checked by the script.' });
      assert.deepEqual(byKey.body.by, { kind: 'key', id: byKey.body.by.id, name: 'API key "script"' });

      const listed = await as(member)('GET', `/posts/${returned}/comments`);
      assert.deepEqual(
        listed.body.comments.map((c: { content: string; by: { name: string }; own: boolean }) => [c.content, c.by.name, c.own]),
        [
          ['Which prices did you mean?', 'Max Member', true],
          ['The coffee ones.', 'Olivia Owner', false],
          ['Checked by the script.', 'API key "script"', false],
        ],
      );
      assertError(await as(member)('DELETE', `/posts/${returned}/comments/${byOwner.body.id}`), 403, { code: 'forbidden' });
      assert.equal((await as(member)('DELETE', `/posts/${returned}/comments/${byMember.body.id}`)).status, 200);
      assert.equal((await as(owner)('DELETE', `/posts/${returned}/comments/${byKey.body.id}`)).status, 200, 'an owner removes any comment');
      assertError(await as(owner)('DELETE', `/posts/${returned}/comments/${byKey.body.id}`), 404, { code: 'not_found' });
      const left = await key('GET', `/posts/${returned}/comments`);
      assert.deepEqual(
        left.body.comments.map((c: { content: string }) => c.content),
        ['The coffee ones.'],
      );

      assertError(await key('POST', `/posts/${returned}/comments`, { content: '' }), 400, { code: 'invalid_body', path: 'content' });
      assertError(await key('POST', `/posts/${returned}/comments`, { content: 'x'.repeat(5001) }), 400, { path: 'content' });
      assertError(await key('POST', '/posts/no-such-post/comments', { content: 'hello' }), 404, { code: 'not_found' });
      const other = await herald.newAccount('Other');
      assertError(await other.callUntyped('GET', `/posts/${returned}/comments`), 404, { code: 'not_found' });
    });

    let link: { id: string; token: string; url: string };

    it('a preview link shows the post to a visitor without an account; only its hash is stored', async () => {
      assertError(await as(member)('POST', `/posts/${returned}/preview-links`, { expiresInHours: 0 }), 400, { path: 'expiresInHours' });
      assertError(await as(member)('POST', `/posts/${returned}/preview-links`, { expiresInHours: 'soon' }), 400, { path: 'expiresInHours' });
      const made = await as(member)('POST', `/posts/${returned}/preview-links`, {});
      assert.equal(made.status, 201, JSON.stringify(made.body));
      link = made.body;
      assert.match(link.token, /^hp_[A-Za-z0-9_-]{43}$/);
      assert.equal(link.url, `${herald.url}/p/${link.token}`);
      assert.equal(Date.parse(made.body.expiresAt) - Date.parse(made.body.createdAt), 7 * 86_400_000, 'a week by default');
      const stored = await herald.services.store.db.selectFrom('preview_links').selectAll().where('id', '=', link.id).executeTakeFirstOrThrow();
      assert.equal(stored.token_hash, sha256(link.token));
      assert.ok(!JSON.stringify(stored).includes(link.token), 'the token itself is not stored');
      const listed = await as(owner)('GET', `/posts/${returned}/preview-links`);
      assert.deepEqual(
        listed.body.map((l: { id: string; state: string }) => [l.id, l.state]),
        [[link.id, 'active']],
      );
      assert.ok(!JSON.stringify(listed.body).includes(link.token), 'the list never shows the token');

      const page = await fetch(link.url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<div id="root">|web application is not built/);
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
      const visitor = untypedCaller(herald.url);
      const view = await visitor('GET', `/api/preview/${link.token}`);
      assert.equal(view.status, 200, JSON.stringify(view.body));
      assert.deepEqual(
        view.body.post.items.map((i: { content: string }) => i.content),
        ['Coffee prices go up tomorrow'],
      );
      assert.deepEqual([view.body.channel.name, view.body.network.identifier, view.body.post.approval], ['Receiver', 'webhook', 'pending']);
      assert.ok(!JSON.stringify(view.body).includes('The coffee ones.'), "the team's own comments stay with the team");
    });

    it('a visitor comments and approves or asks for changes: the team sees it, with a notification; bad input names the field', async () => {
      const visitor = untypedCaller(herald.url);
      const said = await visitor('POST', `/api/preview/${link.token}/comments`, { name: 'Carla Client', content: 'Love the coffee angle' });
      assert.equal(said.status, 201, JSON.stringify(said.body));
      const approved = await visitor('POST', `/api/preview/${link.token}/decision`, { name: 'Carla Client', decision: 'approve' });
      assert.equal(approved.status, 201, JSON.stringify(approved.body));
      assertError(await visitor('POST', `/api/preview/${link.token}/decision`, { name: 'Carla Client', decision: 'changes' }), 400, { path: 'comment' });
      assertError(await visitor('POST', `/api/preview/${link.token}/decision`, { name: '', decision: 'approve' }), 400, { path: 'name' });
      assertError(await visitor('POST', `/api/preview/${link.token}/decision`, { name: 'Carla', decision: 'maybe' }), 400, { path: 'decision' });
      assertError(await visitor('POST', `/api/preview/${link.token}/comments`, { name: 'Carla', content: 'x'.repeat(5001) }), 400, { path: 'content' });

      const comments = (await as(owner)('GET', `/posts/${returned}/comments`)).body.comments;
      const fromVisitor = comments.find((c: { viaPreviewLink: boolean }) => c.viaPreviewLink);
      assert.deepEqual([fromVisitor.content, fromVisitor.by], ['Love the coffee angle', { kind: 'guest', id: null, name: 'Carla Client' }]);
      const history = (await as(owner)('GET', `/posts/${returned}/approval`)).body;
      assert.deepEqual(
        [history.history.at(-1).action, history.history.at(-1).by.name, history.history.at(-1).viaPreviewLink],
        ['client_approved', 'Carla Client', true],
      );
      assert.equal(history.state, 'pending', "a visitor's approval schedules nothing: the team decides");
      const messages = await notices();
      assert.ok(
        messages.includes('Carla Client (preview link) commented on the post on Receiver: “Love the coffee angle”'),
        `the team is notified of a visitor's comment, with the comment: ${JSON.stringify(messages)}`,
      );
      assert.ok(
        messages.includes('Carla Client (preview link) approved the post on Receiver'),
        `the team is notified of a visitor's verdict: ${JSON.stringify(messages)}`,
      );
      const view = await visitor('GET', `/api/preview/${link.token}`);
      assert.deepEqual(
        view.body.feedback.map((f: { kind: string; name: string }) => [f.kind, f.name]),
        [
          ['comment', 'Carla Client'],
          ['client_approved', 'Carla Client'],
        ],
      );
    });

    it('a revoked, expired or unknown link never shows the post: a 410 or 404 page and answers', async () => {
      const visitor = untypedCaller(herald.url);
      const gone = async (token: string, status: number, words: RegExp) => {
        const page = await fetch(`${herald.url}/p/${token}`);
        assert.equal(page.status, status);
        const html = await page.text();
        assert.match(html, words);
        assert.ok(!html.includes('Coffee prices'), 'the post is not on the page');
        assertError(await visitor('GET', `/api/preview/${token}`), status, { code: status === 410 ? 'link_expired' : 'not_found' });
        assertError(await visitor('POST', `/api/preview/${token}/comments`, { name: 'Eve', content: 'hi' }), status);
      };
      await gone('hp_not-a-real-token', 404, /does not exist/);

      const revoked = await as(member)('DELETE', `/posts/${returned}/preview-links/${link.id}`);
      assert.deepEqual([revoked.status, revoked.body], [200, { revoked: true, id: link.id }]);
      await gone(link.token, 410, /withdrawn/);
      assert.equal((await as(member)('GET', `/posts/${returned}/preview-links`)).body[0].state, 'revoked');

      // A link made two hours ago for one hour: the clock has moved past it.
      const principal = { accountId, keyId: `session:${memberId}`, scopes: null, userId: memberId };
      const old = await herald.services.previewLinks.create(principal, returned, 1, Date.now() - 2 * 3_600_000);
      await gone(old.token, 410, /expired/);
      const short = await as(member)('POST', `/posts/${returned}/preview-links`, { expiresInHours: 2 });
      assert.equal(Date.parse(short.body.expiresAt) - Date.parse(short.body.createdAt), 2 * 3_600_000);
      assert.equal((await visitor('GET', `/api/preview/${short.body.token}`)).status, 200);
    });

    it('the SDK reads and decides approvals, comments and preview links', async () => {
      const apiUrl: string = `${herald.url}/api`;
      const sdk = new Herald(keyValue, apiUrl, { throwOnError: true });
      assert.deepEqual(await sdk.approvalSettings(), { membersNeedApproval: true });
      const id = await create(member, schedule('Through the SDK'));
      assert.equal((await sdk.postApproval(id)).state, 'pending');
      const returned = await sdk.rejectPost(id, 'Shorter, please');
      assert.equal(returned.history.at(-1)?.comment, 'Shorter, please');
      assert.equal((await sdk.approvePost(id)).state, 'approved', 'a returned post may still be approved');
      await assert.rejects(sdk.approvePost(id), (err: unknown) => err instanceof HeraldApiError && err.status === 409);
      const comment = await sdk.addPostComment(id, 'Scheduled by the script');
      assert.deepEqual(
        (await sdk.postComments(id)).comments.map((c) => c.id),
        [comment.id],
      );
      assert.deepEqual(await sdk.deletePostComment(id, comment.id), { deleted: true, id: comment.id });
      const made = await sdk.createPreviewLink(id, { expiresInHours: 24 });
      assert.equal((await sdk.previewLinks(id))[0]?.state, 'active');
      await sdk.revokePreviewLink(id, made.id);
      assert.equal((await sdk.previewLinks(id))[0]?.state, 'revoked');
    });

    it(`takes ${WRITES_PER_ADDRESS} comments and verdicts from one address, refuses the next, and still takes another address's`, async () => {
      const made = await key('POST', `/posts/${returned}/preview-links`, { expiresInHours: 1 });
      const comments = `${herald.url}/api/preview/${made.body.token}/comments`;
      // Addresses of their own (earlier tests commented from 127.0.0.1), all reaching Herald on 127.0.0.1.
      const addresses = ['127.0.0.3', '127.0.0.4', '127.0.0.5'];
      const windowNow = () => Math.floor(Date.now() / WRITE_WINDOW_MS);
      let answers: UntypedResult[];
      let address: string;
      let started: number;
      // The limit counts in fixed windows: a burst that straddles a window's end is counted in two, so it is sent again from a fresh address.
      do {
        address = addresses.shift()!;
        started = windowNow();
        answers = [];
        for (let i = 0; i <= WRITES_PER_ADDRESS; i++) answers.push(await postFrom(address, comments, { name: 'Busy', content: `note ${i}` }));
      } while (windowNow() !== started);
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array(WRITES_PER_ADDRESS).fill(201), 429],
        `the first ${WRITES_PER_ADDRESS} comments from ${address} are taken, the next is refused`,
      );
      const limited = answers[WRITES_PER_ADDRESS];
      assertError(limited, 429, { code: 'rate_limited', message: new RegExp(`at most ${WRITES_PER_ADDRESS} requests per`) });
      assert.ok(Number(limited.headers.get('retry-after')) > 0, 'the refusal says when to try again');
      const other = await postFrom('127.0.0.6', comments, { name: 'Someone else', content: 'From another address' });
      assert.equal(other.status, 201, `another visitor is not held to ${address}'s limit: ${JSON.stringify(other.body)}`);
    });
  });
}
