/**
 * The Herald SDK: a typed client of the public API.
 *
 * By default it behaves like the reference SDK so code written for it keeps
 * working: an HTTP error status does not throw, the parsed body is returned
 * (check it for `statusCode`), and `deletePost` returns the raw Response.
 * With `throwOnError: true` every call returns the typed success body or throws
 * a HeraldApiError. A request that gets no answer at all always throws a
 * HeraldConnectionError.
 *
 *   import { Herald } from 'herald/sdk';
 *   const herald = new Herald(process.env.HERALD_API_KEY, 'http://localhost:5000/api', { throwOnError: true });
 *   const channels = await herald.integrations();
 */
import { HeraldApiError, HeraldConnectionError } from './errors.ts';
import { fileForm, type ProgressListener, type UploadSource } from './multipart.ts';
import type {
  Analytics,
  ImportReport,
  ApprovalSettings,
  CommentsList,
  CreatedPreviewLink,
  DeletedComment,
  PostApproval,
  PostComment,
  PreviewLink,
  RevokedPreviewLink,
  Connected,
  CreatedIntegration,
  CreatedWebhook,
  DeletedIntegration,
  DeletedWebhook,
  FreeSlot,
  IntegrationSettings,
  PostSettings,
  PostStatus,
  PostsList,
  RecentPost,
  ReleaseIdSet,
  ToolAnswer,
  CreatedPost,
  CreateIntegrationInput,
  CreatePostsInput,
  CreateWebhookInput,
  Customer,
  DeletedGroup,
  DeletedPost,
  ErrorBody,
  Integration,
  ListPostsFilters,
  ExportPostsFilters,
  Media,
  NotificationsPage,
  PostDetail,
  UpdateIntegrationInput,
  Webhook,
  WebhookDeliveriesPage,
  WebhookDelivery,
  CreateFeedInput,
  DeletedFeed,
  Feed,
  FeedCheck,
  FeedDetail,
  UpdateFeedInput,
  DeletedSeries,
  Series,
  SeriesDetail,
  SeriesInput,
} from './types.ts';

export * from './types.ts';
export { HeraldApiError, HeraldConnectionError } from './errors.ts';
export type { ProgressListener, UploadSource } from './multipart.ts';

export const DEFAULT_API_URL = 'http://localhost:5000/api';

export interface HeraldOptions {
  /** Throw HeraldApiError on an HTTP error status instead of returning the error body. Default false. */
  throwOnError?: boolean;
  /** Another fetch implementation (a proxy-aware one, a test double of your own code). */
  fetch?: typeof fetch;
  /** Headers sent with every request (User-Agent...). */
  headers?: Record<string, string>;
}

/** Options of every call that creates something. */
export interface CreateOptions {
  /** Sent as Idempotency-Key: a repeat with the same key and body returns the first answer and creates nothing. */
  idempotencyKey?: string;
}

export interface UploadOptions extends CreateOptions {
  /** The file name sent with the bytes (default: the path's base name, or "upload"). */
  filename?: string;
  /** Called as the bytes leave, with the total when it is known. */
  onProgress?: ProgressListener;
}

/** What a call resolves to: the success body, or with the default options also the error body. */
export type Result<T, O extends HeraldOptions> = O extends { throwOnError: true } ? T : T | ErrorBody;

interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  idempotencyKey?: string;
}

/** True when `value` is an error body of the API (for callers that keep the default, non-throwing mode). */
export function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as ErrorBody).statusCode === 'number' && typeof (value as ErrorBody).message === 'string';
}

export class Herald<const O extends HeraldOptions = {}> {
  readonly apiUrl: string;
  private readonly apiKey: string;
  private readonly options: O;
  private readonly fetchImpl: typeof fetch;

