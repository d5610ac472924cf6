/**
 * A running Herald writes one log line per publish attempt through its one
 * logger, with ids a person can search for and the failure class, as JSON when
 * its output is not a terminal; secrets never reach it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { untypedCaller, eventually, startHerald, type TestHerald } from '../helpers/herald.ts';
import { startHeraldProcess, type HeraldProcess } from '../helpers/herald-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { teardown } from '../helpers/teardown.ts';

describe('publish outcomes in the log (sqlite)', () => {
  let herald: TestHerald;
  let start: HeraldProcess;
  let receiver: WebhookReceiver;
  let key: string;

  before(async () => {
    herald = await startHerald('sqlite');
    ({ key } = await herald.newAccount());
    receiver = await startWebhookReceiver();
    start = await startHeraldProcess(herald.services.config, 'start', { HERALD_LOG_LEVEL: 'info' });
    await start.running;
  });
  after(() =>
    teardown(
      () => start.stop('SIGKILL'),
      () => herald.close(),
      () => receiver.close(),
    ),
  );

  const lines = () =>
    start
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('logs a published post and a refused one at info, with post, channel, network, attempt, duration and class', async () => {
    const call = untypedCaller(`${start.url}/api/public/v1`, key);
    const channel = await call('POST', '/integrations', { identifier: 'webhook', credentials: { url: receiver.url } });
    assert.equal(channel.status, 201, JSON.stringify(channel.body));
    const signingSecret: string = channel.body.secrets.signingSecret;
    assert.match(signingSecret, /^whsec_/);
    const post = (content: string) =>
      call('POST', '/posts', {
        type: 'now',
        date: new Date().toISOString(),
        shortLink: false,
        tags: [],
        posts: [{ integration: { id: channel.body.id }, value: [{ content, image: [] }], settings: { __type: 'webhook' } }],
      });

    const sent = (await post('logged')).body[0].postId;
    const published = await eventually(async () => lines().find((l) => l.msg === 'post published' && l.post === sent), 15_000, 'the published line');
    assert.equal(published.level, 30, 'info');
    assert.equal(published.channel, channel.body.id);
    assert.equal(published.network, 'webhook');
    assert.equal(published.attempt, 1);
    assert.equal(published.outcome, 'published');
    assert.equal(typeof published.ms, 'number');

    receiver.respond(() => ({ status: 400, body: 'content not allowed here' }));
    const refused = (await post('refused')).body[0].postId;
    const line = await eventually(async () => lines().find((l) => l.post === refused && l.outcome === 'refused'), 15_000, 'the refused line');
    assert.equal(line.msg, 'post not published');
    assert.match(String(line.reason), /answered 400: "?content not allowed here/);

    const everything = start.output();
    assert.ok(!everything.includes(key), 'the API key is not in the log');
    assert.ok(!everything.includes(signingSecret), 'the signing secret is not in the log');
  });
});
