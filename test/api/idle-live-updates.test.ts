/**
 * An idle account's open pages stay quiet: the engine polls its queues all the
 * time, and a poll that changes nothing must not tell every open tab to fetch
 * its month again (issue 30). A real write still reaches the live channel.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { WebClient } from '../accounts/web-client.ts';
import { startHerald, type TestHerald } from '../helpers/herald.ts';
import { testStores, storeSuite } from '../helpers/stores.ts';
import { teardown } from '../helpers/teardown.ts';

/** Reads the live channel's Server-Sent Events with a session cookie; `events` fills as they arrive. */
function listen(url: string, cookie: string): Promise<{ events: string[]; close: () => void }> {
  return new Promise((resolve, reject) => {
    const events: string[] = [];
    const request = http.get(url, { headers: { cookie, accept: 'text/event-stream' } }, (response) => {
      assert.equal(response.statusCode, 200);
      let buffer = '';
      response.on('data', (chunk) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const type = /^event: (.+)$/m.exec(buffer.slice(0, end))?.[1];
          buffer = buffer.slice(end + 2);
          if (type) events.push(type);
        }
      });
      resolve({ events, close: () => request.destroy() });
    });
    request.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, what: string, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Long enough for the engine (polling every 200 ms here) to look at its queues a dozen times. */
const IDLE_MS = 3_000;

for (const store of await testStores()) {
  describe(`an idle account's live channel (${store})`, storeSuite(store), () => {
    let herald: TestHerald;
    let web: WebClient;
    let channel: string;

    before(async () => {
      herald = await startHerald(store, { engine: true, webhooks: true });
      web = new WebClient(herald.url);
      await web.signUp('idle@example.com');
      const created = await web.app('POST', '/public/v1/integrations', {
        identifier: 'webhook',
        name: 'Receiver',
        credentials: { url: 'http://127.0.0.1:9/hook' },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      channel = created.body.id;
      // Something waits in the queue, far from due: the engine has work to look at and nothing to do.
      const later = new Date(Date.now() + 7 * 86_400_000).toISOString();
      const post = await web.app('POST', '/public/v1/posts', {
        type: 'schedule',
        date: later,
        posts: [{ integration: { id: channel }, value: [{ content: 'next week' }] }],
      });
      assert.equal(post.status, 201, JSON.stringify(post.body));
    });
    after(() => teardown(() => herald?.close()));

    it('sends no "change" while nothing changes, and one as soon as a post does', async () => {
      const cookie = [...web.jar].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('; ');
      const stream = await listen(`${herald.url}/api/app/events`, cookie);
      try {
        await waitFor(() => stream.events.includes('ready'), 'the ready event');
        // Whatever the set-up wrote has been told by now; from here on nothing happens.
        await sleep(1_000);
        const quietFrom = stream.events.length;
        await sleep(IDLE_MS);
        assert.deepEqual(stream.events.slice(quietFrom), [], 'an idle page is told nothing changed');
        const draft = await web.app('POST', '/public/v1/posts', {
          type: 'draft',
          posts: [{ integration: { id: channel }, value: [{ content: 'a real change' }] }],
        });
        assert.equal(draft.status, 201);
        await waitFor(() => stream.events.slice(quietFrom).includes('change'), 'a change event after a real write');
      } finally {
        stream.close();
      }
    });
  });
}