  /**
   * @param apiKey an API key or an OAuth access token, sent as "Authorization: <value>"
   * @param apiUrl the API URL including the /api prefix (default http://localhost:5000/api); or the options
   */
  constructor(apiKey: string, apiUrl?: string | O, options?: O) {
    if (typeof apiUrl === 'object') {
      options = apiUrl;
      apiUrl = undefined;
    }
    if (!apiKey) throw new TypeError('Herald: an API key (or access token) is required');
    this.apiKey = apiKey;
    this.apiUrl = (apiUrl || DEFAULT_API_URL).replace(/\/+$/, '');
    this.options = (options ?? {}) as O;
    this.fetchImpl = this.options.fetch ?? fetch;
  }

  // Account

  /** GET /is-connected: whether the key works. */
  isConnected() {
    return this.call<Connected>('GET', '/is-connected');
  }

  // Channels

  /** GET /integrations: connected channels, optionally of one customer. */
  integrations(filters: { group?: string } = {}) {
    return this.call<Integration[]>('GET', '/integrations', { query: filters });
  }
  /** GET /find-slot/{id}: the channel's next free posting time. */
  findSlot(channelId: string) {
    return this.call<FreeSlot>('GET', `/find-slot/${encodeURIComponent(channelId)}`);
  }
  /** POST /integrations: add a channel that connects with credentials (`webhook`). */
  createIntegration(body: CreateIntegrationInput, options: CreateOptions = {}) {
    return this.call<CreatedIntegration>('POST', '/integrations', { body, ...options });
  }
  updateIntegration(channelId: string, body: UpdateIntegrationInput) {
    return this.call<Integration>('PATCH', `/integrations/${encodeURIComponent(channelId)}`, { body });
  }
  deleteIntegration(channelId: string) {
    return this.call<DeletedIntegration>('DELETE', `/integrations/${encodeURIComponent(channelId)}`);
  }
  /** GET /integration-settings/{id}: content rules, settings JSON schema and helper tools. */
  integrationSettings(channelId: string) {
    return this.call<IntegrationSettings>('GET', `/integration-settings/${encodeURIComponent(channelId)}`);
  }
  /** POST /integration-trigger/{id}: run a provider helper tool. */
  triggerIntegration(channelId: string, methodName: string, data: Record<string, unknown> = {}) {
    return this.call<ToolAnswer>('POST', `/integration-trigger/${encodeURIComponent(channelId)}`, { body: { methodName, data } });
  }

  // Media

  /**
   * POST /upload. `file` is a path, bytes, a Blob or a stream. The second
   * argument is the file name (the reference SDK passes an extension such as
   * "png"; the server reads the type from the bytes either way) or the options.
   */
  async upload(file: UploadSource, filenameOrOptions?: string | UploadOptions): Promise<Result<Media, O>> {
    const options: UploadOptions = typeof filenameOrOptions === 'string' ? { filename: filenameOrOptions } : (filenameOrOptions ?? {});
    const form = await fileForm(file, options.filename, options.onProgress);
    return this.send<Media>('POST', this.url('/upload'), form.body, form.contentType, options.idempotencyKey);
  }
  /** POST /upload-from-url: the server fetches a public http(s) URL. */
  uploadFromUrl(url: string, options: CreateOptions = {}) {
    return this.call<Media>('POST', '/upload-from-url', { body: { url }, ...options });
  }

  // Posts

