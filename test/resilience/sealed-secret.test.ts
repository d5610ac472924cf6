/**
 * A store whose channel tokens were sealed with one secret, run with another
 * (issue 27: the README's PostgreSQL block exported a new HERALD_SECRET before
 * herald move-store): every process refuses to start with the reason and what to
 * do, /api/ready names it in its `secret` check, a post due on such a channel
 * fails with the reason instead of "Herald stopped", and move-store refuses a
 * secret that does not open the store before it moves anything.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSecretBox } from '../../src/lib/secrets.ts';
import { UNKNOWN_OUTCOME } from '../../src/scheduler/engine.ts';
import { addWebhookChannel, createPosts, entry, postBody } from '../helpers/api-fixtures.ts';
import { eventually, freePort, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { createTestDatabase, storeSuite, testStores } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startHeraldProcess } from '../helpers/herald-process.ts';
import { describeRun, runHerald } from '../cli/run-herald.ts';

/** What the test Heralds seal with (test/helpers/herald.ts), and another secret, as strong. */
const SEALED_WITH = 'test-secret-2f9c4e7a1b3d5f8e0a6c9b2d4f7e1a3c';
const OTHER_SECRET = 'other-secret-8d1e5b3f9a7c2e4d6b0f1a3c5e7d9b2f';

/** The key id a secret seals under (the second part of a sealed value), as the refusal names it. */
function keyId(secret: string): string {
  return createSecretBox(secret).encrypt('x').split('.')[1];
}

function mismatch(sealedWith: string, used: string): RegExp {
  return new RegExp(`sealed with key ${keyId(sealedWith)}, but HERALD_SECRET is key ${keyId(used)}`);
}

function assertNoSecret(text: string): void {
  for (const secret of [SEALED_WITH, OTHER_SECRET]) assert.ok(!text.includes(secret), 'the secret itself is never shown');
}

