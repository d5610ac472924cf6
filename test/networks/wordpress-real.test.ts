/**
 * WordPress against a real site: Debian's WordPress under php -S on a fresh
 * MariaDB database, installed once for this file (both stores share it). With
 * CI=true the site is required; elsewhere the suites are skipped, saying why,
 * when php, the wordpress package or MariaDB are missing.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { startWordPressSite, wordpressMissing, type WordPressSite } from '../fakes/wordpress-site.ts';
import { channelView, publishNow, settled, uploadPng } from './publish.ts';

const missing = wordpressMissing();
if (missing && process.env.CI === 'true') {
  throw new Error(`CI=true requires a real WordPress for this suite, but ${missing} (apt-get install wordpress php-cli php-mysql mariadb-server)`);
}
const site: WordPressSite | undefined = missing ? undefined : await startWordPressSite();
after(async () => site?.close());

/** A REST call to the site as one of its users, to see what Herald made there. */
async function wp(user: { login: string; appPassword: string }, path: string): Promise<any> {
  const response = await fetch(`${site!.url}/wp-json${path}`, {
    headers: { authorization: `Basic ${Buffer.from(`${user.login}:${user.appPassword}`).toString('base64')}` },
  });
  assert.equal(response.status, 200, `${path}: ${response.status}`);
  return response.json();
}

