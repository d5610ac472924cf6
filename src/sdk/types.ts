/**
 * Types of the public API as the SDK sees them, read from the route table's
 * public entries (src/contract/routes/public.ts): each body is what its entry
 * takes, each answer what its entry answers on success, validated by the very
 * zod schemas the server uses, so the two cannot drift apart.
 */
import type { z } from 'zod';
import type { errorBody } from '../contract/common.ts';
import type { AnswerOf, BodyOf, QueryOf } from '../contract/route.ts';
import type { publicRoutes } from '../contract/routes/public.ts';

type Routes = typeof publicRoutes.routes;

/** A connected channel (GET /integrations). */
export type Integration = AnswerOf<Routes['integrations']>[number];
/** An uploaded media object (POST /upload, /upload-from-url). */
export type Media = AnswerOf<Routes['upload']>;
/** The body of POST /posts as a client sends it (dates as ISO 8601 strings). */
export type CreatePostsInput = BodyOf<Routes['createPosts']>;
/** One entry of CreatePostsInput.posts: a channel and its thread. */
export type PostEntryInput = CreatePostsInput['posts'][number];
/** Query of GET /posts. */
export type ListPostsFilters = QueryOf<Routes['posts']>;
/** GET /posts/export: the range, and optionally the zone its dates are written in. */
export type ExportPostsFilters = QueryOf<Routes['exportPosts']>;
/** A post as listed by GET /posts (the first item of its thread). */
export type PostSummary = AnswerOf<Routes['posts']>['posts'][number];
/** GET /posts/{id}: the post with its whole thread, per-item state and attempts. */
export type PostDetail = AnswerOf<Routes['post']>;
/** Body of every error answer of the API (the table's entries name it per error status). */
export type ErrorBody = z.output<typeof errorBody>;
/** Body of POST /integrations (channels that connect with credentials, such as `webhook`). */
export type CreateIntegrationInput = BodyOf<Routes['createIntegration']>;
/** Body of PATCH /integrations/{id}. */
export type UpdateIntegrationInput = BodyOf<Routes['updateIntegration']>;

/** One entry of POST /posts' answer: the post made on one channel. */
export type CreatedPost = AnswerOf<Routes['createPosts']>[number];
/** DELETE /posts/{id}. */
export type DeletedPost = AnswerOf<Routes['deletePost']>;
/** DELETE /posts/group/{group}. */
export type DeletedGroup = AnswerOf<Routes['deleteGroup']>;
/** A customer (GET /groups). */
export type Customer = AnswerOf<Routes['customers']>[number];
/** GET /notifications. */
export type NotificationsPage = AnswerOf<Routes['notifications']>;
/** A webhook of the account (/webhooks): Herald POSTs signed events about its posts and channels to `url`. */
export type Webhook = AnswerOf<Routes['webhooks']>[number];
/** Body of POST /webhooks. */
export type CreateWebhookInput = BodyOf<Routes['createWebhook']>;
/** One delivery of an event to a webhook, with every attempt. */
export type WebhookDelivery = AnswerOf<Routes['testWebhook']>;
/** GET /webhooks/{id}/deliveries. */
export type WebhookDeliveriesPage = AnswerOf<Routes['deliveries']>;
/** GET /is-connected. */
export type Connected = AnswerOf<Routes['isConnected']>;
/** POST /integrations: the channel, with its secrets shown this once. */
export type CreatedIntegration = AnswerOf<Routes['createIntegration']>;
/** DELETE /integrations/{id}. */
export type DeletedIntegration = AnswerOf<Routes['deleteIntegration']>;
/** GET /find-slot/{id}. */
export type FreeSlot = AnswerOf<Routes['findSlot']>;
/** GET /integration-settings/{id}. */
export type IntegrationSettings = AnswerOf<Routes['integrationSettings']>;
/** POST /integration-trigger/{id}. */
export type ToolAnswer = AnswerOf<Routes['runTool']>;
/** GET /posts. */
export type PostsList = AnswerOf<Routes['posts']>;
/** PUT /posts/{id}/status. */
export type PostStatus = AnswerOf<Routes['setPostStatus']>;
/** PUT /posts/{id}/settings. */
export type PostSettings = AnswerOf<Routes['mergePostSettings']>;
/** PUT /posts/{id}/release-id. */
export type ReleaseIdSet = AnswerOf<Routes['attachReleaseId']>;
/** One entry of GET /posts/{id}/missing. */
export type RecentPost = AnswerOf<Routes['missingRelease']>[number];
/** GET /analytics/{id} and /analytics/post/{id}. */
export type Analytics = AnswerOf<Routes['channelAnalytics']>;
/** POST /webhooks: the webhook, with its signing secret shown this once. */
export type CreatedWebhook = AnswerOf<Routes['createWebhook']>;
/** DELETE /webhooks/{id}. */
export type DeletedWebhook = AnswerOf<Routes['deleteWebhook']>;
/** GET and PUT /approval-settings. */
export type ApprovalSettings = AnswerOf<Routes['approvalSettings']>;
/** GET /posts/{id}/approval, and the answer of approving or returning a post. */
export type PostApproval = AnswerOf<Routes['approval']>;
/** A comment on a post. */
export type PostComment = AnswerOf<Routes['addComment']>;
/** GET /posts/{id}/comments. */
export type CommentsList = AnswerOf<Routes['comments']>;
/** DELETE /posts/{id}/comments/{commentId}. */
export type DeletedComment = AnswerOf<Routes['deleteComment']>;
/** A preview link of a post (GET /posts/{id}/preview-links). */
export type PreviewLink = AnswerOf<Routes['previewLinks']>[number];
/** POST /posts/{id}/preview-links: the link, with its token and URL shown this once. */
export type CreatedPreviewLink = AnswerOf<Routes['createPreviewLink']>;
/** DELETE /posts/{id}/preview-links/{linkId}. */
export type RevokedPreviewLink = AnswerOf<Routes['revokePreviewLink']>;
/** An RSS or Atom subscription (GET /feeds): new items become posts on its channels. */
export type Feed = AnswerOf<Routes['feeds']>[number];
/** GET /feeds/{id}: the subscription and the items it saw last. */
export type FeedDetail = AnswerOf<Routes['feed']>;
/** Body of POST /feeds. */
export type CreateFeedInput = BodyOf<Routes['createFeed']>;
/** Body of PATCH /feeds/{id}. */
export type UpdateFeedInput = BodyOf<Routes['updateFeed']>;
/** POST /feeds/{id}/check: what reading the feed now did. */
export type FeedCheck = AnswerOf<Routes['checkFeed']>;
/** DELETE /feeds/{id}. */
export type DeletedFeed = AnswerOf<Routes['deleteFeed']>;
/** POST /posts/import: the check report, and on a real import what it created. */
export type ImportReport = AnswerOf<Routes['importPosts']>;
/** One problem of an import file, by line and column. */
export type ImportProblem = ImportReport['problems'][number];
/** A repeating post (GET /series): its rule, the post it repeats and its next occurrences. */
export type Series = AnswerOf<Routes['seriesList']>[number];
/** GET /series/{id}: the series and its latest occurrences with their posts. */
export type SeriesDetail = AnswerOf<Routes['series']>;
/** Body of POST /series and PUT /series/{id}. */
export type SeriesInput = BodyOf<Routes['createSeries']>;
/** DELETE /series/{id}. */
export type DeletedSeries = AnswerOf<Routes['deleteSeries']>;
