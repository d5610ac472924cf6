/**
 * What every network adapter provides. One provider is one module: how a channel
 * connects, what settings its posts take, what content it accepts, and how to
 * publish. The publishing engine and the API know providers only through this.
 */
import type { z } from 'zod';
import type { OutboundGuard } from '../lib/outbound.ts';

export type MediaKind = 'image' | 'video';

export interface ContentRules {
  /** Longest text the network accepts, counted as it counts (see `length`). */
  maxLength: number;
  /** How the network counts text; defaults to Unicode code points. */
  length?: (text: string) => number;
  maxMedia: number;
  mediaKinds: MediaKind[];
  /** Whether value[1..] become replies on the network. Without, only value[0] is published. */
  threads: boolean;
}

export interface MediaRef {
  id: string;
  url: string;
  mimeType: string;
}

export interface PublishItem {
  postId: string;
  groupId: string;
  content: string;
  media: MediaRef[];
  settings: Record<string, unknown>;
  threadIndex: number;
  /** The whole thread as stored, so a receiver can see where this item stands. */
  thread: { content: string; media: MediaRef[]; delayMinutes: number }[];
  publishAt: Date;
}

export interface PublishChannel {
  id: string;
  name: string;
  externalId: string;
  config: Record<string, unknown>;
}

export interface PublishContext {
  channel: PublishChannel;
  item: PublishItem;
  /** The network's id of the item this one replies to (threads). */
  replyTo?: { releaseId: string };
  /** Stable per item, for networks that de-duplicate on a key. */
  idempotencyKey: string;
  outbound: OutboundGuard;
  signal: AbortSignal;
}

export interface PublishResult {
  releaseId: string;
  releaseUrl?: string | null;
}

/**
 * How a publish failed:
 * - retryable: the network certainly did not take the post (refused connection, 429, 503);
 * - refused: the network rejected the content; its message is the user's answer;
 * - unknown: the request may have been taken (timeout after sending); never blindly repeated;
 * - auth: the token is expired or revoked.
 */
export type FailureKind = 'retryable' | 'refused' | 'unknown' | 'auth';

export class PublishError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface ConnectResult {
  externalId: string;
  name: string;
  picture?: string | null;
  profile?: string | null;
  /** Stored sealed; handed back to publish as channel.config. */
  config: Record<string, unknown>;
  /** Shown to the user once, when the channel is added (e.g. a signing secret). */
  revealOnce?: Record<string, string>;
}

export interface ProviderTool {
  description: string;
  run(ctx: { channel: PublishChannel; outbound: OutboundGuard; data: unknown }): Promise<unknown>;
}

export interface Provider {
  identifier: string;
  name: string;
  /** How a channel is connected. */
  auth: 'oauth2' | 'oauth1' | 'credentials';
  /** What the user gives when adding a credentials channel. */
  credentials?: z.ZodObject;
  /** Provider-specific post settings, without __type. Required fields apply to non-drafts. */
  settings: z.ZodObject;
  rules: ContentRules;
  connect?(credentials: Record<string, unknown>, ctx: { outbound: OutboundGuard }): Promise<ConnectResult>;
  publish(ctx: PublishContext): Promise<PublishResult>;
  tools?: Record<string, ProviderTool>;
}
