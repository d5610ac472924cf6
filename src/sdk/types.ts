/**
 * Types of the public API as the SDK sees them, derived from the very zod
 * schemas the server validates with, so the two cannot drift apart.
 */
import type { z } from 'zod';
import type * as schemas from '../contract/index.ts';

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
/** GET /posts/export: the range, and optionally the zone its dates are written in. */
export type ExportPostsFilters = z.input<typeof schemas.exportQuery>;
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

/** One entry of POST /posts' answer: the post made on one channel. */
export type CreatedPost = z.output<typeof schemas.createdPosts>[number];
/** DELETE /posts/{id}. */
export type DeletedPost = z.output<typeof schemas.deletedPost>;
/** DELETE /posts/group/{group}. */
export type DeletedGroup = z.output<typeof schemas.deletedGroup>;
/** A customer (GET /groups). */
export type Customer = z.output<typeof schemas.customer>;
/** GET /notifications. */
export type NotificationsPage = z.output<typeof schemas.notificationsPage>;
/** A webhook of the account (/webhooks): Herald POSTs signed events about its posts and channels to `url`. */
export type Webhook = z.output<typeof schemas.webhook>;
/** Body of POST /webhooks. */
export type CreateWebhookInput = z.input<typeof schemas.createWebhookBody>;
/** One delivery of an event to a webhook, with every attempt. */
export type WebhookDelivery = z.output<typeof schemas.webhookDelivery>;
/** GET /webhooks/{id}/deliveries. */
export type WebhookDeliveriesPage = z.output<typeof schemas.deliveriesPage>;
/** GET /is-connected. */
export type Connected = z.output<typeof schemas.connected>;
/** POST /integrations: the channel, with its secrets shown this once. */
export type CreatedIntegration = z.output<typeof schemas.createdIntegration>;
/** DELETE /integrations/{id}. */
export type DeletedIntegration = z.output<typeof schemas.deletedIntegration>;
/** GET /find-slot/{id}. */
export type FreeSlot = z.output<typeof schemas.freeSlot>;
/** GET /integration-settings/{id}. */
export type IntegrationSettings = z.output<typeof schemas.integrationSettings>;
/** POST /integration-trigger/{id}. */
export type ToolAnswer = z.output<typeof schemas.toolAnswer>;
/** GET /posts. */
export type PostsList = z.output<typeof schemas.postsList>;
/** PUT /posts/{id}/status. */
export type PostStatus = z.output<typeof schemas.postStatus>;
/** PUT /posts/{id}/settings. */
export type PostSettings = z.output<typeof schemas.postSettings>;
/** PUT /posts/{id}/release-id. */
export type ReleaseIdSet = z.output<typeof schemas.releaseIdSet>;
/** One entry of GET /posts/{id}/missing. */
export type RecentPost = z.output<typeof schemas.recentPost>;
/** GET /analytics/{id} and /analytics/post/{id}. */
export type Analytics = z.output<typeof schemas.analytics>;
/** POST /webhooks: the webhook, with its signing secret shown this once. */
export type CreatedWebhook = z.output<typeof schemas.createdWebhook>;
/** DELETE /webhooks/{id}. */
export type DeletedWebhook = z.output<typeof schemas.deletedWebhook>;
/** GET and PUT /approval-settings. */
export type ApprovalSettings = z.output<typeof schemas.approvalSettings>;
/** GET /posts/{id}/approval, and the answer of approving or returning a post. */
export type PostApproval = z.output<typeof schemas.postApproval>;
/** A comment on a post. */
export type PostComment = z.output<typeof schemas.postComment>;
/** GET /posts/{id}/comments. */
export type CommentsList = z.output<typeof schemas.commentsList>;
/** DELETE /posts/{id}/comments/{commentId}. */
export type DeletedComment = z.output<typeof schemas.deletedComment>;
/** A preview link of a post (GET /posts/{id}/preview-links). */
export type PreviewLink = z.output<typeof schemas.previewLink>;
/** POST /posts/{id}/preview-links: the link, with its token and URL shown this once. */
export type CreatedPreviewLink = z.output<typeof schemas.createdPreviewLink>;
/** DELETE /posts/{id}/preview-links/{linkId}. */
export type RevokedPreviewLink = z.output<typeof schemas.revokedPreviewLink>;
/** An RSS or Atom subscription (GET /feeds): new items become posts on its channels. */
export type Feed = z.output<typeof schemas.feed>;
/** GET /feeds/{id}: the subscription and the items it saw last. */
export type FeedDetail = z.output<typeof schemas.feedDetail>;
/** Body of POST /feeds. */
export type CreateFeedInput = z.input<typeof schemas.createFeedBody>;
/** Body of PATCH /feeds/{id}. */
export type UpdateFeedInput = z.input<typeof schemas.updateFeedBody>;
/** POST /feeds/{id}/check: what reading the feed now did. */
export type FeedCheck = z.output<typeof schemas.feedCheck>;
/** DELETE /feeds/{id}. */
export type DeletedFeed = z.output<typeof schemas.deletedFeed>;
/** POST /posts/import: the check report, and on a real import what it created. */
export type ImportReport = z.output<typeof schemas.importReport>;
/** One problem of an import file, by line and column. */
export type ImportProblem = z.output<typeof schemas.importProblem>;
/** A repeating post (GET /series): its rule, the post it repeats and its next occurrences. */
export type Series = z.output<typeof schemas.series>;
/** GET /series/{id}: the series and its latest occurrences with their posts. */
export type SeriesDetail = z.output<typeof schemas.seriesDetail>;
/** Body of POST /series and PUT /series/{id}. */
export type SeriesInput = z.input<typeof schemas.seriesBody>;
/** DELETE /series/{id}. */
export type DeletedSeries = z.output<typeof schemas.deletedSeries>;
