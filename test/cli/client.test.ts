/**
 * The `herald` client commands against a running Herald, run as a user runs
 * them: the real bin/herald.js as a child process, an empty home folder, the
 * settings in the environment. Each command's output and exit code on success,
 * on a 4xx, with a wrong key, with no server, and with a URL missing /api.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually, freePort, PNG_1x1, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { addWebhookChannel, type Channel } from '../helpers/api-fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { CLIENT_COMMAND_NAMES } from '../../src/cli/index.ts';
import { describeRun, emptyHome, printed, runHerald } from './run-herald.ts';

const ESC = '\x1b[';

describe('herald client: help', () => {
  it('every command answers --help with its usage and an example, exit 0', async () => {
    const runs = await Promise.all(CLIENT_COMMAND_NAMES.map(async (name) => ({ name, run: await runHerald([...name.split(' '), '--help'], {}) })));
    for (const { name, run } of runs) {
      assert.equal(run.code, 0, `${name}: ${describeRun(run)}`);
      assert.ok(run.stdout.startsWith(`Usage: herald ${name}`), `${name}: ${run.stdout}`);
      assert.match(run.stdout, /Examples?:\n {2}herald /, `${name} --help has no example`);
    }
  });

  it('herald --help lists the client commands beside the server ones', async () => {
    const run = await runHerald(['--help'], {});
    assert.equal(run.code, 0);
    for (const name of ['start', 'keys create', 'login', 'posts create', 'webhooks list']) assert.ok(run.stdout.includes(name), name);
  });

  it('an unknown option is a usage error: exit 2 and a pointer to --help', async () => {
    const run = await runHerald(['posts', 'list', '--bogus'], { HERALD_API_KEY: 'k' });
    assert.equal(run.code, 2, describeRun(run));
    assert.match(run.stderr, /Unknown option '--bogus'/);
    assert.match(run.stderr, /herald posts list --help/);
    assert.equal(run.stdout, '');
  });
});

// The client only speaks HTTP to the API, whose routes are tested on both stores: one store here.
for (const store of ['sqlite'] as const) {
  describe(`herald client commands (${store})`, () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    let channel: Channel;
    let second: Channel;
    let user: ReturnType<typeof emptyHome>;
    let env: Record<string, string>;
    const files: string[] = [];

    const cli = (args: string[], extra: Record<string, string> = {}) => runHerald(args, { ...env, ...extra });

    before(async () => {
      herald = await startHerald(store, { engine: true });
      receiver = await startWebhookReceiver();
      account = await herald.newAccount();
      channel = await addWebhookChannel(account, { name: 'Main hook', postingTimes: ['09:00', '17:00'] });
      second = await addWebhookChannel(account, { name: 'Second hook' });
      user = emptyHome();
      env = { HOME: user.home, HERALD_API_URL: `${herald.url}/api`, HERALD_API_KEY: account.key };
      const image = path.join(user.home, 'photo.png');
      fs.writeFileSync(image, PNG_1x1);
      files.push(image);
    });
    after(async () => {
      await herald?.close();
      await receiver?.close();
      user?.cleanup();
    });

    describe('on success', () => {
      it('channels list: a table a person reads (no colour off a terminal), and --json for scripts', async () => {
        const run = await cli(['channels', 'list']);
        assert.equal(run.code, 0, describeRun(run));
        assert.match(run.stdout, /^ID\s+NAME\s+NETWORK/);
        assert.ok(run.stdout.includes(channel.id) && run.stdout.includes('Main hook') && run.stdout.includes('Second hook'), run.stdout);
        assert.ok(!run.stdout.includes(ESC), 'no colour codes when stdout is not a terminal');
        const listed = printed(await cli(['channels', 'list', '--json']));
        assert.deepEqual(listed, (await account.callUntyped('GET', '/integrations')).body);
      });

      it('channels slot: the next free posting time, in the local time zone', async () => {
        const expected = (await account.callUntyped('GET', `/find-slot/${channel.id}`)).body.date as string;
        assert.deepEqual(printed(await cli(['channels', 'slot', channel.id, '--json'])), { date: expected });
        const run = await cli(['channels', 'slot', channel.id], { TZ: 'Asia/Tokyo' });
        assert.equal(run.code, 0, describeRun(run));
        const tokyo = new Date(Date.parse(expected) + 9 * 3_600_000).toISOString();
        assert.ok(run.stdout.includes(`${tokyo.slice(0, 10)} ${tokyo.slice(11, 16)} (UTC+09:00)`), run.stdout);
      });

      it('upload <file>: uploads the bytes and prints the media object', async () => {
        const media = printed(await cli(['upload', files[0], '--json']));
        assert.equal(media.mimeType, 'image/png');
        assert.equal(media.originalName, 'photo.png');
        const served = await fetch(media.path);
        assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG_1x1);

        const run = await cli(['upload', files[0]]);
        assert.equal(run.code, 0, describeRun(run));
        assert.ok(run.stdout.includes(`Uploaded photo.png (image/png, ${PNG_1x1.length} B, 1x1)`), run.stdout);
        assert.match(run.stdout, /path: http:\/\/127\.0\.0\.1:\d+\/uploads\//);
      });

      it('upload with --idempotency-key twice stores the file once', async () => {
        const first = printed(await cli(['upload', files[0], '--idempotency-key', 'cli-upload-1', '--json']));
        const again = printed(await cli(['upload', files[0], '--idempotency-key', 'cli-upload-1', '--json']));
        assert.equal(again.id, first.id);
      });

      it('upload --url: the server fetches the file', async () => {
        const original = printed(await cli(['upload', files[0], '--json']));
        const fetched = printed(await cli(['upload', '--url', original.path, '--json']));
        assert.equal(fetched.mimeType, 'image/png');
        assert.notEqual(fetched.id, original.id);
      });

      it('posts create: two channels, a thread with media and a delay, settings from flags, at a local time', async () => {
        const run = await cli(
          [
            'posts',
            'create',
            '-i',
            `${channel.id},${second.id}`,
            '-c',
            'Launch day',
            '-m',
            files[0],
            '-c',
            'and a reply',
            '--delay',
            '5',
            '--at',
            '2031-03-04 19:00',
            '--setting',
            'note=hello',
            '--setting',
            'count=3',
            '--tag',
            'launch',
            '--json',
          ],
          { TZ: 'Asia/Tokyo' },
        );
        const created = printed(run);
        assert.deepEqual(created.map((p: any) => p.integration).sort(), [channel.id, second.id].sort());
        const post = (await account.callUntyped('GET', `/posts/${created[0].postId}`)).body;
        assert.equal(post.state, 'QUEUE');
        assert.equal(post.publishDate, '2031-03-04T10:00:00.000Z', '19:00 in Tokyo is 10:00 UTC');
        assert.deepEqual(
          post.thread.map((t: any) => [t.content, t.delay, t.image.length]),
          [
            ['Launch day', 0, 1],
            ['and a reply', 5, 0],
          ],
        );
        assert.ok(post.thread[0].image[0].path.startsWith(`${herald.url}/uploads/`), 'post.thread[0].image[0].path.startsWith(`${herald.url}/uploads/`)');
        assert.equal(post.settings.note, 'hello');
        assert.equal(post.settings.count, 3);
        assert.deepEqual(post.tags, [{ value: 'launch', label: 'launch' }]);
      });

      it('posts create --draft, --next-slot and --settings JSON; the human output names each post', async () => {
        const draft = await cli(['posts', 'create', '-i', channel.id, '-c', 'Just a draft', '--draft', '--settings', '{"note":"json"}']);
        assert.equal(draft.code, 0, describeRun(draft));
        assert.match(draft.stdout, /^Saved as draft: 1 post\nPOST\s+CHANNEL\s+DATE\n\S+\s+\S+/);
        const draftId = draft.stdout.split('\n')[2].split(/\s+/)[0];
        const stored = (await account.callUntyped('GET', `/posts/${draftId}`)).body;
        assert.equal(stored.state, 'DRAFT');
        assert.equal(stored.settings.note, 'json');

        const slot = (await account.callUntyped('GET', `/find-slot/${channel.id}`)).body.date;
        const [slotted] = printed(await cli(['posts', 'create', '-i', channel.id, '-c', 'At the next slot', '--next-slot', '--json']));
        assert.equal((await account.callUntyped('GET', `/posts/${slotted.postId}`)).body.publishDate, slot);
      });

      it('posts list: a range in local dates, a table, and --json equal to the API', async () => {
        const [made] = printed(await cli(['posts', 'create', '-i', second.id, '-c', 'Listed in range', '--at', '2031-06-01T12:00:00Z', '--json']));
        const range = ['--from', '2031-06-01', '--to', '2031-06-02'];
        const listed = printed(await cli(['posts', 'list', ...range, '--json']));
        const api = (await account.callUntyped('GET', '/posts?startDate=2031-06-01T00:00:00Z&endDate=2031-06-02T00:00:00Z')).body;
        assert.deepEqual(listed, api);
        assert.deepEqual(
          listed.posts.map((p: any) => p.id),
          [made.postId],
        );
        const run = await cli(['posts', 'list', ...range]);
        assert.equal(run.code, 0, describeRun(run));
        assert.match(run.stdout, new RegExp(`${made.postId}\\s+2031-06-01 12:00 \\(UTC\\+00:00\\)\\s+QUEUE\\s+Second hook\\s+Listed in range`));
      });

      it('posts get: the thread as text and as JSON', async () => {
        const [made] = printed(
          await cli(['posts', 'create', '-i', channel.id, '-c', 'Head of thread', '-c', 'tail of thread', '--delay', '2', '--draft', '--json']),
        );
        assert.deepEqual(printed(await cli(['posts', 'get', made.postId, '--json'])), (await account.callUntyped('GET', `/posts/${made.postId}`)).body);
        const run = await cli(['posts', 'get', made.postId]);
        assert.equal(run.code, 0, describeRun(run));
        assert.match(run.stdout, /1\. DRAFT .*\n {3}Head of thread\n2\. DRAFT {2}\+2 min .*\n {3}tail of thread/);
      });

      it('posts delete removes the post', async () => {
        const [made] = printed(await cli(['posts', 'create', '-i', channel.id, '-c', 'Short-lived', '--draft', '--json']));
        const run = await cli(['posts', 'delete', made.postId]);
        assert.equal(run.code, 0, describeRun(run));
        assert.match(run.stdout, new RegExp(`Deleted post ${made.postId}`));
        assert.equal((await account.callUntyped('GET', `/posts/${made.postId}`)).status, 404);
      });

      it('posts retry puts a failed post back in the queue, and it publishes', async () => {
        let calls = 0;
        receiver.respond(() => (++calls === 1 ? { status: 400, body: { error: 'not today' } } : { status: 200, body: { id: 'r-1' } }));
        const flaky = await addWebhookChannel(account, { name: 'Flaky' }, receiver.url);
        const [made] = printed(await cli(['posts', 'create', '-i', flaky.id, '-c', 'Try again', '--now', '--json']));
        await eventually(
          async () => ((await account.callUntyped('GET', `/posts/${made.postId}`)).body.state === 'ERROR' ? true : undefined),
          30_000,
          'the post to fail',
        );
        const retried = printed(await cli(['posts', 'retry', made.postId, '--json']));
        assert.equal(retried.id, made.postId);
        assert.notEqual(retried.state, 'ERROR');
        const published = await eventually(
          async () => {
            const post = (await account.callUntyped('GET', `/posts/${made.postId}`)).body;
            return post.state === 'PUBLISHED' ? post : undefined;
          },
          30_000,
          'the retried post to publish',
        );
        assert.equal(published.releaseId, 'r-1');
      });

      it('groups list shows the customers', async () => {
        const created = await account.callUntyped('POST', '/groups', { name: 'Acme' });
        const run = await cli(['groups', 'list']);
        assert.equal(run.code, 0, describeRun(run));
        assert.match(run.stdout, new RegExp(`${created.body.id}\\s+Acme`));
      });

      it('webhooks create, list, test, deliveries and delete', async () => {
        const hook = printed(await cli(['webhooks', 'create', '--url', receiver.url, '--event', 'post.published,post.failed', '--name', 'CLI hook', '--json']));
        assert.deepEqual(hook.events, ['post.published', 'post.failed']);
        assert.match(hook.secret, /^whsec_/);
        const listed = await cli(['webhooks', 'list']);
        assert.match(listed.stdout, new RegExp(`${hook.id}\\s+CLI hook\\s+${receiver.url.replace(/[.]/g, '\\.')}\\s+post\\.published,post\\.failed`));
        const ping = printed(await cli(['webhooks', 'test', hook.id, '--json']));
        const deliveries = printed(await cli(['webhooks', 'deliveries', hook.id, '--json']));
        assert.ok(
          deliveries.deliveries.some((d: any) => d.id === ping.id),
          JSON.stringify(deliveries),
        );
        const removed = await cli(['webhooks', 'delete', hook.id]);
        assert.equal(removed.code, 0, describeRun(removed));
        assert.ok(
          !(await account.callUntyped('GET', '/webhooks')).body.some((h: any) => h.id === hook.id),
          "!(await account.callUntyped('GET', '/webhooks')).body.some((h: any) => h.id === hook.id)",
        );
      });

      it('api: any route, the JSON answer on stdout', async () => {
        assert.deepEqual(printed(await cli(['api', 'GET', '/is-connected'])), { connected: true });
        assert.deepEqual(printed(await cli(['api', 'GET', '/public/v1/notifications', '--query', 'page=0'])).page, 0);
      });

      it('whoami: the API key in use and a live check', async () => {
        const run = await cli(['whoami']);
        assert.equal(run.code, 0, describeRun(run));
        assert.match(run.stdout, /Credential:\s+API key \S+… from HERALD_API_KEY/);
        assert.ok(!run.stdout.includes(account.key), 'the key itself is never printed');
        assert.match(run.stdout, /Status:\s+connected, \d+ channels/);
        assert.equal(printed(await cli(['status', '--json'])).source, 'api-key');
      });
    });

    describe('on failure', () => {
      it('a 4xx: exit 1, nothing on stdout, the server message on stderr (also with --json)', async () => {
        const api = (await account.callUntyped('GET', '/posts/no-such-post')).body;
        for (const args of [
          ['posts', 'get', 'no-such-post'],
          ['posts', 'get', 'no-such-post', '--json'],
        ]) {
          const run = await cli(args);
          assert.equal(run.code, 1, describeRun(run));
          assert.equal(run.stdout, '');
          assert.ok(run.stderr.includes(api.message), run.stderr);
          assert.match(run.stderr, /HTTP 404/);
        }
      });

      it('a rejected body: the fields and rules the server named', async () => {
        const run = await cli(['posts', 'create', '-i', channel.id, '-c', 'x'.repeat(10), '--at', '2031-01-01', '--setting', '__type=not-a-provider']);
        assert.equal(run.code, 1, describeRun(run));
        assert.match(run.stderr, /HTTP 4\d\d/);
        assert.match(run.stderr, /^ {2}- \S+: /m, 'each offending field on its own line');
      });

      it('posts retry of a post that did not fail: the server refuses, exit 1', async () => {
        const [made] = printed(await cli(['posts', 'create', '-i', channel.id, '-c', 'Queued fine', '--at', '2031-01-01T00:00:00Z', '--json']));
        const run = await cli(['posts', 'retry', made.postId]);
        assert.equal(run.code, 1, describeRun(run));
        assert.match(run.stderr, /HTTP 409/);
      });

      it('usage errors: exit 2 without calling the server', async () => {
        const noWhen = await cli(['posts', 'create', '-i', channel.id, '-c', 'when?']);
        assert.equal(noWhen.code, 2, describeRun(noWhen));
        assert.match(noWhen.stderr, /say when: --now, --at <date>, --next-slot, or --draft/);
        const badDate = await cli(['posts', 'create', '-i', channel.id, '-c', 'x', '--at', 'next tuesday']);
        assert.equal(badDate.code, 2);
        assert.match(badDate.stderr, /--at "next tuesday" is not a date/);
        const missingFile = await cli(['upload', path.join(user.home, 'missing.png')]);
        assert.equal(missingFile.code, 2, describeRun(missingFile));
        assert.match(missingFile.stderr, /no such file/);
      });

      it('a wrong key: exit 1 and the server message', async () => {
        const run = await cli(['channels', 'list'], { HERALD_API_KEY: 'hk_wrong' });
        assert.equal(run.code, 1, describeRun(run));
        assert.match(run.stderr, /Invalid API key.*\(HTTP 401\)/);
        assert.match(run.stderr, /hint: check HERALD_API_KEY/);
      });

      it('no server at the URL: exit 1, says it cannot reach it', async () => {
        const port = await freePort();
        const run = await cli(['channels', 'list'], { HERALD_API_URL: `http://127.0.0.1:${port}/api` });
        assert.equal(run.code, 1, describeRun(run));
        assert.match(run.stderr, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/api: connection refused`));
      });

      it('a URL without the /api prefix: exit 1, the server message and a hint to add /api', async () => {
        const run = await cli(['channels', 'list'], { HERALD_API_URL: herald.url });
        assert.equal(run.code, 1, describeRun(run));
        assert.match(run.stderr, /HTTP 404/);
        assert.ok(run.stderr.includes(`hint: the API URL ${herald.url} has no /api prefix`), run.stderr);
      });

      it('no credential at all: exit 1 and how to get one', async () => {
        const run = await runHerald(['channels', 'list'], { HOME: user.home, HERALD_API_URL: `${herald.url}/api` });
        assert.equal(run.code, 1, describeRun(run));
        assert.match(run.stderr, /Not signed in\. Set HERALD_API_KEY .* or run "herald login"/);
      });
    });

    describe('stored login', () => {
      it('wins over HERALD_API_KEY; logout gives the key back', async () => {
        const other = await herald.newAccount('Other');
        const otherChannel = await addWebhookChannel(other, { name: 'Other hook' });
        const home = emptyHome();
        try {
          // What "herald login" writes: the token and the API URL it belongs to.
          fs.mkdirSync(home.configDir, { recursive: true });
          fs.writeFileSync(path.join(home.configDir, 'credentials.json'), JSON.stringify({ accessToken: other.key, apiUrl: `${herald.url}/api` }), {
            mode: 0o600,
          });
          const withBoth = { ...env, HOME: home.home };
          assert.deepEqual(
            printed(await runHerald(['channels', 'list', '--json'], withBoth)).map((c: any) => c.id),
            [otherChannel.id],
          );
          const who = printed(await runHerald(['whoami', '--json'], withBoth));
          assert.equal(who.source, 'login');
          assert.equal(who.origin, path.join(home.configDir, 'credentials.json'));

          const out = await runHerald(['logout'], withBoth);
          assert.equal(out.code, 0, describeRun(out));
          assert.ok(!fs.existsSync(path.join(home.configDir, 'credentials.json')), "!fs.existsSync(path.join(home.configDir, 'credentials.json'))");
          const ids = printed(await runHerald(['channels', 'list', '--json'], withBoth)).map((c: any) => c.id);
          assert.ok(ids.includes(channel.id) && !ids.includes(otherChannel.id), 'ids.includes(channel.id) && !ids.includes(otherChannel.id)');
        } finally {
          home.cleanup();
        }
      });
    });
  });
}
