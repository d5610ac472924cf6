/**
 * Row types of every table. Instants are epoch milliseconds (UTC); flags are 0/1
 * integers and structured values are JSON text, so SQLite and PostgreSQL store the
 * same shapes and one set of queries serves both.
 */
export interface AccountRow {
  id: string;
  name: string;
  created_at: number;
  /** 1: posts by members wait for an owner's or admin's approval (migration 020; 0 by default). */
  members_need_approval?: number;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  key_sealed: string;
  key_hint: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** JSON array of scope names; null means full access. */
  scopes: string | null;
}

export interface CustomerRow {
  id: string;
  account_id: string;
  name: string;
  created_at: number;
}

export interface ChannelRow {
  id: string;
  account_id: string;
  provider: string;
  name: string;
  picture: string | null;
  profile: string | null;
  external_id: string;
  customer_id: string | null;
  /** Provider credentials and connection settings, JSON sealed with the secret box. */
  config_sealed: string;
  time_zone: string;
  /** JSON array of "HH:MM" local times at which find-slot offers posting. */
  posting_times: string;
  /** JSON object: the network's post settings the composer starts from on this channel. */
  default_settings: string;
  disabled: number;
  needs_reconnect: number;
  /** What the network said when it stopped accepting the channel's tokens. */
  reconnect_reason: string | null;
  /** When its access is renewed in the background (null: its tokens do not expire; 0: not yet looked at). */
  renew_at: number | null;
  /** When its token lapses, once Herald knows it cannot renew it (null: it renews, or does not expire). */
  access_lapses_at: number | null;
  /** How far ahead of that lapse (ms) its owner was last warned; null: not yet. */
  expiry_warned: number | null;
  created_at: number;
  deleted_at: number | null;
}

export interface MediaRow {
  id: string;
  account_id: string;
  name: string;
  original_name: string;
  storage_key: string;
  url: string;
  mime_type: string;
  size: number;
  width: number | null;
  height: number | null;
  duration: number | null;
  alt: string | null;
  thumbnail_url: string | null;
  created_at: number;
  deleted_at: number | null;
  /** JSON array of tag names (see MEDIA_TAG in contract/media.ts). */
  tags: string;
}

/** A file made from an uploaded one: its thumbnail, or a copy converted for a network. */
export interface MediaVariantRow {
  id: string;
  media_id: string;
  /** What the copy is: "thumbnail", or the conversion's parameters. */
  spec: string;
  storage_key: string;
  url: string;
  mime_type: string;
  size: number;
  width: number | null;
  height: number | null;
  created_at: number;
}

export type PostState = 'DRAFT' | 'QUEUE' | 'PUBLISHED' | 'ERROR';

export interface PostRow {
  id: string;
  account_id: string;
  channel_id: string;
  group_id: string;
  /** Null for the first item of a thread; the first item's id otherwise. */
  root_id: string | null;
  /** The item this one replies to (the previous item of the thread). */
  parent_id: string | null;
  thread_index: number;
  content: string;
  /** JSON array of { id, path } media references. */
  media: string;
  /** JSON object of provider settings, including __type. */
  settings: string;
  /** JSON array of { value, label }. */
  tags: string;
  state: PostState;
  /** When this item is due. */
  publish_at: number;
  /** Minutes to wait after the previous item was published. */
  delay_minutes: number;
  release_id: string | null;
  release_url: string | null;
  error: string | null;
  warning: string | null;
  creation_method: string;
  /** Bumped on every change, so a worker never publishes an outdated version. */
  version: number;
  lease_owner: string | null;
  lease_until: number | null;
  attempts: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  /** Where the post stands with its reviewers (migration 020): null when it never needed approval. */
  approval?: ApprovalState | null;
  /** The person who wrote it (web session or an application they authorised); null for API keys and older posts. */
  author_id?: string | null;
  /** The repeating post this is an occurrence of (migration 019), and the occurrence's instant; null for other posts. */
  series_id?: string | null;
  occurrence_at?: number | null;
}

/** A post awaiting approval stays DRAFT for the engine; approving it puts it in the QUEUE. */
export type ApprovalState = 'pending' | 'approved' | 'rejected';

