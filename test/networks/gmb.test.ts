import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { connectOAuth, followToCallback, startConnect } from '../helpers/connect.ts';
import { assertError, entry, postBody } from '../helpers/api-fixtures.ts';
import { gmb } from '../../src/providers/networks/gmb.ts';
import { CLIENT_ID, CLIENT_SECRET, googleError, MANAGE_SCOPE, PERMISSION_DENIED, quotaExceeded, startGmbFake, type GmbFake } from '../fakes/gmb.ts';
import { listedChannel, publishNow, saveDraft, settled, uploadMp4, uploadPng } from './support.ts';
import { serverErrorAfterCreate } from './create-5xx.ts';
import { teardown } from '../helpers/teardown.ts';

const PARENT = 'accounts/222/locations/l-bakery';

describe('gmb answers', () => {
  const answer = (status: number, body: unknown) => ({
    url: 'https://mybusiness.googleapis.com/v4/x',
    status,
    ok: status < 300,
    headers: new Headers(),
    body,
    isJson: true,
    raw: JSON.stringify(body),
    detail: JSON.stringify(body),
  });

  it('waits a minute on a per-minute quota (Google sends no Retry-After), but refuses the quota 0 of an unapproved project', () => {
    assert.deepEqual(
      { kind: gmb.readAnswer!(answer(429, quotaExceeded(300).body))?.kind, wait: gmb.readAnswer!(answer(429, quotaExceeded(300).body))?.retryAfterMs },
      { kind: 'retryable', wait: 60_000 },
    );
    const zero = gmb.readAnswer!(answer(429, quotaExceeded(0).body));
    assert.equal(zero?.kind, 'refused');
    assert.match(String(zero?.detail), /quota of 0/);
  });
});