for (const store of await testStores()) {
  describe(`a secret that does not open the store's sealed values (${store})`, storeSuite(store), () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-sealed-'));
    let sealer: TestHerald;
    let other: TestHerald;
    let account: TestAccount;
    let receiver: WebhookReceiver;

    before(async () => {
      receiver = await startWebhookReceiver();
      // Seals the account's API key and the channel's URL and signing secret with SEALED_WITH; publishes nothing.
      sealer = await startHerald(store, { dataDir });
      account = await sealer.newAccount();
      // The same store, run with another secret, its engine publishing.
      other = await startHerald(store, {
        dataDir,
        databaseUrl: sealer.services.config.databaseUrl,
        env: { HERALD_SECRET: OTHER_SECRET },
        engine: { pollMs: 100 },
      });
    });
    after(async () => {
      await other?.close();
      await sealer?.close();
      await receiver?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('herald start, serve, worker (and keys) refuse to start, saying which keys differ and what to do', async () => {
      await addWebhookChannel(account, {}, `${receiver.url}/refused`);
      const runs = await Promise.all(
        (['start', 'serve', 'worker'] as const).map(async (command) => ({
          command,
          run: await runHerald([command], {
            HERALD_DATA_DIR: dataDir,
            ...(sealer.services.config.databaseUrl ? { HERALD_DATABASE_URL: sealer.services.config.databaseUrl } : {}),
            HERALD_SECRET: OTHER_SECRET,
            HERALD_PORT: String(await freePort()),
            HERALD_HOST: '127.0.0.1',
            HERALD_LOG_LEVEL: 'error',
          }),
        })),
      );
      // Nor does a command that would seal a new key with it (that key would open for this secret alone).
      const keys = await runHerald(['keys', 'create', '--name', 'sealed with the other secret'], {
        HERALD_DATA_DIR: dataDir,
        ...(sealer.services.config.databaseUrl ? { HERALD_DATABASE_URL: sealer.services.config.databaseUrl } : {}),
        HERALD_SECRET: OTHER_SECRET,
      });
      assert.equal(keys.code, 1, describeRun(keys));
      assert.match(keys.stderr, mismatch(SEALED_WITH, OTHER_SECRET));
      assert.doesNotMatch(keys.stdout, /hk_/, 'no key was made');
      for (const { command, run } of runs) {
        assert.equal(run.code, 1, `herald ${command}: ${describeRun(run)}`);
        assert.match(run.stderr, /Herald does not start: HERALD_SECRET does not open the channel tokens, API keys and webhook secrets this store sealed/);
        assert.match(run.stderr, mismatch(SEALED_WITH, OTHER_SECRET));
        assert.match(
          run.stderr,
          /the HERALD_SECRET it ran with before or, for a store moved from the embedded store \(herald move-store\), the content of the secret.key/,
        );
        assertNoSecret(run.stderr + run.stdout);
      }
    });

    it('/api/ready fails its secret check with the same reason', async () => {
      const answer = await fetch(`${other.url}/api/ready`);
      const body = (await answer.json()) as { status: string; checks: Record<string, string> };
      assert.equal(answer.status, 503, JSON.stringify(body));
      assert.match(body.checks.secret, mismatch(SEALED_WITH, OTHER_SECRET));
      assertNoSecret(JSON.stringify(body));
      const own = (await (await fetch(`${sealer.url}/api/ready`)).json()) as { checks: Record<string, string> };
      assert.equal(own.checks.secret, 'ok', 'the secret that sealed the store opens it');
    });

    it('a post due on a channel whose token cannot be unsealed fails with that reason, never "Herald stopped"', async () => {
      const channel = await addWebhookChannel(account, {}, `${receiver.url}/due`);
      const [created] = await createPosts(account, postBody('now', [entry(channel.id, ['due with the wrong secret'])]));
      const post = await eventually(
        async () => {
          const p = (await account.callUntyped('GET', `/posts/${created.postId}`)).body;
          return p.state === 'ERROR' ? p : undefined;
        },
        30_000,
        'the post to fail',
      );
      assert.notEqual(post.error, UNKNOWN_OUTCOME);
      assert.match(post.error, /^Not sent: channel ".*"'s access could not be unsealed \(/);
      assert.match(post.error, mismatch(SEALED_WITH, OTHER_SECRET));
      assert.match(post.error, /Run Herald with the secret that sealed this store/);
      assertNoSecret(post.error);
      assert.equal(receiver.deliveries.filter((d) => d.path.endsWith('/due')).length, 0, 'nothing reached the receiver');
    });
  });
}

describe('move-store and the secret of the embedded store', storeSuite('postgres'), () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-sealed-move-'));
  let target: { url: string; drop: () => Promise<void> };

  before(async () => {
    target = await createTestDatabase();
    // The embedded store as "npm start" leaves it: no HERALD_SECRET, so its tokens are sealed with the generated secret.key.
    const embedded = await startHerald('sqlite', { dataDir, env: { HERALD_SECRET: '' } });
    await addWebhookChannel(await embedded.newAccount(), {}, 'http://127.0.0.1:9/hook/moved');
    await embedded.close();
  });
  after(async () => {
    await target?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a new HERALD_SECRET before moving anything, then moves with the store own secret and says to keep it', async () => {
    const generated = fs.readFileSync(path.join(dataDir, 'secret.key'), 'utf8').trim();
    const refused = await runHerald(['move-store', '--to', target.url], { HERALD_DATA_DIR: dataDir, HERALD_SECRET: OTHER_SECRET });
    assert.equal(refused.code, 1, describeRun(refused));
    assert.match(refused.stderr, mismatch(generated, OTHER_SECRET));
    assert.ok(refused.stderr.includes(`The secret in ${path.join(dataDir, 'secret.key')} opens it: unset HERALD_SECRET`), refused.stderr);
    assert.match(refused.stderr, /Nothing was moved\./);
    assertNoSecret(refused.stderr);
    assert.ok(!refused.stderr.includes(generated), 'the refusal does not print the secret that opens the store');

    const moved = await runHerald(['move-store', '--to', target.url], { HERALD_DATA_DIR: dataDir });
    assert.equal(moved.code, 0, describeRun(moved));
    assert.ok(moved.stdout.includes(`HERALD_SECRET="$(cat ${path.join(dataDir, 'secret.key')})"`), moved.stdout);

    // Elsewhere, without the data folder: the secret.key's content opens the moved store; a new secret is refused.
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-sealed-elsewhere-'));
    try {
      const env = { HERALD_DATA_DIR: elsewhere, HERALD_DATABASE_URL: target.url, HERALD_LOG_LEVEL: 'error' };
      const wrong = await runHerald(['worker'], { ...env, HERALD_SECRET: OTHER_SECRET });
      assert.equal(wrong.code, 1, describeRun(wrong));
      assert.match(wrong.stderr, mismatch(generated, OTHER_SECRET));
      const right = await startHeraldProcess({ dataDir: elsewhere, databaseUrl: target.url }, 'worker', { HERALD_SECRET: generated });
      await right.running;
      assert.equal(await right.stop(), 0, right.output());
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