  /** POST /posts: draft, schedule, publish now or update, one entry per channel. */
  post(body: CreatePostsInput, options: CreateOptions = {}) {
    return this.call<CreatedPost[]>('POST', '/posts', { body, ...options });
  }
  /** GET /posts: first items of threads between startDate and endDate. */
  postList(filters: ListPostsFilters) {
    return this.call<PostsList>('GET', '/posts', { query: filters });
  }
  /** GET /posts/{id}: the whole thread with per-item state, errors and attempts. */
  getPost(postId: string) {
    return this.call<PostDetail>('GET', `/posts/${encodeURIComponent(postId)}`);
  }
  /**
   * DELETE /posts/{id}: deletes the post's group. Like the reference SDK this
   * resolves to the raw Response by default; with throwOnError it resolves to
   * the parsed body or throws.
   */
  deletePost(postId: string): Promise<O extends { throwOnError: true } ? DeletedPost : Response> {
    const route = `/posts/${encodeURIComponent(postId)}`;
    if (this.options.throwOnError) return this.call<DeletedPost>('DELETE', route) as never;
    return this.fetchRaw('DELETE', this.url(route), { 'content-type': 'application/json' }) as never;
  }
  deleteGroup(group: string) {
    return this.call<DeletedGroup>('DELETE', `/posts/group/${encodeURIComponent(group)}`);
  }
  /** PUT /posts/{id}/status: move between DRAFT ("draft") and QUEUE ("schedule"). */
  changePostStatus(postId: string, status: 'draft' | 'schedule') {
    return this.call<PostStatus>('PUT', `/posts/${encodeURIComponent(postId)}/status`, { body: { status } });
  }
  updatePostSettings(postId: string, settings: Record<string, unknown>) {
    return this.call<PostSettings>('PUT', `/posts/${encodeURIComponent(postId)}/settings`, { body: { settings } });
  }
  updateReleaseId(postId: string, releaseId: string) {
    return this.call<ReleaseIdSet>('PUT', `/posts/${encodeURIComponent(postId)}/release-id`, { body: { releaseId } });
  }
  getMissingContent(postId: string) {
    return this.call<RecentPost[]>('GET', `/posts/${encodeURIComponent(postId)}/missing`);
  }
  /** POST /posts/{id}/retry: put the failed items back in the queue. */
  retryPost(postId: string) {
    return this.call<PostDetail>('POST', `/posts/${encodeURIComponent(postId)}/retry`);
  }
  /**
   * POST /posts/import: checks a CSV file (`dryRun: true`: the report of every problem, nothing stored)
   * or imports it whole. `file` is a path, bytes, a Blob or a stream; the same rows imported again are skipped.
   */
  async importPosts(file: UploadSource, options: { dryRun?: boolean; filename?: string } = {}): Promise<Result<ImportReport, O>> {
    const form = await fileForm(file, options.filename ?? 'posts.csv');
    return this.send<ImportReport>('POST', this.url('/posts/import', { dryRun: options.dryRun ? 'true' : undefined }), form.body, form.contentType);
  }
  /** GET /posts/export: the posts of a range as CSV text, in the columns the import reads. */
  async exportPosts(filters: ExportPostsFilters): Promise<Result<string, O>> {
    return this.answer<string>(await this.fetchRaw('GET', this.url('/posts/export', filters), {}), true);
  }

  // Approvals, comments and preview links

  /** GET /approval-settings: whether posts by members wait for approval. */
  approvalSettings() {
    return this.call<ApprovalSettings>('GET', '/approval-settings');
  }
  setApprovalSettings(body: ApprovalSettings) {
    return this.call<ApprovalSettings>('PUT', '/approval-settings', { body });
  }
  /** GET /posts/{id}/approval: where the post stands, and its history of requests and decisions. */
  postApproval(postId: string) {
    return this.call<PostApproval>('GET', `/posts/${encodeURIComponent(postId)}/approval`);
  }
  /** POST /posts/{id}/approve: schedules a post awaiting approval (at its channel's next free slot if its time has passed). */
  approvePost(postId: string, comment?: string) {
    return this.call<PostApproval>('POST', `/posts/${encodeURIComponent(postId)}/approve`, { body: comment === undefined ? {} : { comment } });
  }
  /** POST /posts/{id}/reject: returns a post awaiting approval to its author, saying what to change. */
  rejectPost(postId: string, comment: string) {
    return this.call<PostApproval>('POST', `/posts/${encodeURIComponent(postId)}/reject`, { body: { comment } });
  }
  postComments(postId: string) {
    return this.call<CommentsList>('GET', `/posts/${encodeURIComponent(postId)}/comments`);
  }
  addPostComment(postId: string, content: string) {
    return this.call<PostComment>('POST', `/posts/${encodeURIComponent(postId)}/comments`, { body: { content } });
  }
  deletePostComment(postId: string, commentId: string) {
    return this.call<DeletedComment>('DELETE', `/posts/${encodeURIComponent(postId)}/comments/${encodeURIComponent(commentId)}`);
  }
  previewLinks(postId: string) {
    return this.call<PreviewLink[]>('GET', `/posts/${encodeURIComponent(postId)}/preview-links`);
  }
  /** POST /posts/{id}/preview-links: the answer's `url` (with its token) is shown this once. */
  createPreviewLink(postId: string, options: { expiresInHours?: number } = {}) {
    return this.call<CreatedPreviewLink>('POST', `/posts/${encodeURIComponent(postId)}/preview-links`, { body: options });
  }
  revokePreviewLink(postId: string, linkId: string) {
    return this.call<RevokedPreviewLink>('DELETE', `/posts/${encodeURIComponent(postId)}/preview-links/${encodeURIComponent(linkId)}`);
  }