for (const store of await testStores()) {
  describe(`gmb (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let fake: GmbFake;
    let account: TestAccount;
    let channelId: string;

    const post = async (items: Parameters<typeof publishNow>[2], settings: Record<string, unknown> = {}) =>
      settled(account, await publishNow(account, channelId, items, settings), 20_000);
    const created = () => fake.posts.get(PARENT) ?? [];

    before(async () => {
      fake = await startGmbFake();
      fake.accounts.set('accounts/111', [
        { name: 'locations/l-cafe', title: 'Corner Café', storefrontAddress: { addressLines: ['1 Main St'], locality: 'Springfield' } },
      ]);
      fake.accounts.set('accounts/222', [
        { name: 'locations/l-shop', title: 'Book Shop' },
        {
          name: 'locations/l-bakery',
          title: 'Bakery',
          storefrontAddress: { addressLines: ['9 Mill Rd'], locality: 'Shelbyville' },
          metadata: { mapsUri: 'https://maps.google.com/?cid=42' },
          languageCode: 'de',
        },
      ]);
      fake.pageSize = 1;
      // A publish whose answer never comes is given up after 1.5 s (its outcome then unknown).
      herald = await startHerald(store, {
        engine: { pollMs: 50, publishTimeoutMs: 1_500 },
        env: {
          HERALD_GMB_CLIENT_ID: CLIENT_ID,
          HERALD_GMB_CLIENT_SECRET: CLIENT_SECRET,
          HERALD_GMB_AUTH_URL: fake.url,
          HERALD_GMB_TOKEN_URL: fake.url,
          HERALD_GMB_ACCOUNTS_URL: fake.url,
          HERALD_GMB_LOCATIONS_URL: fake.url,
          HERALD_GMB_API_URL: fake.url,
          HERALD_POSTS_PER_HOUR: '1000',
          HERALD_REQUESTS_PER_MINUTE: '100000',
        },
      });
      account = await herald.newAccount();
    });
    after(() =>
      teardown(
        () => herald?.close(),
        () => fake?.close(),
      ),
    );

    it('connects through Google OAuth with PKCE and offline access, then the user picks a location across accounts and pages', async () => {
      const connected = await connectOAuth(herald, account, 'gmb', { pick: (choices) => choices.findIndex((c) => c.name === 'Bakery') });
      channelId = connected.id;
      assert.equal(connected.identifier, 'gmb');
      assert.equal(connected.name, 'Bakery');

      const consent = fake.state.authorize;
      assert.equal(consent.client_id, CLIENT_ID);
      assert.equal(consent.redirect_uri, `${herald.url}/connect/gmb/callback`);
      assert.equal(consent.access_type, 'offline');
      assert.equal(consent.prompt, 'consent');
      assert.equal(consent.code_challenge_method, 'S256');
      assert.ok(consent.scope.split(' ').includes(MANAGE_SCOPE), 'the consent asks for the scope that lets Herald post to the business profile');

      const [token] = fake.calls('POST /token');
      assert.equal(token.form?.grant_type, 'authorization_code');
      assert.equal(token.form?.client_secret, CLIENT_SECRET);
      assert.ok(token.form?.code_verifier, 'the PKCE verifier is sent');

      // Two accounts, one a page; the second account's two locations, one a page.
      assert.deepEqual(
        fake.calls('GET /v1/accounts').map((r) => r.query.pageToken ?? null),
        [null, '1'],
      );
      const lists = fake.calls('GET /v1/accounts/:account/locations');
      assert.deepEqual(
        lists.map((r) => [r.params.account, r.query.pageToken ?? null]),
        [
          ['111', null],
          ['222', null],
          ['222', '1'],
        ],
      );
      assert.ok(
        lists.every((r) => r.query.readMask === 'name,title,storefrontAddress,metadata,languageCode' && r.headers.authorization === 'Bearer ya29.gmb-1'),
      );

      const listed = await listedChannel(account, channelId);
      assert.equal(listed.profile, '9 Mill Rd, Shelbyville');
      assert.equal(listed.needsReconnect, false);

      const tool = await account.callUntyped('POST', `/integration-trigger/${channelId}`, { methodName: 'listLocations' });
      assert.equal(tool.status, 200, JSON.stringify(tool.body));
      assert.deepEqual(
        tool.body.output.map((l: { id: string }) => l.id),
        ['accounts/111/locations/l-cafe', 'accounts/222/locations/l-shop', PARENT],
      );
    });

    it('publishes an update with its photo (by public URL) and a button, linked to the post in Google Search', async () => {
      const photo = await uploadPng(account, herald);
      const done = await post([{ content: 'Fresh bread from 7am', media: [photo] }], {
        topicType: 'STANDARD',
        callToActionType: 'LEARN_MORE',
        callToActionUrl: 'https://bakery.example/bread',
      });
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      const sent = fake.calls('POST /v4/accounts/:account/locations/:location/localPosts').at(-1)!;
      assert.equal(sent.headers.authorization, 'Bearer ya29.gmb-1');
      assert.deepEqual(sent.json, {
        // The location's own language, read when it was connected.
        languageCode: 'de',
        summary: 'Fresh bread from 7am',
        topicType: 'STANDARD',
        callToAction: { actionType: 'LEARN_MORE', url: 'https://bakery.example/bread' },
        media: [{ mediaFormat: 'PHOTO', sourceUrl: photo.path }],
      });
      const stored = created().at(-1)!;
      assert.equal(done.releaseId, stored.name);
      assert.equal(done.releaseURL, stored.searchUrl);
    });

    it('publishes an event with its schedule and a CALL button without a URL; the topic defaults to STANDARD', async () => {
      const event = await post(['Harvest festival'], {
        topicType: 'EVENT',
        callToActionType: 'CALL',
        eventTitle: 'Harvest festival',
        eventStartDate: '2026-10-31',
        eventStartTime: '09:00',
        eventEndDate: '2026-11-01',
        eventEndTime: '17:30',
      });
      assert.equal(event.state, 'PUBLISHED', event.error ?? '');
      const sent = fake.calls('POST /v4/accounts/:account/locations/:location/localPosts').at(-1)!.json;
      assert.deepEqual(sent.callToAction, { actionType: 'CALL' });
      assert.deepEqual(sent.event, {
        title: 'Harvest festival',
        schedule: {
          startDate: { year: 2026, month: 10, day: 31 },
          startTime: { hours: 9, minutes: 0 },
          endDate: { year: 2026, month: 11, day: 1 },
          endTime: { hours: 17, minutes: 30 },
        },
      });

      const plain = await post(['Just words']);
      assert.equal(plain.state, 'PUBLISHED', plain.error ?? '');
      assert.deepEqual(fake.calls('POST /v4/accounts/:account/locations/:location/localPosts').at(-1)!.json, {
        languageCode: 'de',
        summary: 'Just words',
        topicType: 'STANDARD',
      });
    });

    it('writes the post in the language its settings name, and refuses one that is no language code', async () => {
      const done = await post(['Bonjour'], { languageCode: 'fr' });
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.equal(fake.calls('POST /v4/accounts/:account/locations/:location/localPosts').at(-1)!.json.languageCode, 'fr');
      const refused = await account.callUntyped(
        'POST',
        '/posts',
        postBody('now', [entry(channelId, ['Hallo'], { settings: { __type: 'gmb', languageCode: 'German!' } })], { date: new Date().toISOString() }),
      );
      assertError(refused, 400, { path: 'posts.0.settings.languageCode', message: /must be a language code/ });
    });

    it('publishes an offer with its event and offer details; a button on an offer is not sent (Google ignores it)', async () => {
      const offer = await post(['Two for one'], {
        topicType: 'OFFER',
        callToActionType: 'SHOP',
        callToActionUrl: 'https://bakery.example/shop',
        eventTitle: 'Croissant week',
        eventStartDate: '2026-12-01',
        eventEndDate: '2026-12-07',
        offerCouponCode: 'CROISSANT',
        offerRedeemUrl: 'https://bakery.example/redeem',
        offerTerms: 'One per customer',
      });
      assert.equal(offer.state, 'PUBLISHED', offer.error ?? '');
      const sent = fake.calls('POST /v4/accounts/:account/locations/:location/localPosts').at(-1)!.json;
      assert.equal(sent.topicType, 'OFFER');
      assert.equal(sent.callToAction, undefined);
      assert.deepEqual(sent.event, {
        title: 'Croissant week',
        schedule: { startDate: { year: 2026, month: 12, day: 1 }, endDate: { year: 2026, month: 12, day: 7 } },
      });
      assert.deepEqual(sent.offer, { couponCode: 'CROISSANT', redeemOnlineUrl: 'https://bakery.example/redeem', termsConditions: 'One per customer' });
    });

    it('has no threads: only the first item is posted, with a warning', async () => {
      const before = created().length;
      const body = postBody('now', [entry(channelId, ['first', 'second'])], { date: new Date().toISOString() });
      const answer = await account.callUntyped('POST', '/posts', body);
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      const done = await settled(account, answer.body[0].postId);
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.equal(done.thread.length, 1);
      assert.match(done.warning, /no threads/);
      assert.equal(created().length, before + 1);
    });

    it('refuses before acceptance what Google would refuse, naming the rule', async () => {
      const photo = await uploadPng(account, herald);
      const video = await uploadMp4(account, herald, 2000);
      const attempt = async (items: { content: string; image?: { id: string; path: string }[] }[], settings: Record<string, unknown> = {}) =>
        account.callUntyped('POST', '/posts', postBody('now', [entry(channelId, items, { settings })], { date: new Date().toISOString() }));
      const problems = (answer: { status: number; body: any }) => {
        assert.equal(answer.status, 400, JSON.stringify(answer.body));
        return answer.body.errors.map((e: any) => `${e.path}: ${e.message}`).join('\n');
      };
      assert.match(problems(await attempt([{ content: 'x'.repeat(1501) }])), /posts\.0\.value\.0\.content: is 1501 characters.*at most 1500/);
      assert.match(problems(await attempt([{ content: 'two', image: [photo, photo] }])), /posts\.0\.value\.0\.image: has 2 files.*at most 1/);
      assert.match(problems(await attempt([{ content: 'film', image: [video] }])), /posts\.0\.value\.0\.image\.0: is video\/mp4/);
      assert.match(problems(await attempt([{ content: 'e' }], { topicType: 'EVENT', eventStartDate: '2026-10-01' })), /EVENT post needs settings\.eventTitle/);
      assert.match(
        problems(await attempt([{ content: 'e' }], { callToActionType: 'CALL', callToActionUrl: 'https://x.example' })),
        /must be left out for CALL/,
      );
      assert.match(problems(await attempt([{ content: 'e' }], { callToActionType: 'BOOK' })), /BOOK needs settings\.callToActionUrl/);
      assert.match(problems(await attempt([{ content: 'e' }], { topicType: 'ALERT' })), /posts\.0\.settings\.topicType/);
      assert.match(problems(await attempt([{ content: 'e' }], { topicType: 'EVENT', eventTitle: 'x', eventStartDate: '2026-13-45' })), /eventStartDate/);
    });

    it("ends in ERROR with Google's validation message when it refuses the post, and when it rejects it on policy", async () => {
      const before = created().length;
      fake.failNext(
        'POST /v4/accounts/:account/locations/:location/localPosts',
        googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [
          {
            '@type': 'type.googleapis.com/google.mybusiness.v4.ValidationError',
            errorDetails: [{ code: 3, field: 'media.source_url', message: 'The image could not be fetched.' }],
          },
        ]),
      );
      const refused = await post(['Broken photo']);
      assert.equal(refused.state, 'ERROR');
      assert.match(
        refused.error,
        /answered 400: INVALID_ARGUMENT Request contains an invalid argument\. \(media\.source_url: The image could not be fetched\.\)/,
      );
      assert.equal(refused.thread[0].attempts.length, 1, 'no retry');

      fake.rejectNext = true;
      const rejected = await post(['Call 555-0100 now']);
      assert.equal(rejected.state, 'ERROR');
      assert.match(rejected.error, /REJECTED/);
      assert.equal(created().length, before + 1);
    });

    it('fails on PERMISSION_DENIED and NOT_FOUND with what to do, without marking the channel for reconnection', async () => {
      fake.failNext('POST /v4/accounts/:account/locations/:location/localPosts', PERMISSION_DENIED);
      const denied = await post(['No access']);
      assert.equal(denied.state, 'ERROR');
      assert.match(denied.error, /403: PERMISSION_DENIED The caller does not have permission.*lost access to this location/);
      fake.failNext('POST /v4/accounts/:account/locations/:location/localPosts', googleError(404, 'NOT_FOUND', 'Requested entity was not found.'));
      const gone = await post(['Nowhere']);
      assert.equal(gone.state, 'ERROR');
      assert.match(gone.error, /404: NOT_FOUND Requested entity was not found/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
    });

    it('a quota of 0 (the project is not approved) fails at once, saying so, instead of retrying for an hour', async () => {
      fake.failNext('POST /v4/accounts/:account/locations/:location/localPosts', quotaExceeded(0));
      const done = await post(['Quota zero']);
      assert.equal(done.state, 'ERROR');
      assert.match(done.error, /quota of 0.*approved.*does not clear by waiting/);
      assert.deepEqual(
        done.thread[0].attempts.map((a) => a.outcome),
        ['failed'],
      );
    });

    it('waits out a per-minute quota and posts once', async () => {
      const before = created().length;
      fake.failNext('POST /v4/accounts/:account/locations/:location/localPosts', { ...quotaExceeded(300), headers: { 'retry-after': '1' } });
      const done = await post(['Patient']);
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.deepEqual(
        done.thread[0].attempts.map((a) => a.outcome),
        ['retry', 'published'],
      );
      assert.match(done.thread[0].attempts[0].detail, /RESOURCE_EXHAUSTED/);
      assert.equal(created().length, before + 1);
    });

    serverErrorAfterCreate(() => ({
      fake,
      account,
      publish: (text) => publishNow(account, channelId, [text], { topicType: 'STANDARD' }),
      held: (text) => created().filter((p) => p.summary === text).length,
    }));

    it('after a lost answer, finds the post among the location’s latest instead of posting again', async () => {
      const before = created().length;
      fake.failNext('POST /v4/accounts/:account/locations/:location/localPosts', { handleThenHang: true });
      const done = await post(['Did it go out?'], { topicType: 'STANDARD' });
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      assert.equal(created().length, before + 1, 'one post, not two');
      assert.equal(done.releaseId, created().at(-1)!.name);
      assert.deepEqual(
        done.thread[0].attempts.map((a) => a.outcome),
        ['unknown'],
      );
      assert.equal(fake.calls('GET /v4/accounts/:account/locations/:location/localPosts').at(-1)!.query.pageSize, '20');
    });

    it('after a lost request that Google never saw, fails asking the user to check rather than posting twice', async () => {
      const before = created().length;
      const posts = fake.calls('POST /v4/accounts/:account/locations/:location/localPosts').length;
      fake.failNext('POST /v4/accounts/:account/locations/:location/localPosts', { hang: true });
      const done = await post(['Lost on the way']);
      assert.equal(done.state, 'ERROR');
      assert.match(done.error, /does not show it yet/);
      assert.equal(created().length, before);
      assert.equal(fake.calls('POST /v4/accounts/:account/locations/:location/localPosts').length, posts + 1, 'sent once');
    });

    it("lists the location's latest posts for a post published by hand (GET /posts/{id}/missing)", async () => {
      const draft = await saveDraft(account, channelId, 'by hand', { __type: 'gmb' });
      const missing = await account.callUntyped('GET', `/posts/${draft}/missing`);
      assert.equal(missing.status, 200, JSON.stringify(missing.body));
      const newest = created().at(-1)!;
      assert.deepEqual(missing.body[0], { id: newest.name, url: newest.searchUrl, text: newest.summary, at: newest.createTime });
    });

    it('refreshes an expired access token (Google keeps the refresh token), then posts', async () => {
      fake.validTokens.clear();
      const refreshes = () => fake.calls('POST /token').filter((r) => r.form?.grant_type === 'refresh_token');
      const before = refreshes().length;
      const done = await post(['After refresh']);
      assert.equal(done.state, 'PUBLISHED', done.error ?? '');
      const [refresh] = refreshes().slice(before);
      assert.equal(refresh.form?.refresh_token, '1//gmb-refresh-1');
      assert.equal(refresh.form?.client_id, CLIENT_ID);
      assert.equal(refresh.form?.client_secret, CLIENT_SECRET);
      const sent = fake.calls('POST /v4/accounts/:account/locations/:location/localPosts').slice(-2);
      assert.deepEqual(
        sent.map((r) => r.headers.authorization),
        ['Bearer ya29.gmb-1', 'Bearer ya29.gmb-2'],
      );

      // The refresh token was kept: the next refresh uses it again.
      fake.validTokens.clear();
      const again = await post(['Second refresh']);
      assert.equal(again.state, 'PUBLISHED', again.error ?? '');
      assert.equal(refreshes().at(-1)!.form?.refresh_token, '1//gmb-refresh-1');
    });

    it('a revoked grant (invalid_grant) marks the channel for reconnection; connecting again restores it', async () => {
      fake.validTokens.clear();
      fake.refreshTokens.clear();
      const done = await post(['Nobody home']);
      assert.equal(done.state, 'ERROR');
      assert.match(done.error, /must be reconnected/);
      assert.match(done.error, /invalid_grant/);
      assert.equal((await listedChannel(account, channelId)).needsReconnect, true);

      const again = await connectOAuth(herald, account, 'gmb', { pick: (choices) => choices.findIndex((c) => c.name === 'Bakery') });
      assert.equal(again.id, channelId, 'the same location is the same channel');
      assert.equal((await listedChannel(account, channelId)).needsReconnect, false);
      const back = await post(['Back again']);
      assert.equal(back.state, 'PUBLISHED', back.error ?? '');
    });

    it('refuses to connect when Google gives the project a quota of 0, saying it must be approved', async () => {
      fake.failNext('GET /v1/accounts', quotaExceeded(0));
      const finished = await followToCallback(herald, await startConnect(account, 'gmb'));
      assert.equal(finished.status, 400, JSON.stringify(finished.body));
      assert.match(finished.body.message, /quota of 0.*approved/);
    });
  });
}
