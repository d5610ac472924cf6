/**
 * E-mail against a real SMTP server (STARTTLS with a certificate Herald is told
 * to trust, AUTH): invitations whose link lets the invitee join, password reset
 * links that work once, a failed post's mail, people who opted out, a server
 * that refuses for a while, the digest, and a Herald without mail that says so
 * and offers the links instead.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { eventually, expectStatus, startHerald, testAccount, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { startTestnet, type TestnetFake } from '../fakes/testnet.ts';
import { startSmtpServer, type Received, type SmtpServer } from '../helpers/smtp.ts';
import { teardown } from '../helpers/teardown.ts';
import { WebClient } from './web-client.ts';
import { channelNeedsReconnect } from '../../src/scheduler/tokens.ts';
import { loadConfig } from '../../src/config.ts';
import { postFailedLetter } from '../../src/mail/compose.ts';
import { MAIL_TEXTS } from '../../src/mail/catalogue.ts';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a new password, chosen';

/** The first link of a mail's text that starts with `prefix`. */
function linkIn(mail: Received, prefix: string): URL {
  const found = mail.text.split(/\s+/).find((word) => word.startsWith(prefix));
  assert.ok(found, `no link starting ${prefix} in:\n${mail.text}`);
  return new URL(found);
}

for (const store of await testStores()) {
  describe(`mail (${store})`, storeSuite(store), () => {
    let smtp: SmtpServer;
    let net: TestnetFake;
    let herald: TestHerald;
    let owner: WebClient;
    let account: TestAccount;

    before(async () => {
      smtp = await startSmtpServer();
      net = await startTestnet();
      herald = await startHerald(store, {
        env: {
          HERALD_SMTP_URL: smtp.url,
          HERALD_MAIL_FROM: 'Herald <herald@example.test>',
          HERALD_SMTP_CA: smtp.caFile,
          HERALD_TESTNET_API_URL: net.url,
        },
        engine: { pollMs: 100 },
        mail: { pollMs: 100, retryDelaysMs: [200, 200, 200] },
      });
      owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com', PASSWORD, { name: 'Olivia Owner' });
      const accountId = await herald.services.accounts.ownerAccount();
      const { key } = await herald.services.accounts.createKey(accountId, 'test');
      account = testAccount(herald.api, accountId, key);
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => net.close(),
        () => smtp.close(),
      ),
    );

    const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));

    it('an invitation arrives over STARTTLS with AUTH, names who invited and the account, and its link lets the invitee join', async () => {
      const invited = await owner.app('POST', '/invitations', { email: 'member@example.com', role: 'member' });
      assert.equal(invited.status, 201, JSON.stringify(invited.body));
      assert.equal(invited.body.mailed, true);
      const mail = await smtp.waitFor((m) => m.to.includes('member@example.com'), 'the invitation');
      assert.equal(mail.secure, true, 'sent after STARTTLS');
      assert.equal(mail.user, 'herald-mailer', 'sent after AUTH');
      const { name: accountName } = await herald.services.accounts.describe(account.id);
      assert.match(mail.subject, /Olivia Owner/);
      assert.ok(mail.subject.includes(accountName), `the account's name in "${mail.subject}"`);
      assert.match(mail.html, /<a href="http:\/\/127\.0\.0\.1:\d+\/signup\?/, 'the HTML has the link too');
      const link = linkIn(mail, `${herald.url}/signup?`);
      const member = new WebClient(herald.url);
      const joined = await member.signUp(link.searchParams.get('email')!, PASSWORD, { invitation: link.searchParams.get('invitation')!, name: 'Max Member' });
      assert.equal(joined.body.user.role, 'member');
    });

    it('a reset link works once: the new password signs in, other sessions end, and the link is refused after', async () => {
      const elsewhere = new WebClient(herald.url);
      assert.equal((await elsewhere.logIn('member@example.com', PASSWORD)).status, 200);
      const stranger = new WebClient(herald.url);
      const unknown = await stranger.app('POST', '/auth/password-reset', { email: 'nobody@example.com' });
      const known = await stranger.app('POST', '/auth/password-reset', { email: 'Member@Example.com' });
      assert.equal(known.status, 202);
      assert.deepEqual(unknown.body, known.body, 'the answer does not tell whether an address exists');
      assert.deepEqual(known.body, { mailEnabled: true });
      const mail = await smtp.waitFor((m) => m.to.includes('member@example.com') && /password/i.test(m.subject), 'the reset mail');
      assert.match(mail.text, /\/settings\/mail/, 'the mail links to the choices');
      const link = linkIn(mail, `${herald.url}/reset-password#token=`);
      const token = new URLSearchParams(link.hash.slice(1)).get('token')!;

      const reset = await stranger.app('POST', '/auth/password-reset/complete', { token, password: NEW_PASSWORD });
      assert.equal(reset.status, 200, JSON.stringify(reset.body));
      assert.equal(reset.body.user.email, 'member@example.com', 'signed in as the person');
      assert.equal((await elsewhere.app('GET', '/session')).status, 401, 'the other session ended');
      assert.equal((await new WebClient(herald.url).logIn('member@example.com', PASSWORD)).status, 401, 'the old password no longer works');
      assert.equal((await new WebClient(herald.url).logIn('member@example.com', NEW_PASSWORD)).status, 200);

      const again = await new WebClient(herald.url).app('POST', '/auth/password-reset/complete', { token, password: 'yet another password' });
      assert.equal(again.status, 400);
      assert.equal(again.body.errors[0].path, 'token');
      assert.match(again.body.errors[0].message, /used already/);
      assert.equal(mailsTo('nobody@example.com').length, 0);
      const rows = await herald.services.store.db.selectFrom('mail_outbox').select('to_address').where('to_address', '=', 'nobody@example.com').execute();
      assert.equal(rows.length, 0, 'nothing was written for an unknown address');
    });

    it('an expired link is refused saying so; a short password is refused naming the field', async () => {
      const person = await herald.services.passwordResets.person('member@example.com');
      const expired = await herald.services.passwordResets.create(person!.id, Date.now() - 2 * 60 * 60_000);
      const answer = await new WebClient(herald.url).app('POST', '/auth/password-reset/complete', { token: expired, password: NEW_PASSWORD });
      assert.equal(answer.status, 400);
      assert.match(answer.body.errors[0].message, /expired/);
      const fresh = await herald.services.passwordResets.create(person!.id);
      const short = await new WebClient(herald.url).app('POST', '/auth/password-reset/complete', { token: fresh, password: 'short' });
      assert.equal(short.status, 400);
      assert.equal(short.body.errors[0].path, 'password');
    });

    it("a failed post's mail names the post, the channel and the network's reason, and links to the post; who opted out gets none", async () => {
      const member = new WebClient(herald.url);
      assert.equal((await member.logIn('member@example.com', NEW_PASSWORD)).status, 200);
      const optedOut = await member.app('PUT', '/mail', { postFailed: false });
      assert.equal(optedOut.status, 200, JSON.stringify(optedOut.body));
      assert.deepEqual(optedOut.body.choices, { postFailed: false, channelReconnect: true, accessExpiring: true, digest: 'off' });

      const added = await account.call('POST', '/integrations', {
        identifier: 'testnet',
        credentials: { accessToken: net.validToken, refreshToken: [...net.refreshTokens][0], account: 'mailer' },
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      net.failNext('POST /posts', { status: 400, body: { error: { message: 'Duplicate content is not allowed' } } });
      const [created] = await createPosts(account, postBody('now', [entry(added.body.id, ['A launch note that will not go out'])]));
      const mail = await smtp.waitFor((m) => m.to.includes('owner@example.com') && m.text.includes('A launch note'), 'the failure mail');
      assert.ok(mail.subject.includes(added.body.name), `the channel in "${mail.subject}"`);
      assert.match(mail.text, /Duplicate content is not allowed/);
      assert.ok(mail.text.includes(`${herald.url}/posts/${created.postId}`), 'a link to the post in the web application');
      // The mails of one failure are written together: the member's would be in the outbox by now.
      const forMember = await herald.services.store.db
        .selectFrom('mail_outbox')
        .select('id')
        .where('to_address', '=', 'member@example.com')
        .where('kind', '=', 'post_failed')
        .execute();
      assert.equal(forMember.length, 0, 'the member who opted out gets no failure mail');
    });

    it('a server that refuses for now (451) gets the letter again later', async () => {
      smtp.refuseNext(2);
      const invited = await owner.app('POST', '/invitations', { email: 'later@example.com', role: 'member' });
      assert.equal(invited.body.mailed, true);
      await smtp.waitFor((m) => m.to.includes('later@example.com'), 'the invitation after two refusals');
      assert.equal(smtp.refused, 2);
      const row = await eventually(async () => {
        const letter = await herald.services.store.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', 'later@example.com').executeTakeFirst();
        return letter?.state === 'sent' ? letter : undefined;
      });
      assert.equal(row.attempts, 3);
      assert.equal(row.body_sealed, null, 'the body (and its link) is not kept once sent');
    });

    it("the digest lists what was published and what failed, in the person's language", async () => {
      await owner.app('PUT', '/preferences', { language: 'fr' });
      assert.equal((await owner.app('PUT', '/mail', { digest: 'daily' })).status, 200);
      const channel = expectStatus(await account.call('GET', '/integrations'), 200).find((c) => c.name.includes('mailer'))!;
      const [published] = await createPosts(account, postBody('now', [entry(channel.id, ['A note that went out fine'])]));
      await eventually(
        async () => (expectStatus(await account.call('GET', `/posts/${published.postId}`), 200).state === 'PUBLISHED' ? true : undefined),
        15_000,
      );
      const owner_ = await herald.services.passwordResets.person('owner@example.com');
      const now = Date.now();
      await herald.services.store.db.updateTable('mail_choices').set({ digest_due_at: now }).where('user_id', '=', owner_!.id).execute();
      assert.equal(await herald.engine!.mailDigest.run(now + 1_000), 1);
      assert.equal(await herald.engine!.mailDigest.run(now + 2_000), 0, 'claimed once: the next is a day later');
      const digest = await smtp.waitFor((m) => m.to.includes('owner@example.com') && /Herald :/.test(m.subject), 'the digest');
      assert.match(digest.subject, /Votre journée sur Herald : 1 publiées, 1 en échec/);
      assert.match(digest.text, /A note that went out fine/);
      assert.match(digest.text, /A launch note/);
      assert.match(digest.html, /<li>/);
    });

    it('a channel that needs connecting again is mailed with the reason and a link to the channels', async () => {
      const row = await herald.services.store.db.selectFrom('channels').selectAll().where('account_id', '=', account.id).executeTakeFirstOrThrow();
      await channelNeedsReconnect(herald.services, row, 'the network revoked the token');
      const mail = await smtp.waitFor((m) => m.to.includes('member@example.com') && m.text.includes('revoked the token'), 'the reconnect mail');
      assert.ok(mail.subject.includes(row.name), mail.subject);
      assert.ok(mail.text.includes(`${herald.url}/channels`), mail.text);
    });
  });

  describe(`without mail (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    before(async () => {
      herald = await startHerald(store, { mail: true });
    });
    after(() => herald.close());

    it('the API says mail is off, and the invitation offers its link to copy', async () => {
      const owner = new WebClient(herald.url);
      await owner.signUp('owner@example.com', PASSWORD);
      const settings = await owner.app('GET', '/mail');
      assert.equal(settings.body.enabled, false);
      const invited = await owner.app('POST', '/invitations', { email: 'someone@example.com', role: 'member' });
      assert.equal(invited.status, 201);
      assert.equal(invited.body.mailed, false);
      assert.match(invited.body.signupUrl, /\/signup\?invitation=/);
      const forgot = await new WebClient(herald.url).app('POST', '/auth/password-reset', { email: 'owner@example.com' });
      assert.equal(forgot.status, 202);
      assert.deepEqual(forgot.body, { mailEnabled: false });
      const letters = await herald.services.store.db.selectFrom('mail_outbox').select('id').execute();
      assert.equal(letters.length, 0);
      assert.equal(herald.mailer, undefined, 'no sender runs without SMTP settings');
    });

    it('herald people reset-password prints a single-use link for the owner, from the terminal', async () => {
      const { config } = herald.services;
      const env = {
        PATH: process.env.PATH ?? '',
        HERALD_DATA_DIR: config.dataDir,
        HERALD_SECRET: config.secret!,
        HERALD_PUBLIC_URL: config.publicUrl,
        ...(config.databaseUrl ? { HERALD_DATABASE_URL: config.databaseUrl } : {}),
      };
      // From the sources (not bin/herald.js's bundle): the command as the user runs it, on this Herald's store.
      const root = path.resolve(import.meta.dirname, '../..');
      const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'people', 'reset-password'], { cwd: root, env });
      assert.match(run.stdout, /owner@example\.com \(owner\)/);
      const link = new URL(run.stdout.split(/\s+/).find((word) => word.startsWith(`${config.publicUrl}/reset-password#token=`))!);
      const token = new URLSearchParams(link.hash.slice(1)).get('token')!;
      const owner = new WebClient(herald.url);
      assert.equal((await owner.app('POST', '/auth/password-reset/complete', { token, password: NEW_PASSWORD })).status, 200);
      assert.equal((await owner.app('POST', '/auth/password-reset/complete', { token, password: NEW_PASSWORD })).status, 400, 'once only');
      assert.equal((await new WebClient(herald.url).logIn('owner@example.com', NEW_PASSWORD)).status, 200);
    });
  });
}

