import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { untypedCaller, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { addWebhookChannel, countRows, scheduledPost } from '../helpers/api-fixtures.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';

const ARTICLE = 'https://example.com/articles/42?ref=herald&lang=en';
const PAGE = 'http://example.org/path/page.html';

for (const store of await testStores()) {
  describe(`short links (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;
    let channel: string;
    let shortPrefix: string;

    before(async () => {
      herald = await startHerald(store);
      account = await herald.newAccount();
      channel = (await addWebhookChannel(account)).id;
      shortPrefix = `${herald.url}/s/`;
    });
    after(() => herald.close());

    async function createAndRead(body: object): Promise<string[]> {
      const created = await account.callUntyped('POST', '/posts', body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const detail = await account.callUntyped('GET', `/posts/${created.body[0].postId}`);
      return detail.body.thread.map((t: { content: string }) => t.content);
    }

    async function linkRow(code: string) {
      return herald.services.store.db.selectFrom('short_links').selectAll().where('code', '=', code).executeTakeFirst();
    }

    const follow = (code: string) => fetch(`${shortPrefix}${code}`, { redirect: 'manual' });

    /** Codes of the short links in `text`, in order. */
    function codesIn(text: string): string[] {
      return [...text.matchAll(/http:\/\/127\.0\.0\.1:\d+\/s\/([A-Za-z0-9_-]+)/g)].map((m) => {
        assert.ok(m[0].startsWith(shortPrefix), `${m[0]} is on this server's public URL`);
        return m[1];
      });
    }

    let articleCode: string;
    let pageCode: string;

    it('shortLink:true replaces each http(s) link by {public_url}/s/{code}, text around it unchanged', async () => {
      const [first, reply] = await createAndRead(
        scheduledPost(channel, [`Read ${ARTICLE}, then ${PAGE}.`, `More at ${PAGE} (same page)`], { shortLink: true }),
      );
      [articleCode, pageCode] = codesIn(first);
      assert.equal(first, `Read ${shortPrefix}${articleCode}, then ${shortPrefix}${pageCode}.`);
      assert.notEqual(articleCode, pageCode);
      const [replyCode] = codesIn(reply);
      assert.equal(reply, `More at ${shortPrefix}${replyCode} (same page)`);

      const article = await linkRow(articleCode);
      assert.equal(article?.url, ARTICLE);
      assert.equal(article?.account_id, account.id);
      assert.equal(article?.clicks, 0);
      assert.equal((await linkRow(pageCode))?.url, PAGE);
      assert.equal((await linkRow(replyCode))?.url, PAGE);
    });

    it('GET /s/{code} redirects (302) to the original link and counts each click', async () => {
      const first = await follow(articleCode);
      assert.equal(first.status, 302);
      assert.equal(first.headers.get('location'), ARTICLE);
      assert.equal((await linkRow(articleCode))?.clicks, 1);
      assert.equal((await follow(articleCode)).status, 302);
      assert.equal((await linkRow(articleCode))?.clicks, 2);

      const page = await follow(pageCode);
      assert.equal(page.headers.get('location'), PAGE);
      assert.equal((await linkRow(pageCode))?.clicks, 1, 'each link has its own count');
    });

    it('HEAD /s/{code} answers without counting a click, and the account can read the count', async () => {
      const head = await fetch(`${shortPrefix}${articleCode}`, { method: 'HEAD', redirect: 'manual' });
      assert.equal(head.status, 302);
      const stats = await account.callUntyped('GET', `/short-links/${articleCode}`);
      assert.equal(stats.status, 200);
      assert.deepEqual({ url: stats.body.url, clicks: stats.body.clicks }, { url: ARTICLE, clicks: 2 });
      const stranger = await herald.newAccount('Stranger');
      assert.equal((await stranger.callUntyped('GET', `/short-links/${articleCode}`)).status, 404, "another account cannot read this account's links");
    });

    it('an unknown code is a 404 with a JSON body', async () => {
      const unknown = await untypedCaller(herald.url)('GET', '/s/NoSuchCode');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.statusCode, 404);
      assert.equal(typeof unknown.body.message, 'string');
      assert.equal(await linkRow('NoSuchCode'), undefined, 'following an unknown code creates nothing');
    });

    it('shortLink:false leaves the content as written and stores no link', async () => {
      const before = await countRows(herald, 'short_links', account.id);
      const text = `Plain ${ARTICLE} and ${PAGE}`;
      assert.deepEqual(await createAndRead(scheduledPost(channel, text, { shortLink: false })), [text]);
      assert.equal(await countRows(herald, 'short_links', account.id), before);
    });

    it('takes balanced parentheses into a link, but not the one closing a remark around it', async () => {
      const wiki = 'https://en.wikipedia.org/wiki/Rust_(programming_language)';
      const [content] = await createAndRead(scheduledPost(channel, `About ${wiki} (also ${ARTICLE}).`, { shortLink: true }));
      const [wikiCode, articleInParens] = codesIn(content);
      assert.equal(content, `About ${shortPrefix}${wikiCode} (also ${shortPrefix}${articleInParens}).`);
      assert.equal((await linkRow(wikiCode))?.url, wiki);
      assert.equal((await linkRow(articleInParens))?.url, ARTICLE);
    });

    it('keeps links that already are short links of this server', async () => {
      const text = `Again: ${shortPrefix}${articleCode}`;
      assert.deepEqual(await createAndRead(scheduledPost(channel, text, { shortLink: true })), [text]);
    });

    it('a post refused with 400 stores no short link', async () => {
      const before = await countRows(herald, 'short_links', account.id);
      // The first item is fine (its link gets shortened while planning); the empty reply makes the request fail.
      const refused = await account.callUntyped('POST', '/posts', scheduledPost(channel, [`See ${ARTICLE}`, ''], { shortLink: true }));
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.errors[0].path, 'posts.0.value.1.content');
      assert.equal(await countRows(herald, 'short_links', account.id), before);
    });
  });
}
