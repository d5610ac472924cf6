/** Channels ("integrations") and the customers they are grouped under ("groups" in the API). */
import { z } from 'zod';

export const integration = z.object({
  id: z.string(),
  name: z.string(),
  identifier: z.string(),
  picture: z.string().nullable(),
  disabled: z.boolean(),
  profile: z.string().nullable(),
  customer: z.object({ id: z.string(), name: z.string() }).nullable(),
  needsReconnect: z.boolean(),
  timeZone: z.string(),
  postingTimes: z.array(z.string()),
  defaultSettings: z.record(z.string(), z.unknown()).describe("The network's post settings a new post on this channel starts from"),
});

const postingTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: 'must be a local time HH:MM' });

export const createIntegrationBody = z.object({
  identifier: z.string().min(1).max(50),
  name: z.string().min(1).max(200).optional(),
  credentials: z.record(z.string(), z.unknown()).optional().default({}),
  timeZone: z.string().max(100).optional(),
  postingTimes: z.array(postingTime).min(1).max(48).optional(),
  customer: z.string().max(200).optional(),
});

export const updateIntegrationBody = z.object({
  name: z.string().min(1).max(200).optional(),
  timeZone: z.string().max(100).optional(),
  postingTimes: z.array(postingTime).min(1).max(48).optional(),
  customer: z.string().max(200).nullable().optional(),
  disabled: z.boolean().optional(),
  defaultSettings: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The network's post settings a new post starts from (checked against the network's settings schema)"),
});

/** A customer, as GET /groups lists it. */
export const customer = z.object({ id: z.string(), name: z.string() });
export const createCustomerBody = z.object({ name: z.string().trim().min(1).max(200) });

/** GET /networks: a network this server has, and what it still needs to be usable. */
export const network = z.object({
  identifier: z.string(),
  name: z.string(),
  auth: z.string(),
  configured: z.boolean(),
  missing: z.array(z.string()),
  rules: z.string(),
});

/** The figures a network reports (GET /analytics/...): per day, or one point for a figure known only as it stands. */
export const analytics = z.array(
  z.object({ label: z.string(), data: z.array(z.object({ total: z.number(), date: z.string() })), percentageChange: z.number() }),
);
export const analyticsQuery = z.object({
  date: z.coerce.number().int().min(1).max(365).default(7).describe('Days to look back (1-365, 7 when left out)'),
});

/** POST /integrations answers the channel with its secrets (a webhook's signing secret) this once. */
export const createdIntegration = integration.extend({ secrets: z.record(z.string(), z.string()).optional() });
export const deletedIntegration = z.object({ deleted: z.boolean(), id: z.string() });
/** GET /find-slot/{id}: the channel's next free posting time. */
export const freeSlot = z.object({ date: z.string() });
/** GET /integration-settings/{id}. */
export const integrationSettings = z.object({
  output: z.object({
    rules: z.string(),
    maxLength: z.number(),
    settings: z.unknown(),
    tools: z.array(z.object({ methodName: z.string(), description: z.string() })),
  }),
});
export const toolCallBody = z.object({ methodName: z.string().min(1).max(100), data: z.unknown().optional() });
export const toolAnswer = z.object({ output: z.unknown() });
/** GET /social/{provider}: where to send the person to connect. */
export const connectStart = z.object({ url: z.string() });
