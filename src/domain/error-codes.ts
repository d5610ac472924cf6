/**
 * Every `code` an error answer of Herald's API can carry: its HTTP status and
 * what it tells the caller to do. The one catalogue: ApiError and errorBody take
 * only these codes (the type check holds every throw to it), the README's "Error
 * codes" table and the OpenAPI document's description are made from it.
 */
interface ErrorCodeEntry {
  status: number;
  meaning: string;
}

export const ERROR_CODES = {
  // The request itself
  invalid_body: { status: 400, meaning: 'A field of the JSON body breaks a rule; `errors` names each field and its rule.' },
  invalid_query: { status: 400, meaning: 'A query parameter breaks a rule (a date that is not ISO 8601, an end before the start).' },
  invalid_params: { status: 400, meaning: 'A path parameter breaks a rule (too long, a control character).' },
  invalid_headers: { status: 400, meaning: 'A header breaks a rule.' },
  invalid_header: { status: 400, meaning: 'A header Herald reads (Idempotency-Key) breaks its rule.' },
  invalid_json: { status: 400, meaning: 'The body is not valid JSON.' },
  invalid_content_length: { status: 400, meaning: 'Content-Length does not match the body.' },
  invalid_url: { status: 400, meaning: 'The request URL is not valid (bad percent-encoding, a path segment too long).' },
  bad_request: { status: 400, meaning: 'The request is not valid HTTP, or not one Herald can read.' },
  unsupported_content_type: { status: 415, meaning: 'The body must be application/json (multipart/form-data for uploads).' },
  body_too_large: { status: 413, meaning: 'The body is larger than this server accepts.' },
  headers_too_large: { status: 431, meaning: 'The headers are larger than this server accepts.' },
  request_timeout: { status: 408, meaning: 'The request took too long to arrive; send it again.' },
  route_not_found: { status: 404, meaning: 'No route has this method and path.' },
  missing_api_prefix: { status: 404, meaning: 'The path lacks /api: clients append /public/v1/... to a base URL ending in /api.' },
  method_not_allowed: { status: 405, meaning: 'The MCP endpoint takes POST only (it keeps no session and opens no event stream).' },

  // Who is asking
  missing_api_key: { status: 401, meaning: 'No Authorization header: send the API key or an OAuth access token.' },
  invalid_api_key: { status: 401, meaning: 'The key or token is unknown, revoked or expired.' },
  insufficient_scope: { status: 403, meaning: 'The key or token lacks the scope this route needs (a read-only key writing).' },
  not_signed_in: { status: 401, meaning: 'The web application’s session is missing or over: sign in again.' },
  invalid_credentials: { status: 401, meaning: 'The email or the password is wrong.' },
  csrf_failed: { status: 403, meaning: 'A web application request without its session’s CSRF token.' },
  forbidden: { status: 403, meaning: 'Your role in the account does not allow this.' },
  passwords_off: { status: 403, meaning: 'The account’s owner turned passwords off: sign in with single sign-on instead.' },
  signup_closed: { status: 403, meaning: 'This server takes new people by invitation only.' },
  invalid_scope: { status: 400, meaning: 'An unknown scope was asked for; the message lists the known ones.' },
  invalid_invitation: { status: 400, meaning: 'The invitation is unknown, expired, used or for another address.' },
  email_taken: { status: 409, meaning: 'Someone already signed up with this email.' },
  owner_stays: { status: 409, meaning: 'The account’s owner cannot be removed or demoted.' },
  key_revoked: { status: 409, meaning: 'The API key was revoked; it cannot be shown or rotated.' },
  rate_limited: { status: 429, meaning: 'Over a rate limit; Retry-After and the RateLimit headers say when to try again.' },

  // Things that do not exist or are in the way
  not_found: { status: 404, meaning: 'The post, channel, media, customer or webhook does not exist in this account.' },
  idempotency_key_in_flight: { status: 409, meaning: 'A request with this Idempotency-Key is still running; try again shortly.' },
  idempotency_key_reused: { status: 422, meaning: 'This Idempotency-Key was used for a different request.' },
  idempotency_key_mismatch: { status: 422, meaning: 'This Idempotency-Key was used with a different body.' },

  // Posts
  already_published: { status: 409, meaning: 'The post went out already; it can no longer be changed this way.' },
  publishing: { status: 409, meaning: 'The post is being published right now; try again when it has settled.' },
  not_failed: { status: 409, meaning: 'Only a post with failed items can be retried.' },
  no_free_slot: { status: 409, meaning: 'The channel has no free posting time in the period searched.' },
  awaiting_approval: { status: 409, meaning: 'The post awaits approval: an owner or admin approves it (POST /posts/{id}/approve) to schedule it.' },
  not_pending: { status: 409, meaning: 'Only a post awaiting approval can be approved or returned (a returned one can still be approved).' },
  link_expired: { status: 410, meaning: 'The preview link expired or was revoked: ask the team for a new one.' },
  invalid_csv: { status: 400, meaning: 'The CSV file has problems; `problems` names each by line and column. Nothing was imported.' },
  import_conflict: { status: 409, meaning: 'Another import created some of these rows at the same moment; import the file again (what is in is skipped).' },
  series_busy: { status: 409, meaning: 'The repeating post’s occurrences are being created right now; try again in a moment.' },

  // Channels and networks
  provider_unavailable: { status: 409, meaning: 'This server has no such network, or it is not configured.' },
  provider_not_configured: { status: 400, meaning: 'The network needs app credentials on this server (GET /networks lists what is missing).' },
  not_oauth: { status: 400, meaning: 'This network connects with credentials (POST /integrations), not through OAuth.' },
  connect_refused: { status: 400, meaning: 'The network refused the credentials; its message says why.' },
  connect_denied: { status: 400, meaning: 'The person declined at the network’s consent screen.' },
  nothing_to_connect: { status: 400, meaning: 'The network account has nothing Herald can publish to (no page, board or blog).' },
  unknown_state: { status: 400, meaning: 'The OAuth state is unknown or used: start connecting again.' },
  expired_state: { status: 400, meaning: 'The connection was started too long ago: start connecting again.' },
  reconnect_needed: { status: 409, meaning: 'The channel’s access is gone: connect it again.' },
  network_unavailable: { status: 502, meaning: 'The network did not answer or failed; try again later.' },
  network_refused: { status: 400, meaning: 'The network refused the request; its message says why.' },
  analytics_unavailable: { status: 400, meaning: 'This network has no analytics API Herald can read.' },
  post_not_published: { status: 400, meaning: 'The post has no release on the network yet.' },
  unknown_method: { status: 404, meaning: 'The network has no helper tool of this name.' },
  tool_refused: { status: 400, meaning: 'The helper tool could not do what was asked; its message says why.' },

  // Media
  not_multipart: { status: 415, meaning: 'Uploads are multipart/form-data with one part named `file`.' },
  invalid_multipart: { status: 400, meaning: 'The multipart body has no part `file`, or a broken one.' },
  too_many_parts: { status: 413, meaning: 'The multipart body has too many parts.' },
  too_many_files: { status: 413, meaning: 'An upload carries one file.' },
  too_many_fields: { status: 413, meaning: 'The multipart body has too many fields.' },
  file_too_large: { status: 413, meaning: 'The file is larger than this server accepts.' },
  empty_file: { status: 400, meaning: 'The file is empty.' },
  damaged_file: { status: 400, meaning: 'The file’s bytes do not make a readable image or video.' },
  unsupported_media_type: { status: 415, meaning: 'The file is of a type no network takes (read from its bytes, not its name).' },
  media_in_use: { status: 409, meaning: 'A scheduled post or a repeating post (series) uses this file; change or delete it first.' },
  range_not_satisfiable: { status: 416, meaning: 'The Range header asks for bytes outside the file.' },

  // URLs Herald fetches or calls
  url_refused: { status: 400, meaning: 'The URL points at a private, loopback or link-local address (HERALD_ALLOW_PRIVATE_HOSTS allows named ones).' },
  url_unreachable: { status: 400, meaning: 'The URL’s server answered with an error.' },
  url_timeout: { status: 400, meaning: 'The URL’s server did not send the file in time.' },
  webhook_disabled: { status: 409, meaning: 'The webhook is disabled; enable it before sending to it.' },

  // Feeds
  feed_paused: { status: 409, meaning: 'The feed subscription is paused; resume it before reading it now.' },
  feed_busy: { status: 409, meaning: 'The feed is being read right now; try again in a moment.' },

  // The server
  store_unavailable: { status: 503, meaning: 'The database is unavailable; nothing was changed. Retry-After says when to try again.' },
  storage_full: { status: 503, meaning: 'The server’s disk (or its database’s) is full; nothing was changed. Retry-After says when to try again.' },
  internal_error: { status: 500, meaning: 'A fault on Herald’s side; the request was not completed. The server log has the details.' },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The catalogue as a Markdown table (the README's "Error codes" and the OpenAPI description). */
export function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, { status, meaning }]) => `| \`${code}\` | ${status} | ${meaning} |`);
  return ['| Code | Status | Meaning |', '|---|---|---|', ...rows].join('\n');
}