describe('mail settings', () => {
  it('go together, name the SMTP scheme, and a CA file that cannot be read is said at start', () => {
    const base = { HERALD_DATA_DIR: '/tmp/unused' };
    assert.equal(loadConfig(base).mail, undefined, 'no mail by default');
    assert.throws(() => loadConfig({ ...base, HERALD_SMTP_URL: 'smtp://mail.example.com:587' }), /HERALD_SMTP_URL and HERALD_MAIL_FROM go together/);
    assert.throws(() => loadConfig({ ...base, HERALD_SMTP_URL: 'http://mail.example.com', HERALD_MAIL_FROM: 'h@example.com' }), /smtp:\/\/ or smtps:\/\//);
    assert.throws(
      () => loadConfig({ ...base, HERALD_SMTP_URL: 'smtps://mail.example.com', HERALD_MAIL_FROM: 'h@example.com', HERALD_SMTP_CA: '/nonexistent/ca.pem' }),
      /HERALD_SMTP_CA: cannot read/,
    );
    const mail = loadConfig({ ...base, HERALD_SMTP_URL: 'smtps://u:p@mail.example.com', HERALD_MAIL_FROM: 'Herald <h@example.com>' }).mail;
    assert.deepEqual(mail, { smtpUrl: 'smtps://u:p@mail.example.com', from: 'Herald <h@example.com>', ca: undefined });
  });

  it('escape what comes from outside in the HTML, and every language has every text', () => {
    const letter = postFailedLetter('ja', {
      channel: 'Acme <b>',
      excerpt: '<script>alert(1)</script>',
      reason: 'x & y',
      postUrl: 'http://h.example/posts/1',
      choicesUrl: 'http://h.example/settings/mail',
    });
    assert.ok(!letter.html.includes('<script>'), letter.html);
    assert.ok(letter.html.includes('&lt;script&gt;') && letter.html.includes('x &amp; y'));
    assert.ok(letter.text.includes('<script>alert(1)</script>'), 'the plain text keeps the words as they are');
    assert.match(letter.subject, /Acme <b> への投稿を公開できませんでした/);
    const english = Object.keys(MAIL_TEXTS.en).sort();
    for (const [language, texts] of Object.entries(MAIL_TEXTS)) {
      assert.deepEqual(Object.keys(texts).sort(), english, language);
      for (const [key, text] of Object.entries(texts)) {
        const names = (t: string) => [...t.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
        assert.deepEqual(names(text), names(MAIL_TEXTS.en[key as keyof typeof MAIL_TEXTS.en]), `${language} ${key} names the same values`);
      }
    }
  });
});
