/**
 * Types of the public API as the SDK sees them, derived from the very zod
 * schemas the server validates with, so the two cannot drift apart.
 */
import type { z } from 'zod';
import type * as schemas from '../api/public-v1/schemas.ts';

/** A connected channel (GET /integrations). */
export type Integration = z.output<typeof schemas.integration>;
/** An uploaded media object (POST /upload, /upload-from-url). */
export type Media = z.output<typeof schemas.mediaObject>;
/** The body of POST /posts as a client sends it (dates as ISO 8601 strings). */
export type CreatePostsInput = z.input<typeof schemas.createPostsBody>;
/** One entry of CreatePostsInput.posts: a channel and its thread. */
export type PostEntryInput = z.input<typeof schemas.postEntry>;
/** Query of GET /posts. */
export type ListPostsFilters = z.input<typeof schemas.listPostsQuery>;
/** A post as listed by GET /posts (the first item of its thread). */
export type PostSummary = schemas.PostSummary;
/** GET /posts/{id}: the post with its whole thread, per-item state and attempts. */
export type PostDetail = z.output<typeof schemas.postDetail>;
/** Body of every error answer of the API. */
export type ErrorBody = z.output<typeof schemas.errorBody>;
/** Body of POST /integrations (channels that connect with credentials, such as `webhook`). */
export type CreateIntegrationInput = z.input<typeof schemas.createIntegrationBody>;
/** Body of PATCH /integrations/{id}. */
export type UpdateIntegrationInput = z.input<typeof schemas.updateIntegrationBody>;

export interface CreatedPost {
  postId: string;
  integration: string;
}
export interface DeletedPost {
  deleted: boolean;
  id: string;
  group: string;
}
export interface DeletedGroup {
  deleted: boolean;
  group: string;
  ids: string[];
}
export interface Customer {
  id: string;
  name: string;
}
export interface NotificationsPage {
  notifications: { id: string; content: string; link: string | null; createdAt: string }[];
  total: number;
  page: number;
  limit: number;
  hasMore: boolean;
}
/** A webhook of the account (/webhooks): Herald POSTs signed events about its posts and channels to `url`. */
export interface Webhook {
  id: string;
  name: string | null;
  url: string;
  events: string[];
  disabled: boolean;
  createdAt: string;
  updatedAt: string;
}
export interface CreateWebhookInput {
  url: string;
  /** post.created, post.updated, post.deleted, post.published, post.failed, channel.needs_reconnect */
  events: string[];
  name?: string;
}
export interface WebhookDelivery {
  id: string;
  webhookId: string;
  /** The webhook-id header: the same on every retry and redelivery. */
  messageId: string;
  event: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  attemptLog: { at: string; status: number | null; error: string | null }[];
}
export interface WebhookDeliveriesPage {
  deliveries: WebhookDelivery[];
  page: number;
  limit: number;
  hasMore: boolean;
}