  // Customers, notifications, analytics

  groups() {
    return this.call<Customer[]>('GET', '/groups');
  }
  createGroup(name: string, options: CreateOptions = {}) {
    return this.call<Customer>('POST', '/groups', { body: { name }, ...options });
  }
  notifications(page = 0) {
    return this.call<NotificationsPage>('GET', '/notifications', { query: { page } });
  }
  analytics(channelId: string, days?: number) {
    return this.call<Analytics>('GET', `/analytics/${encodeURIComponent(channelId)}`, { query: { date: days } });
  }
  postAnalytics(postId: string, days?: number) {
    return this.call<Analytics>('GET', `/analytics/post/${encodeURIComponent(postId)}`, { query: { date: days } });
  }

  // Outgoing webhooks of the account

  webhooks() {
    return this.call<Webhook[]>('GET', '/webhooks');
  }
  /** POST /webhooks; the answer carries the signing `secret`, shown this once. */
  createWebhook(body: CreateWebhookInput, options: CreateOptions = {}) {
    return this.call<CreatedWebhook>('POST', '/webhooks', { body, ...options });
  }
  deleteWebhook(webhookId: string) {
    return this.call<DeletedWebhook>('DELETE', `/webhooks/${encodeURIComponent(webhookId)}`);
  }
  /** GET /webhooks/{id}/deliveries: newest first, with every attempt. */
  webhookDeliveries(webhookId: string, page = 0) {
    return this.call<WebhookDeliveriesPage>('GET', `/webhooks/${encodeURIComponent(webhookId)}/deliveries`, { query: { page } });
  }
  /** POST /webhooks/{id}/test: send a ping event. */
  testWebhook(webhookId: string) {
    return this.call<WebhookDelivery>('POST', `/webhooks/${encodeURIComponent(webhookId)}/test`);
  }

  // RSS and Atom feeds

  feeds() {
    return this.call<Feed[]>('GET', '/feeds');
  }
  /** GET /feeds/{id}: the subscription, its state and last error, and the items it saw last. */
  getFeed(feedId: string) {
    return this.call<FeedDetail>('GET', `/feeds/${encodeURIComponent(feedId)}`);
  }
  /** POST /feeds: the first read records what the feed has; items published after that are posted. */
  createFeed(body: CreateFeedInput) {
    return this.call<Feed>('POST', '/feeds', { body });
  }
  updateFeed(feedId: string, body: UpdateFeedInput) {
    return this.call<Feed>('PATCH', `/feeds/${encodeURIComponent(feedId)}`, { body });
  }
  deleteFeed(feedId: string) {
    return this.call<DeletedFeed>('DELETE', `/feeds/${encodeURIComponent(feedId)}`);
  }
  /** POST /feeds/{id}/check: read the feed now and post what is new. */
  checkFeed(feedId: string) {
    return this.call<FeedCheck>('POST', `/feeds/${encodeURIComponent(feedId)}/check`);
  }

