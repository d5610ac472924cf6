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

/**
 * Why a network or the adapter refused what a person gave to connect a channel:
 * - invalid: the value is not what the network takes (a malformed address, a token it does not know);
 * - address: the outbound guard refused the address (a private host);
 * - refused: the network refused the credentials or the connection.
 */
export type RefusalReason = 'invalid' | 'address' | 'refused';

/**
 * Adapters throw this from `connect` and `oauth.start`/`finish` to name the field
 * that was wrong; the domain (channels.ts, `connectFailure`) turns it into its
 * answer. `message` defaults to "field: problem".
 */
export class NetworkRefusal extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
    readonly reason: RefusalReason = 'invalid',
    message = `${field}: ${problem}`,
  ) {
    super(message);
  }
}
