/**
 * The `webhook` channel: each post is delivered as a signed JSON POST to a URL the
 * user chose (n8n, Zapier, custom code). Signed as Standard Webhooks define, with
 * the post item's id as webhook-id, so a receiver can drop a repeated delivery.
 */
import { z } from 'zod';
import { newWebhookSecret, signatureHeaders } from '../../lib/webhook-signature.ts';
import { OutboundRefused } from '../../lib/outbound.ts';
import { deadline } from '../../lib/deadline.ts';
import { classifyAnswer, classifyFetchError, readDetail } from '../adapter-kit/http-failures.ts';
import type { Provider, PublishContext } from '../types.ts';

const TIMEOUT_MS = 15_000;

const credentials = z.object({
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).describe('Where posts are delivered'),
});

const releaseAnswer = z.object({ id: z.union([z.string(), z.number()]).optional(), url: z.string().optional() }).passthrough();

function deliveryBody(ctx: PublishContext): string {
  const { item, channel } = ctx;
  return JSON.stringify({
    type: 'post.publish',
    post: {
      id: item.postId,
      group: item.groupId,
      content: item.content,
      media: item.media.map((m) => ({ id: m.id, url: m.url, mimeType: m.mimeType })),
      settings: item.settings,
      threadIndex: item.threadIndex,
      replyTo: ctx.replyTo?.releaseId ?? null,
    },
    thread: item.thread.map((t) => ({
      content: t.content,
      media: t.media.map((m) => ({ id: m.id, url: m.url, mimeType: m.mimeType })),
      delay: t.delayMinutes,
    })),
    channel: { id: channel.id, name: channel.name },
    date: item.publishAt.toISOString(),
  });
}

async function send(ctx: Pick<PublishContext, 'outbound' | 'signal'>, url: string, secret: string, id: string, body: string) {
  const limit = deadline(TIMEOUT_MS, ctx.signal);
  const headers = { 'content-type': 'application/json', 'user-agent': 'Herald-Webhook/1', ...signatureHeaders(secret, id, body) };
  try {
    return await ctx.outbound.post(url, { headers, body, signal: limit.signal });
  } catch (err) {
    throw classifyFetchError(err, 'The webhook receiver');
  } finally {
    limit.clear();
  }
}

export const webhook: Provider = {
  identifier: 'webhook',
  name: 'Webhook',
  auth: 'credentials',
  credentials,
  settings: z.object({}).passthrough(),
  rules: { maxLength: 100_000, maxMedia: 20, mediaKinds: ['image', 'video'], threads: true },

  async connect(input, { outbound }) {
    const { url } = credentials.parse(input);
    try {
      await outbound.checkReachable(url);
    } catch (err) {
      if (err instanceof OutboundRefused) throw new OutboundRefused(`credentials.url ${err.reason}`);
      throw err;
    }
    const secret = newWebhookSecret();
    const host = new URL(url).host;
    // The same URL again is the same channel: its receiver keeps verifying with the secret it has.
    return {
      externalId: url,
      name: host,
      profile: host,
      config: { url, secret },
      revealOnce: { signingSecret: secret },
      keepOnReconnect: ['secret'],
      externalIdIsSecret: true,
    };
  },

  // Receivers drop a repeated webhook-id (the post item's id), as the README tells them to.
  repeatDropped: { by: 'the receiver drops a repeated webhook-id' },

  async publish(ctx) {
    const { url, secret } = ctx.channel.config as { url: string; secret: string };
    const response = await send(ctx, url, secret, ctx.idempotencyKey, deliveryBody(ctx));
    if (response.status < 200 || response.status >= 300) {
      const detail = await readDetail(response);
      // Receivers drop a repeat (repeatDropped), so a server error is sent again rather than left unknown.
      throw classifyAnswer(
        'The webhook receiver',
        { status: response.status, headers: new Headers({ 'retry-after': response.header('retry-after') ?? '' }), body: detail, detail },
        {},
        true,
      );
    }
    let parsed: unknown = {};
    try {
      parsed = JSON.parse(await response.text());
    } catch {
      // A receiver that answers 2xx without JSON took the post; it just gave no id.
    }
    const answer = releaseAnswer.safeParse(parsed);
    const id = answer.success && answer.data.id !== undefined ? String(answer.data.id) : ctx.idempotencyKey;
    return { releaseId: id, releaseUrl: answer.success ? (answer.data.url ?? null) : null };
  },

  tools: {
    sendTest: {
      description: 'Deliver a signed test event to the webhook URL and report the answer.',
      acts: true,
      async run({ channel, outbound }) {
        const { url, secret } = channel.config as { url: string; secret: string };
        const body = JSON.stringify({ type: 'ping', channel: { id: channel.id, name: channel.name }, date: new Date().toISOString() });
        const ctx = { outbound, signal: AbortSignal.timeout(TIMEOUT_MS) };
        const response = await send(ctx, url, secret, `ping_${Date.now()}`, body).catch((err: Error) => err);
        if (response instanceof Error) return { ok: false, error: response.message };
        await response.text().catch(() => '');
        return { ok: response.status >= 200 && response.status < 300, status: response.status };
      },
    },
  },
};