  /** Any other route under /public/v1, e.g. request('GET', '/short-links/abc'). */
  request<T = unknown>(method: string, route: string, options: RequestOptions = {}) {
    return this.call<T>(method, route.startsWith('/') ? route : `/${route}`, options);
  }

  // Repeating posts

  /** GET /series: the account's repeating posts, newest first. */
  series() {
    return this.call<Series[]>('GET', '/series');
  }
  /** GET /series/{id}: the rule, the post and the latest occurrences with their posts. */
  getSeries(seriesId: string) {
    return this.call<SeriesDetail>('GET', `/series/${encodeURIComponent(seriesId)}`);
  }
  /** POST /series: a post repeated every N days or weeks (or on chosen weekdays), until a date or for a number of times. */
  createSeries(body: SeriesInput, options: CreateOptions = {}) {
    return this.call<Series>('POST', '/series', { body, ...options });
  }
  /** PUT /series/{id}: its future occurrences not yet published are made again, except those changed on their own. */
  updateSeries(seriesId: string, body: SeriesInput) {
    return this.call<SeriesDetail>('PUT', `/series/${encodeURIComponent(seriesId)}`, { body });
  }
  /** DELETE /series/{id}: stops it; future occurrences not yet published are deleted, published ones stay. */
  deleteSeries(seriesId: string) {
    return this.call<DeletedSeries>('DELETE', `/series/${encodeURIComponent(seriesId)}`);
  }

  // Plumbing

  private url(route: string, query?: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null) params.append(name, String(value));
    const search = params.toString();
    return `${this.apiUrl}/public/v1${route}${search ? `?${search}` : ''}`;
  }

  private call<T>(method: string, route: string, options: RequestOptions = {}): Promise<Result<T, O>> {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    return this.send<T>(method, this.url(route, options.query), body, 'application/json', options.idempotencyKey);
  }

  private async send<T>(
    method: string,
    target: string,
    body: BodyInit | AsyncIterable<Uint8Array> | undefined,
    contentType: string,
    idempotencyKey?: string,
  ): Promise<Result<T, O>> {
    const headers: Record<string, string> = { 'content-type': contentType };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    return this.answer<T>(await this.fetchRaw(method, target, headers, body));
  }

  /** The success body, or the error body (thrown with throwOnError). `asText`: a success answer is text (CSV), not JSON. */
  private async answer<T>(response: Response, asText = false): Promise<Result<T, O>> {
    const text = await response.text();
    if (response.ok && asText) return text as Result<T, O>;
    let parsed: unknown;
    let isJson = true;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      isJson = false;
      parsed = text;
    }
    if (response.ok && isJson) return parsed as Result<T, O>;
    const error = new HeraldApiError(response.status, parsed, this.hintFor(response.status, isJson));
    // An answer that is not JSON did not come from Herald's API: no body worth returning.
    if (this.options.throwOnError || !isJson) throw error;
    return parsed as Result<T, O>;
  }

  private async fetchRaw(method: string, target: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
    const init: RequestInit & { duplex?: 'half' } = {
      method,
      headers: { ...this.options.headers, ...headers, authorization: this.apiKey },
      body: body as BodyInit | undefined,
    };
    if (body !== undefined && typeof body !== 'string') init.duplex = 'half';
    try {
      return await this.fetchImpl(target, init);
    } catch (err) {
      throw new HeraldConnectionError(this.apiUrl, err);
    }
  }

  /** Self-hosted deployments serve the API under /api; without it every request is a 404 (or the web UI's HTML). */
  private hintFor(status: number, isJson: boolean): string | undefined {
    const pathname = new URL(this.apiUrl).pathname.replace(/\/+$/, '');
    if ((status === 404 || !isJson) && !pathname.endsWith('/api')) {
      return `the API URL ${this.apiUrl} has no /api prefix; Herald serves its API under /api, e.g. ${new URL(this.apiUrl).origin}/api`;
    }
    return undefined;
  }
}

export default Herald;
