/** Account webhooks: what /webhooks takes and answers, and the events an endpoint can receive. */
import { z } from 'zod';

/** The events an endpoint can subscribe to. */
export const WEBHOOK_EVENTS = [
  'post.created',
  'post.updated',
  'post.deleted',
  'post.published',
  'post.failed',
  'channel.needs_reconnect',
  // Approvals (contract/approvals.ts): a member's post asks for approval, and an owner or admin decides.
  'post.approval_requested',
  'post.approved',
  'post.rejected',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

const webhookUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(2048)
  .describe('Where events are POSTed; must be a public address');
const events = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1)
  .max(WEBHOOK_EVENTS.length * 2)
  .describe(`Events to receive: ${WEBHOOK_EVENTS.join(', ')}`);

export const webhook = z.object({
  id: z.string(),
  name: z.string().nullable(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  disabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** POST /webhooks answers the signing secret this once. */
export const createdWebhook = webhook.extend({ secret: z.string() });

export const createWebhookBody = z.object({ url: webhookUrl, events, name: z.string().trim().min(1).max(200).optional() });

export const updateWebhookBody = z.object({
  url: webhookUrl.optional(),
  events: events.optional(),
  name: z.string().trim().min(1).max(200).nullable().optional(),
  disabled: z.boolean().optional(),
});

export const webhookDelivery = z.object({
  id: z.string(),
  webhookId: z.string(),
  messageId: z.string().describe('The webhook-id header; the same on every retry and redelivery'),
  event: z.string(),
  state: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number(),
  nextAttemptAt: z.string().nullable(),
  lastStatus: z.number().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
  payload: z.object({ type: z.string(), timestamp: z.string(), data: z.record(z.string(), z.unknown()) }),
  attemptLog: z.array(z.object({ at: z.string(), status: z.number().nullable(), error: z.string().nullable() })),
});

export const deliveriesPage = z.object({ deliveries: z.array(webhookDelivery), page: z.number(), limit: z.number(), hasMore: z.boolean() });

export const deletedWebhook = z.object({ deleted: z.boolean(), id: z.string() });
