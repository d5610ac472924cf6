import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startHerald, upload, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth, followToCallback, startConnect } from '../helpers/connect.ts';
import { assertError, entry, postBody } from '../helpers/api-fixtures.ts';
import { CLIENT_ID, CLIENT_SECRET, startDribbbleFake, type DribbbleFake } from '../fakes/dribbble.ts';
import { listedChannel, publishNow, saveDraft, settled, uploadMp4 } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

async function png(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#e04080' } })
    .png()
    .toBuffer();
}

for (const store of await testStores()) {
  describe(`dribbble (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: DribbbleFake;
    let account: TestAccount;
    let channelId: string;
    let shot400: { id: string; path: string; bytes: Buffer };

    const uploadImage = async (bytes: Buffer, name = 'shot.png') => {
      const uploaded = await upload(account, herald.api, bytes, name);
      assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
      return { id: uploaded.body.id as string, path: uploaded.body.path as string, bytes };
    };
    const post = async (content: string, media: { id: string; path: string }[], settings: Record<string, unknown>) =>
      settled(account, await publishNow(account, channelId, [{ content, media }], settings));

    before(async () => {
      fake = await startDribbbleFake();
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 1_500 },
        env: {
          HERALD_DRIBBBLE_CLIENT_ID: CLIENT_ID,
          HERALD_DRIBBBLE_CLIENT_SECRET: CLIENT_SECRET,
          HERALD_DRIBBBLE_AUTH_URL: fake.url,
          HERALD_DRIBBBLE_API_URL: fake.url,
          HERALD_POSTS_PER_HOUR: '1000',
          HERALD_REQUESTS_PER_MINUTE: '100000',
        },
      });
      account = await herald.newAccount();
      shot400 = await uploadImage(await png(400, 300));
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('refuses to connect when Dribbble did not grant the upload permission, naming it', async () => {
      fake.grantedScope = 'public';
      const finished = await followToCallback(herald, await startConnect(account, 'dribbble'));
      fake.grantedScope = 'public upload';
      assert.equal(finished.status, 400, JSON.stringify(finished.body));
      assert.match(finished.body.message, /"upload" permission/);
    });

    it('connects through OAuth with the client secret, asking for public and upload; the account from /v2/user', async () => {
      const connected = await connectOAuth(herald, account, 'dribbble');
      channelId = connected.id;
      assert.equal(connected.identifier, 'dribbble');
      assert.equal(connected.name, 'Ada Pixel');
      const consent = fake.state.authorize;
      assert.equal(consent.client_id, CLIENT_ID);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/dribbble/callback`);
      assert.deepEqual(consent.scope.split(' '), ['public', 'upload']);
      assert.equal(consent.code_challenge, undefined, 'Dribbble takes no PKCE');
      const token = fake.calls('POST /oauth/token').at(-1)!;
      assert.deepEqual(
        { code: token.form?.code, secret: token.form?.client_secret, redirect: token.form?.redirect_uri },
        { code: 'dribbble-code', secret: CLIENT_SECRET, redirect: `${herald.url}/connect/dribbble/callback` },
      );
      assert.equal(fake.calls('GET /v2/user').at(-1)!.headers.authorization, 'Bearer dribbble-token-2');
      const listed = await listedChannel(account, channelId);
      assert.equal(listed.profile, 'adapixel');
      assert.equal(listed.picture, 'https://cdn.dribbble.example/ada.png');

      const teams = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'teams' });
      assert.equal(teams.status, 200, JSON.stringify(teams.body));
      assert.deepEqual(teams.body.output, [{ id: '77', name: 'Studio North', login: 'studionorth' }]);
    });

    it('uploads a shot as multipart (image, title, description); 202 with Location gives the id, then the processed shot gives its link', async () => {
      const done = await post('Made with <b>care</b>', [shot400], { title: 'Sunset poster' });
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      const sent = fake.calls('POST /v2/shots').at(-1)!;
      assert.equal(sent.headers.authorization, 'Bearer dribbble-token-2');
      assert.deepEqual(sent.multipart?.fields, { title: 'Sunset poster', description: 'Made with <b>care</b>' });
      assert.equal(sent.multipart?.files.length, 1);
      assert.equal(sent.multipart?.files[0].name, 'image');
      assert.equal(sent.multipart?.files[0].type, 'image/png');
      assert.deepEqual(sent.multipart?.files[0].data, shot400.bytes);
      const shot = fake.shots.at(-1)!;
      assert.equal(done.releaseId, String(shot.id));
      assert.equal(done.releaseURL, `https://dribbble.com/shots/${shot.id}`);

      // While Dribbble processes the image the shot reads 404: the follow-up waits.
      assert.equal(await herald.engine!.followUps.run(Date.now()), 0, 'not looked at before its time');
      fake.shots.at(-1)!.readyAt = Date.now() + 60_000;
      assert.equal(await herald.engine!.followUps.run(Date.now() + 4_000), 0, 'still processing');
      assert.equal(fake.calls('GET /v2/shots/:id').at(-1)!.params.id, String(shot.id));
      // Once processed, the follow-up stores Dribbble's own (slugged) link.
      shot.readyAt = Date.now();
      assert.equal(await herald.engine!.followUps.run(Date.now() + 60_000), 1);
      const linked = (await account.callUntyped('GET', `/posts/${done.id}`)).body;
      assert.equal(linked.state, 'PUBLISHED');
      assert.equal(linked.releaseId, String(shot.id));
      assert.equal(linked.releaseURL, shot.html_url);
    });

    it('posts for a team by its id, or by the team address older clients send', async () => {
      const byId = await post('', [shot400], { title: 'Team shot', team: '77' });
      assert.equal(byId.state, 'PUBLISHED', byId.error ?? '');
      assert.equal(fake.calls('POST /v2/shots').at(-1)!.multipart?.fields.team_id, '77');
      const byUrl = await post('', [shot400], { title: 'Team shot 2', team: 'https://dribbble.com/studionorth' });
      assert.equal(byUrl.state, 'PUBLISHED', byUrl.error ?? '');
      assert.equal(fake.calls('POST /v2/shots').at(-1)!.multipart?.fields.team_id, '77');
      assert.equal(fake.calls('POST /v2/shots').at(-1)!.multipart?.fields.description, undefined, 'no empty description');

      const before = fake.calls('POST /v2/shots').length;
      const notMine = await post('', [shot400], { title: 'Other team', team: 'https://dribbble.com/someoneelse' });
      assert.equal(notMine.state, 'ERROR');
      assert.match(notMine.error, /not one of yours/);
      assert.equal(fake.calls('POST /v2/shots').length, before, 'nothing uploaded');
    });

    it('refuses before acceptance: no image, two images, a video, no title', async () => {
      const video = await uploadMp4(account, herald, 2000);
      const attempt = (items: { content: string; image?: { id: string; path: string }[] }[], settings: Record<string, unknown>) =>
        account.callUntyped('POST', '/posts', postBody('now', [entry(channelId, items, { settings })], { date: new Date().toISOString() }));
      const problems = (answer: { status: number; body: any }) => {
        assert.equal(answer.status, 400, JSON.stringify(answer.body));
        return answer.body.errors.map((e: any) => `${e.path}: ${e.message}`).join('\n');
      };
      assert.match(problems(await attempt([{ content: 'words only' }], { title: 't' })), /posts\.0\.value\.0\.image: has 0 files.*needs at least 1/);
      assert.match(problems(await attempt([{ content: 'x', image: [shot400, shot400] }], { title: 't' })), /posts\.0\.value\.0\.image: has 2 files.*at most 1/);
      assert.match(problems(await attempt([{ content: 'x', image: [video] }], { title: 't' })), /posts\.0\.value\.0\.image\.0: is video\/mp4/);
      assert.match(problems(await attempt([{ content: 'x', image: [shot400] }], {})), /posts\.0\.settings\.title/);
    });

    it('has no threads: only the first item becomes a shot, with a warning', async () => {
      const before = fake.shots.length;
      const answer = await account.callUntyped(
        'POST',
        '/posts',
        postBody('now', [entry(channelId, [{ content: 'one', image: [shot400] }, 'two'], { settings: { title: 'Only one' } })], {
          date: new Date().toISOString(),
        }),
      );
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      const done = await settled(account, answer.body[0].postId);
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.equal(done.thread.length, 1);
      assert.match(done.warning, /no threads/);
      assert.equal(fake.shots.length, before + 1);
    });

    it('refuses an image of the wrong size when the post is accepted, naming the field; larger 4:3 multiples go through', async () => {
      const before = fake.calls('POST /v2/shots').length;
      const odd = await uploadImage(await png(500, 300), 'odd.png');
      const refused = await account.callUntyped(
        'POST',
        '/posts',
        postBody('now', [entry(channelId, [{ content: '', image: [odd] }], { settings: { title: 'Wrong size' } })], { date: new Date().toISOString() }),
      );
      assertError(refused, 400, {
        path: 'posts.0.value.0.image',
        message: /is 500×300, but Dribbble takes 4:3 images of 400×300, 800×600 or a larger multiple/,
      });
      assert.equal(fake.calls('POST /v2/shots').length, before);

      const big = await uploadImage(await png(1600, 1200), 'big.png');
      const accepted = await post('', [big], { title: 'Big one' });
      assert.equal(accepted.state, 'PUBLISHED', accepted.error ?? '');
      assert.equal(fake.shots.at(-1)!.width, 1600);
    });

    it("ends in ERROR with Dribbble's validation message (422) and its refusal (403)", async () => {
      fake.failNext('POST /v2/shots', { status: 422, body: { message: 'Validation failed.', errors: [{ attribute: 'image', message: 'is a duplicate' }] } });
      const invalid = await post('', [shot400], { title: 'Again' });
      assert.equal(invalid.state, 'ERROR');
      assert.match(invalid.error, /answered 422: Validation failed\. \(image is a duplicate\)/);
      assert.equal(invalid.thread[0].attempts.length, 1);

      fake.user.can_upload_shot = false;
      const forbidden = await post('', [shot400], { title: 'Not a player' });
      fake.user.can_upload_shot = true;
      assert.equal(forbidden.state, 'ERROR');
      assert.match(forbidden.error, /answered 403: You are not allowed to upload shots\..*allowed to upload shots/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
    });

    it('waits until X-RateLimit-Reset on a 429 and uploads once', async () => {
      const before = fake.shots.length;
      fake.failNext('POST /v2/shots', {
        status: 429,
        body: { message: 'API rate limit exceeded.' },
        headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 1) },
      });
      const done = await post('', [shot400], { title: 'Patient' });
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.deepEqual(
        done.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.ok(done.thread[0].attempts[0].detail.includes('API rate limit exceeded'), 'the attempt shows Dribbble’s rate-limit message to the user');
      assert.equal(fake.shots.length, before + 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [{ content: '', media: [shot400] }], { __type: 'dribbble', title: text }),
      held: (text) => fake.shots.filter((s) => s.title === text).length,
    }));

    it("after a lost answer, finds the shot among the account's latest instead of uploading again", async () => {
      const before = fake.shots.length;
      fake.processingMs = 0;
      fake.failNext('POST /v2/shots', { handleThenHang: true });
      const done = await post('', [shot400], { title: 'Did it arrive?' });
      fake.processingMs = 300;
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.equal(fake.shots.length, before + 1, 'one shot');
      assert.equal(done.releaseId, String(fake.shots.at(-1)!.id));
      assert.equal(done.releaseURL, fake.shots.at(-1)!.html_url);
      assert.deepEqual(
        done.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.calls('GET /v2/user/shots').at(-1)!.query.per_page, '5');
    });

    it('after a 502 with no shot made, fails asking the user to check instead of uploading twice', async () => {
      const posts = fake.calls('POST /v2/shots').length;
      fake.failNext('POST /v2/shots', { status: 502, body: '<html>Bad Gateway</html>' });
      const done = await post('', [shot400], { title: 'Gateway trouble' });
      assert.equal(done.state, 'ERROR');
      assert.match(done.error, /502/);
      assert.match(done.error, /does not show it yet/);
      assert.equal(fake.calls('POST /v2/shots').length, posts + 1, 'sent once');
    });

    it('lists the latest shots for a post published by hand (GET /posts/{id}/missing)', async () => {
      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'dribbble', title: 'x' });
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const newest = fake.shots.at(-1)!;
      assert.deepEqual(missing.body[0], { id: String(newest.id), url: newest.html_url, text: newest.title, at: newest.published_at });
    });

    it('a revoked token (Dribbble has no refresh) marks the channel for reconnection; connecting again restores it', async () => {
      fake.tokens.clear();
      const done = await post('', [shot400], { title: 'Nobody home' });
      assert.equal(done.state, 'ERROR');
      assert.match(done.error, /must be reconnected/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);
      const again = await connectOAuth(herald, account, 'dribbble');
      assert.equal(again.id, channelId);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
      const back = await post('', [shot400], { title: 'Back again' });
      assert.equal(back.state, 'PUBLISHED', back.error ?? '');
    });
  });
}