/** Who wrote a comment or made a decision: a person, an API key, or a visitor of a preview link (by the name they gave). */
export type AuthorKind = 'person' | 'key' | 'guest';

export interface PostReviewRow {
  id: string;
  account_id: string;
  /** The root post of the thread. */
  post_id: string;
  /** 'requested', 'approved', 'rejected'; from a preview link 'client_approved' or 'changes_requested'. */
  action: string;
  author_kind: AuthorKind;
  author_id: string | null;
  author_name: string;
  /** The preview link a visitor used. */
  link_id: string | null;
  comment: string | null;
  created_at: number;
}

export interface PostCommentRow {
  id: string;
  account_id: string;
  post_id: string;
  author_kind: AuthorKind;
  author_id: string | null;
  author_name: string;
  link_id: string | null;
  content: string;
  created_at: number;
  deleted_at: number | null;
}

export interface PreviewLinkRow {
  id: string;
  account_id: string;
  post_id: string;
  /** SHA-256 of the token; the token itself is shown once, when the link is made. */
  token_hash: string;
  /** Who made it, as "person:<id>" or "key:<id>". */
  created_by: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface PostAttemptRow {
  id: string;
  post_id: string;
  worker: string;
  started_at: number;
  finished_at: number | null;
  /** 'sending' until known, then 'published', 'retry', 'failed' or 'unknown'. */
  outcome: string;
  detail: string | null;
}

export interface PublishProgressRow {
  post_id: string;
  key: string;
  value: string;
  created_at: number;
}

export interface PostFollowUpRow {
  post_id: string;
  next_at: number;
  until_at: number;
}

export interface NetworkReadRow {
  key: string;
  channel_id: string;
  value: string;
  read_at: number;
}

export interface ShortLinkRow {
  code: string;
  account_id: string;
  url: string;
  clicks: number;
  created_at: number;
}

export interface IdempotencyKeyRow {
  account_id: string;
  key: string;
  route: string;
  request_hash: string | null;
  /** 'in_flight' or 'done'. */
  state: string;
  status_code: number | null;
  response: string | null;
  created_at: number;
}

export interface RateCounterRow {
  bucket: string;
  window_start: number;
  count: number;
}

export interface NotificationRow {
  id: string;
  account_id: string;
  content: string;
  link: string | null;
  created_at: number;
}

export interface WebhookRow {
  id: string;
  account_id: string;
  name: string | null;
  url: string;
  /** JSON array of event types the endpoint receives. */
  events: string;
  /** The signing secret (whsec_...), sealed with the secret box. */
  secret_sealed: string;
  disabled: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export type WebhookDeliveryState = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveryRow {
  id: string;
  webhook_id: string;
  account_id: string;
  /** The webhook-id header: the same on every retry and redelivery of one event. */
  message_id: string;
  event_type: string;
  /** The exact JSON body sent: {type, timestamp, data}. */
  payload: string;
  state: WebhookDeliveryState;
  attempts: number;
  /** JSON array of { at, status, error } per finished attempt. */
  attempt_log: string;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export interface ConnectRequestRow {
  state: string;
  account_id: string;
  provider: string;
  data_sealed: string;
  created_at: number;
  expires_at: number;
}

export interface NetworkSlotRow {
  /** network:<provider> for pacing, refresh:<channel> for token refreshes. */
  name: string;
  slot: number;
  holder: string | null;
  held_until: number;
}

export type UserRole = 'owner' | 'admin' | 'member';

export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  name: string;
  password_hash: string;
  role: UserRole;
  created_at: number;
}

/** A person's display preferences; null: not chosen, the browser's default applies. */
export interface PersonPreferencesRow {
  user_id: string;
  language: string | null;
  zone: string | null;
  week_start: number | null;
  clock: string | null;
  updated_at: number;
}

export interface SessionRow {
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
}

export interface InvitationRow {
  id: string;
  account_id: string;
  email: string;
  role: UserRole;
  token_hash: string;
  invited_by: string;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  /** The token sealed with the secret box (migration 025), so its link can be copied again; null for older invitations. */
  token_sealed?: string | null;
}

/** A provider's person (issuer + subject) linked to a person here (migration 028); user_id null once they were removed. */
export interface SsoIdentityRow {
  issuer: string;
  subject: string;
  account_id: string;
  user_id: string | null;
  email: string;
  created_at: number;
  removed_at: number | null;
}

/** An e-mail address removed from an account: single sign-on does not let it back in without a new invitation. */
export interface RemovedPersonRow {
  account_id: string;
  email: string;
  removed_at: number;
}

/** The owner's single sign-on choices for their account (migration 028). */
export interface SsoSettingsRow {
  account_id: string;
  /** JSON array of lower-case domains. */
  allowed_domains: string;
  domain_role: UserRole;
  /** 1: only the owner may still sign in with a password. */
  passwords_off: number;
  updated_at: number;
}

export interface OAuthAppRow {
  id: string;
  account_id: string;
  name: string;
  secret_hash: string;
  /** JSON array of exact redirect URIs. */
  redirect_uris: string;
  token_ttl_seconds: number;
  created_at: number;
  deleted_at: number | null;
}

export interface OAuthCodeRow {
  code_hash: string;
  app_id: string;
  account_id: string;
  user_id: string;
  redirect_uri: string | null;
  /** JSON array of scope names; null means full access. */
  scopes: string | null;
  /** S256 PKCE challenge, when the client sent one. */
  code_challenge: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** The RFC 8707 resource the code is for (migration 029); null when none was named. */
  resource?: string | null;
}

export interface OAuthTokenRow {
  id: string;
  app_id: string;
  account_id: string;
  user_id: string;
  access_hash: string;
  refresh_hash: string;
  scopes: string | null;
  code_hash: string | null;
  created_at: number;
  access_expires_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** The RFC 8707 resource the token is good for (migration 029); null: wherever the app's tokens were always good. */
  resource?: string | null;
}

/** A client that registered itself (RFC 7591), migration 029. */
export interface OAuthDynamicClientRow {
  id: string;
  name: string;
  /** JSON array of exact redirect URIs. */
  redirect_uris: string;
  client_uri: string | null;
  software_id: string | null;
  software_version: string | null;
  auth_method: 'none' | 'client_secret_post' | 'client_secret_basic';
  secret_hash: string | null;
  /** The account it acts for since a person first approved it; null while unused. */
  account_id: string | null;
  created_at: number;
  claimed_at: number | null;
  deleted_at: number | null;
}

export interface DeviceRequestRow {
  device_code_hash: string;
  user_code: string;
  state: string | null;
  code_verifier: string | null;
  scope: string | null;
  status: 'pending' | 'approved' | 'denied';
  token_sealed: string | null;
  interval_seconds: number;
  last_polled_at: number | null;
  created_at: number;
  expires_at: number;
}

export interface TemplateRow {
  id: string;
  account_id: string;
  kind: 'template' | 'signature';
  name: string;
  content: string;
  created_at: number;
  updated_at: number;
}

/** How a feed's new items are posted: at once, at each channel's next free slot, or as drafts. */
export type FeedMode = 'now' | 'slot' | 'draft';

export interface FeedRow {
  id: string;
  account_id: string;
  url: string;
  /** The person's name for the subscription; null shows the feed's own title. */
  name: string | null;
  /** The feed's own title, from its last successful read. */
  title: string | null;
  /** JSON array of channel ids. */
  channels: string;
  template: string;
  mode: FeedMode;
  attach_image: number;
  paused: number;
  /** 1 once the first read has recorded the items that already existed. */
  primed: number;
  etag: string | null;
  last_modified: string | null;
  next_fetch_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_fetched_at: number | null;
  last_success_at: number | null;
  last_error: string | null;
  /** Failed reads in a row; 0 after a success. */
  failures: number;
  /** The person who set the feed up or last changed it (its posts may wait for approval); null for API keys. */
  author_id: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface FeedItemRow {
  feed_id: string;
  item_key: string;
  title: string | null;
  link: string | null;
  /** JSON array of the posts made from the item; null when it was only recorded (it existed at the first read). */
  post_ids: string | null;
  note: string | null;
  seen_at: number;
  /** When a read last found the item in the feed's document (null only for rows older than migration 022). */
  last_seen_at: number | null;
}

/** A row of a CSV import and the post it became (migration 021): the same row imported again is skipped. */
export interface PostImportRow {
  account_id: string;
  /** SHA-256 of the account, the channel and the row's content (date, type, thread, settings). */
  row_key: string;
  /** The root post the row became. */
  post_id: string;
  created_at: number;
}

/** A repeating post: its rule and the post to repeat (see src/domain/series/series.ts). */
export interface PostSeriesRow {
  id: string;
  account_id: string;
  name: string | null;
  /** The person who made it (a member's occurrences may wait for approval); null for API keys. */
  author_id: string | null;
  /** JSON: the normalised rule (src/domain/series/series-rule.ts). */
  rule: string;
  /** JSON: the post to repeat, as POST /posts takes it (posts, tags, shortLink). */
  template: string;
  /** Bumped by every edit, so a worker never creates occurrences from an outdated rule or template. */
  version: number;
  /** Occurrences up to this instant have been created (those that were already past were skipped). */
  extended_to: number;
  /** When a worker looks at the series next; null once its rule has no occurrence left to create. */
  next_check_at: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  /** Why the last occurrence could not be created (a channel removed, media deleted); null once one was. */
  last_error: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

/** One occurrence of a series, created once: the primary key (series_id, occurrence_at) refuses a second. */
export interface PostSeriesOccurrenceRow {
  series_id: string;
  occurrence_at: number;
  occurrence_index: number;
  series_version: number;
  /** The worker (or process) that created it. */
  created_by: string;
  created_at: number;
}

export type MailState = 'pending' | 'sent' | 'failed';

/** A message waiting to be sent, sent, or given up (db/migrations/027_mail.ts). */
export interface MailOutboxRow {
  id: string;
  /** What it is about: invitation, password_reset, post_failed, channel_reconnect, access_expiring, digest. */
  kind: string;
  user_id: string | null;
  to_address: string;
  subject: string;
  /** Sealed JSON {text, html}; null once sent or given up. */
  body_sealed: string | null;
  state: MailState;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** What a person gets by mail; no row: the defaults (mail/choices.ts). */
export interface MailChoicesRow {
  user_id: string;
  post_failed: number;
  channel_reconnect: number;
  access_expiring: number;
  digest: string;
  digest_due_at: number | null;
  updated_at: number;
}

export interface PasswordResetRow {
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface Database {
  accounts: AccountRow;
  api_keys: ApiKeyRow;
  customers: CustomerRow;
  channels: ChannelRow;
  templates: TemplateRow;
  media: MediaRow;
  media_variants: MediaVariantRow;
  posts: PostRow;
  post_attempts: PostAttemptRow;
  publish_progress: PublishProgressRow;
  post_follow_ups: PostFollowUpRow;
  network_reads: NetworkReadRow;
  short_links: ShortLinkRow;
  idempotency_keys: IdempotencyKeyRow;
  rate_counters: RateCounterRow;
  notifications: NotificationRow;
  connect_requests: ConnectRequestRow;
  network_slots: NetworkSlotRow;
  users: UserRow;
  person_preferences: PersonPreferencesRow;
  sessions: SessionRow;
  invitations: InvitationRow;
  sso_identities: SsoIdentityRow;
  removed_people: RemovedPersonRow;
  sso_settings: SsoSettingsRow;
  oauth_apps: OAuthAppRow;
  oauth_codes: OAuthCodeRow;
  oauth_tokens: OAuthTokenRow;
  oauth_dynamic_clients: OAuthDynamicClientRow;
  device_requests: DeviceRequestRow;
  webhooks: WebhookRow;
  webhook_deliveries: WebhookDeliveryRow;
  post_reviews: PostReviewRow;
  post_comments: PostCommentRow;
  preview_links: PreviewLinkRow;
  feeds: FeedRow;
  feed_items: FeedItemRow;
  post_series: PostSeriesRow;
  post_series_occurrences: PostSeriesOccurrenceRow;
  post_imports: PostImportRow;
  mail_outbox: MailOutboxRow;
  mail_choices: MailChoicesRow;
  password_resets: PasswordResetRow;
}
