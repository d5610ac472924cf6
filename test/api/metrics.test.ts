import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, freePort, startHerald, type TestAccount, type TestHerald } from '../helpers/herald.ts';
import { startHeraldProcess } from '../helpers/herald-process.ts';
import { storeSuite, testStores } from '../helpers/stores.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { publishNow, settled } from '../networks/support.ts';
import { teardown } from '../helpers/teardown.ts';

const TOKEN = 'metrics-token-5c1e9a7b3d';

/** The value of one series in Prometheus text: `name` with at least these labels; 0 when absent (a counter not yet moved). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const given = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => given[k] === v)) return Number(match[3]);
  }
  return 0;
}

async function scrape(herald: TestHerald, authorization = `Bearer ${TOKEN}`): Promise<Response> {
  return fetch(`${herald.url}/api/metrics`, { headers: { authorization } });
}

async function metricsText(herald: TestHerald): Promise<string> {
  const response = await scrape(herald);
  assert.equal(response.status, 200);
  return response.text();
}

describe('metrics without HERALD_METRICS_TOKEN', () => {
  let herald: TestHerald;
  before(async () => {
    herald = await startHerald('sqlite');
  });
  after(() => herald.close());

  it('are not served: the route does not exist', async () => {
    const response = await scrape(herald);
    assert.equal(response.status, 404);
  });
});

for (const store of await testStores()) {
  describe(`metrics (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let receiver: WebhookReceiver;
    let account: TestAccount;
    let channelId: string;

    before(async () => {
      herald = await startHerald(store, { engine: true, webhooks: { pollMs: 100 }, env: { HERALD_METRICS_TOKEN: TOKEN } });
      receiver = await startWebhookReceiver();
      account = await herald.newAccount();
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: `${receiver.url}/channel` } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      channelId = added.body.id;
    });
    after(() =>
      teardown(
        () => herald.close(),
        () => receiver.close(),
      ),
    );

    it('answer only to the bearer token, in the Prometheus text format', async () => {
      for (const authorization of ['', 'Bearer wrong-token-0000000000', TOKEN]) {
        const refused = await scrape(herald, authorization);
        assert.equal(refused.status, 401);
        assert.match((await refused.json()).message, /Authorization: Bearer HERALD_METRICS_TOKEN/);
      }
      const response = await scrape(herald);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      assert.match(text, /^# HELP herald_posts_due_unclaimed /m);
      assert.match(text, /^herald_nodejs_eventloop_lag_seconds \d/m, 'event-loop lag is reported');
    });

    it('count a published post, a refused one and the webhook delivery they caused', async () => {
      const hook = await account.callUntyped('POST', '/webhooks', { url: `${receiver.url}/events`, events: ['post.published'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      receiver.respond((delivery) => (delivery.json?.post?.content === 'refuse me' ? { status: 400, body: { error: 'no' } } : undefined));
      const before = await metricsText(herald);

      const published = await settled(account, await publishNow(account, channelId, ['hello metrics']));
      assert.equal(published.state, 'PUBLISHED');
      const refused = await settled(account, await publishNow(account, channelId, ['refuse me']));
      assert.equal(refused.state, 'ERROR');
      await eventually(async () => (receiver.deliveries.some((d) => d.path === '/hook/events') ? true : undefined), 10_000);

      const text = await eventually(async () => {
        const now = await metricsText(herald);
        return sample(now, 'herald_webhook_deliveries_total', { outcome: 'delivered' }) > 0 ? now : undefined;
      });
      const moved = (name: string, labels: Record<string, string> = {}) => sample(text, name, labels) - sample(before, name, labels);
      assert.equal(moved('herald_publish_attempts_total', { network: 'webhook', outcome: 'published' }), 1);
      assert.equal(moved('herald_publish_attempts_total', { network: 'webhook', outcome: 'refused' }), 1);
      assert.equal(moved('herald_publish_lateness_seconds_count', { network: 'webhook' }), 2);
      assert.equal(moved('herald_posts', { state: 'PUBLISHED' }), 1);
      assert.equal(moved('herald_posts', { state: 'ERROR' }), 1);
      assert.equal(moved('herald_webhook_deliveries_total', { outcome: 'delivered' }), 1);
      assert.equal(moved('herald_http_request_duration_seconds_count', { method: 'POST', route: '/api/public/v1/posts', status: '201' }), 2);
    });
  });

  describe(`metrics of due work nobody claims (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let account: TestAccount;

    before(async () => {
      // No engine: what falls due stays unclaimed, as when every worker is down.
      herald = await startHerald(store, { env: { HERALD_METRICS_TOKEN: TOKEN } });
      account = await herald.newAccount();
    });
    after(() => herald.close());

    it('show how many items are due and how long the oldest has waited', async () => {
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: 'http://127.0.0.1:9/hook' } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      const empty = await metricsText(herald);
      assert.equal(sample(empty, 'herald_posts_due_unclaimed'), 0);
      await publishNow(account, added.body.id, ['first', 'second']);
      // The age of the oldest due item grows while nobody claims it: read until it has waited a whole second.
      const text = await eventually(
        async () => {
          const read = await metricsText(herald);
          return sample(read, 'herald_posts_due_oldest_seconds') >= 1 ? read : undefined;
        },
        5_000,
        'herald_posts_due_oldest_seconds to reach 1',
      );
      // The reply waits for its parent, so only the first item is due.
      assert.equal(sample(text, 'herald_posts_due_unclaimed'), 1);
      assert.equal(sample(text, 'herald_posts', { state: 'QUEUE' }), 2);
    });
  });
}

describe('metrics of a worker, on HERALD_METRICS_PORT', () => {
  let herald: TestHerald;
  let receiver: WebhookReceiver;

  before(async () => {
    herald = await startHerald('sqlite');
    receiver = await startWebhookReceiver();
  });
  after(() =>
    teardown(
      () => herald.close(),
      () => receiver.close(),
    ),
  );

  it('are served on their own port by a process without an HTTP server, and count what it publishes', async () => {
    const port = await freePort();
    const worker = await startHeraldProcess(herald.services.config, 'worker', { HERALD_METRICS_PORT: String(port) });
    try {
      await worker.running;
      assert.match(worker.output(), new RegExp(`metrics: +http://127\\.0\\.0\\.1:${port}/metrics`));
      assert.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 404);
      const account = await herald.newAccount();
      const added = await account.callUntyped('POST', '/integrations', { identifier: 'webhook', credentials: { url: receiver.url } });
      const post = await settled(account, await publishNow(account, added.body.id, ['from the worker']));
      assert.equal(post.state, 'PUBLISHED');
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      assert.equal(response.status, 200);
      assert.equal(sample(await response.text(), 'herald_publish_attempts_total', { network: 'webhook', outcome: 'published' }), 1);
    } finally {
      await worker.stop();
    }
  });
});