for (const store of await testStores()) {
  const skip = missing ? `no real WordPress here: ${missing}` : storeSuite(store).skip;
  describe(`wordpress on a real site (${store})`, { skip }, () => {
    let herald: TestHerald;
    let account: TestAccount;
    let authorChannel: string;
    let contributorChannel: string;
    // Titles differ per store: both suites post to the one site.
    const title = (what: string) => `${what} on ${store}`;

    after(async () => herald?.close());

    it('connects an Author with an application password (users/me), naming the channel after the site', async () => {
      herald = await startHerald(store, { engine: { pollMs: 50, publishTimeoutMs: 8_000 } });
      account = await herald.newAccount();
      const s = site!;
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: `${s.url}/`, username: s.author.login, password: s.author.appPassword },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      authorChannel = added.body.id;
      assert.equal(added.body.name, 'Herald Test Site');
      assert.equal(added.body.profile, s.author.login);
      assert.doesNotMatch(JSON.stringify((await account.callUntyped('GET', '/integrations')).body), new RegExp(s.author.appPassword.split(' ')[0]));
    });

    it('refuses a wrong application password at connect, naming the password', async () => {
      const s = site!;
      const wrong = await account.callUntyped('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: s.url, username: s.author.login, password: 'abcd efgh ijkl mnop qrst uvwx' },
      });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.errors[0].path, 'credentials.password');
      assert.match(wrong.body.message, /WordPress refused the credentials: WordPress answered 401/);
    });

    it('publishes a post that WordPress stores as sent, at the link it answered', async () => {
      const post = await settled(
        account,
        await publishNow(account, authorChannel, ['<p>Hello from <strong>Herald</strong></p>'], { title: title('First post'), type: 'posts' }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const stored = await wp(site!.author, `/wp/v2/posts/${post.releaseId}?context=edit`);
      assert.equal(stored.status, 'publish');
      assert.equal(stored.title.raw, title('First post'));
      assert.equal(stored.content.raw, '<p>Hello from <strong>Herald</strong></p>');
      assert.equal(stored.slug, `first-post-on-${store}`);
      assert.equal(stored.author, site!.author.id);
      assert.equal(post.releaseURL, stored.link);
    });

    it("reads the author's published posts and a post's approved comments, as the site counts them", async () => {
      const s = site!;
      const post = await settled(account, await publishNow(account, authorChannel, ['Talk about it'], { title: title('Discussed'), type: 'posts' }));
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      // Two approved comments and one held for moderation, which the post's figures leave out.
      for (const approved of [1, 1, 0]) {
        s.php(`wp_insert_comment(['comment_post_ID' => ${post.releaseId}, 'comment_content' => 'A reader says hi', 'comment_approved' => ${approved}]);`);
      }
      const figures = await account.callUntyped('GET', `/analytics/post/${post.id}?date=7`);
      assert.equal(figures.status, 200, JSON.stringify(figures.body));
      assert.deepEqual(
        figures.body.map((f: { label: string; data: { total: number }[] }) => [f.label, f.data[0].total]),
        [['Comments', 2]],
      );

      // A post by another user of the site is not the channel's.
      s.php(`wp_insert_post(['post_title' => 'By the editor on ${store}', 'post_status' => 'publish', 'post_author' => 1]);`);
      const channel = await account.callUntyped('GET', `/analytics/${authorChannel}?date=7`);
      assert.equal(channel.status, 200, JSON.stringify(channel.body));
      const published = Number(s.php(`echo count_user_posts(${s.author.id}, 'post', true);`));
      assert.ok(published >= 2, `the author has published posts (${published})`);
      assert.deepEqual(
        channel.body.map((f: { label: string; data: { total: number }[] }) => [f.label, f.data[0].total]),
        [['Posts', published]],
      );
    });

    it("uploads the item's image to the media library and makes it the featured image", async () => {
      const png = await uploadPng(account, herald.api, 'cover.png');
      const post = await settled(
        account,
        await publishNow(account, authorChannel, [{ content: 'With a picture', image: [{ id: png.id, path: png.path }] }], {
          title: title('Pictured'),
          type: 'posts',
        }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const stored = await wp(site!.author, `/wp/v2/posts/${post.releaseId}?context=edit`);
      assert.ok(stored.featured_media > 0, 'a featured image is set');
      const media = await wp(site!.author, `/wp/v2/media/${stored.featured_media}?context=edit`);
      assert.equal(media.mime_type, 'image/png');
      assert.equal(media.media_details.width, 4);
      const file = await fetch(media.source_url);
      assert.equal(file.status, 200);
      assert.deepEqual(Buffer.from(await file.arrayBuffer()), png.bytes, 'WordPress keeps the bytes Herald sent');
    });

    it('takes the featured image from main_image and files the post under category and tag ids', async () => {
      const png = await uploadPng(account, herald.api, 'main.png');
      const s = site!;
      const post = await settled(
        account,
        await publishNow(account, authorChannel, ['Filed under'], {
          title: title('Filed'),
          type: 'posts',
          main_image: { id: png.id, path: png.path },
          categories: [s.category.id],
          tags: [s.tag.id],
        }),
      );
      assert.equal(post.state, 'PUBLISHED', post.error ?? '');
      const stored = await wp(s.author, `/wp/v2/posts/${post.releaseId}?context=edit`);
      assert.deepEqual(stored.categories, [s.category.id]);
      assert.deepEqual(stored.tags, [s.tag.id]);
      const media = await wp(s.author, `/wp/v2/media/${stored.featured_media}?context=edit`);
      assert.deepEqual(Buffer.from(await (await fetch(media.source_url)).arrayBuffer()), png.bytes, 'the main_image file, as uploaded to Herald');
    });

    it('lists categories and tags through the tools', async () => {
      const s = site!;
      const categories = await account.callUntyped('POST', `/integration-trigger/${authorChannel}`, { methodName: 'categories' });
      assert.equal(categories.status, 200, JSON.stringify(categories.body));
      assert.ok(
        categories.body.output.some((c: { id: number; name: string }) => c.id === s.category.id && c.name === s.category.name),
        'the site’s category is offered by id and name',
      );
      const tags = await account.callUntyped('POST', `/integration-trigger/${authorChannel}`, { methodName: 'tags' });
      assert.deepEqual(tags.body.output, [{ id: s.tag.id, name: s.tag.name }]);
      const types = await account.callUntyped('POST', `/integration-trigger/${authorChannel}`, { methodName: 'types' });
      // An Author may write posts, not pages: the types it can publish to.
      assert.deepEqual(
        types.body.output.map((t: { rest_base: string }) => t.rest_base),
        ['posts'],
      );
    });

    it("fails a Contributor's publish with WordPress's own 403 message, once, and sends a pending post for review", async () => {
      const s = site!;
      const added = await account.callUntyped('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: s.url, username: s.contributor.login, password: s.contributor.appPassword },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      contributorChannel = added.body.id;
      const refused = await settled(
        account,
        await publishNow(account, contributorChannel, ['Not mine to publish'], { title: title('Refused'), type: 'posts' }),
      );
      assert.equal(refused.state, 'ERROR');
      assert.match(refused.error ?? '', /WordPress answered 403: Sorry, you are not allowed to publish posts in this post type\. \[rest_cannot_publish\]/);
      assert.deepEqual(
        refused.thread[0].attempts.map((a) => a.outcome),
        ['failed'],
      );
      const pending = await settled(
        account,
        await publishNow(account, contributorChannel, ['For review'], { title: title('For review'), type: 'posts', status: 'pending' }),
      );
      assert.equal(pending.state, 'PUBLISHED', pending.error ?? '');
      const stored = await wp(s.contributor, `/wp/v2/posts/${pending.releaseId}?context=edit`);
      assert.equal(stored.status, 'pending');
      assert.equal(stored.author, s.contributor.id);
    });

    it('marks the channel for reconnection once its application password is revoked', async () => {
      const s = site!;
      // A password of its own, so revoking it leaves the other suite's alone.
      const extra = JSON.parse(
        s.php(
          `[$p, $item] = WP_Application_Passwords::create_new_application_password(${s.author.id}, ['name' => 'revoked-${store}']); ` +
            `echo json_encode(['password' => $p, 'uuid' => $item['uuid']]);`,
        ),
      );
      const other = await herald.newAccount('Revoking');
      const added = await other.callUntyped('POST', '/integrations', {
        identifier: 'wordpress',
        credentials: { url: s.url, username: s.author.login, password: extra.password },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      s.php(`WP_Application_Passwords::delete_application_password(${s.author.id}, '${extra.uuid}');`);
      const post = await settled(other, await publishNow(other, added.body.id, ['After the revoke'], { title: title('Revoked'), type: 'posts' }));
      assert.equal(post.state, 'ERROR');
      assert.match(post.error ?? '', /must be reconnected: WordPress answered 401/);
      assert.equal((await channelView(other, added.body.id)).needsReconnect, true);
    });
  });
}
