/**
 * The errors adapters throw, which the engine and the domain read. Kept apart
 * from the adapter contract (types.ts) because the HTTP helpers of adapter-kit/
 * throw them too, and the contract names those helpers' types.
 */

/**
 * How a publish failed:
 * - retryable: the network certainly did not take the post (refused connection, 408, 429), or
 *   the request is safe to repeat (a read, an upload before anything is published);
 * - refused: the network rejected the content; its message is the user's answer;
 * - unknown: the request may have been taken (a timeout, or any 5xx, 503 included, after sending); never blindly repeated;
 * - auth: the token is expired or revoked.
 */
export type FailureKind = 'retryable' | 'refused' | 'unknown' | 'auth';

export class PublishError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly retryAfterMs?: number,
    /** The network's own error code, for adapters that act on one (a Discord code, a Slack error string). */
    readonly code?: string | number,
  ) {
    super(message);
  }
}
