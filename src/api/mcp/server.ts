/**
 * The MCP server one credential talks to: the tools its scopes allow, each
 * answering a tool result (an error one when the call cannot be done, saying
 * what to change), never a protocol failure.
 *
 * Built on the SDK's low-level Server rather than McpServer: the list must
 * depend on the credential's scopes while a refused call still names the scope
 * it lacks (McpServer only knows "not found"), and argument errors are worded
 * as the public API words them ("posts.0.value.1.content: ...").
 */
import { z } from 'zod';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Services } from '../../services.ts';
import type { Principal } from '../../domain/accounts.ts';
import { ApiError, type FieldProblem } from '../../domain/errors.ts';
import type { ErrorCode } from '../../domain/error-codes.ts';
import { allows } from '../../domain/scopes.ts';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../../db/unavailable.ts';
import { DISK_FULL_RETRY_AFTER_SECONDS, isDiskFull } from '../../lib/disk-space.ts';
import { log } from '../../lib/log.ts';
import { errorBody } from '../errors.ts';
import { channelAnalytics, postAnalytics } from './analytics-tools.ts';
import { addComment, approvePost, createPreviewLink, listComments, listPendingApprovals, rejectPost } from './approval-tools.ts';
import { findNextSlot, listChannels } from './channel-tools.ts';
import { addFeed, checkFeedNow, deleteFeed, listFeeds, updateFeed } from './feed-tools.ts';
import { exportPostsCsv, importPostsCsv } from './import-tools.ts';
import { uploadMediaFromUrl } from './media-tools.ts';
import { createPost, deletePost, getPost, listPosts, retryPost } from './post-tools.ts';
import { createSeries, deleteSeries, getSeries, listSeries, updateSeries } from './series-tools.ts';
import type { HeraldTool } from './tool.ts';

export const TOOLS: HeraldTool[] = [
  listChannels,
  findNextSlot,
  uploadMediaFromUrl,
  createPost,
  listPosts,
  getPost,
  deletePost,
  retryPost,
  channelAnalytics,
  postAnalytics,
  listPendingApprovals,
  approvePost,
  rejectPost,
  listComments,
  addComment,
  createPreviewLink,
  importPostsCsv,
  exportPostsCsv,
  listFeeds,
  addFeed,
  updateFeed,
  deleteFeed,
  checkFeedNow,
  listSeries,
  createSeries,
  getSeries,
  updateSeries,
  deleteSeries,
];

const INSTRUCTIONS = [
  'Herald schedules and publishes posts to social networks, chats and webhooks.',
  "Start with list_channels: it gives the channel ids and each network's rules. To post, upload media first (upload_media_from_url),",
  'then call create_post once for all the channels; follow the result with get_post. Dates are ISO 8601 with Z or an offset.',
  "A post that repeats (every week, on weekdays) is one create_series; a blog's new articles are posted by subscribing with add_feed.",
  'A tool that cannot do what was asked answers an error naming the argument and the rule: change that and call again.',
].join(' ');

/** Each tool's description for tools/list, made once: the schemas do not change while the server runs. */
const described = new Map<string, Tool>(
  TOOLS.map((tool) => [
    tool.name,
    {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Tool['inputSchema'],
      annotations: {
        title: tool.title,
        readOnlyHint: tool.hints.readOnly,
        destructiveHint: tool.hints.destructive ?? false,
        idempotentHint: tool.hints.idempotent ?? tool.hints.readOnly,
        openWorldHint: tool.hints.openWorld ?? false,
      },
    },
  ]),
);

/** What to do about an error, beyond its own message, by its code. */
const NEXT_STEP: Partial<Record<ErrorCode, string>> = {
  not_found: 'Check the id: list_channels gives the channel ids, list_posts the post ids, list_feeds the feed ids, list_series the series ids.',
  idempotency_key_mismatch: 'Use a new idempotency_key for a different request.',
  idempotency_key_reused: 'Use a new idempotency_key for a different request.',
  insufficient_scope: 'Ask the person who gave you this credential for one with that scope.',
  forbidden: 'Ask an owner or admin of the account to do it.',
  not_pending: 'list_pending_approvals lists the posts that wait for a decision.',
  invalid_csv: 'Correct the lines named (import_posts_csv with "dry_run": true checks a file and stores nothing), then import the whole file again.',
  feed_paused: 'Resume it with update_feed ("paused": false), then call check_feed_now again.',
};

/** The MCP SDK, loaded on the first call to /api/mcp: it is costly to load, and most processes never need it. */
const loadMcpSdk = () => Promise.all([import('@modelcontextprotocol/sdk/server/index.js'), import('@modelcontextprotocol/sdk/types.js')]);

export async function mcpServer(services: Services, principal: Principal): Promise<Server> {
  const [{ Server }, { CallToolRequestSchema, ListToolsRequestSchema }] = await loadMcpSdk();
  // The version of the tools' contract, as the OpenAPI document versions the public API.
  const server = new Server({ name: 'herald', title: 'Herald', version: '1.0.0' }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const usable = TOOLS.filter((tool) => allows(principal.scopes, tool.scope));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: usable.map((tool) => described.get(tool.name)!) }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) {
      return failure('not_found', `There is no tool "${name}". The tools of this credential are: ${usable.map((t) => t.name).join(', ')}.`, [], '');
    }
    if (!allows(principal.scopes, tool.scope)) {
      const has = principal.scopes?.join(', ') || 'no scopes';
      return failure('insufficient_scope', `This credential may not use ${name}: it needs the scope ${tool.scope}, and it has ${has}. Nothing was done.`, [
        { path: 'headers.authorization', message: `lacks the scope ${tool.scope}` },
      ]);
    }
    // NUL characters and too-deep nesting never get here: the server's input guard refuses the whole request first (400).
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      return invalidArguments(
        name,
        parsed.error.issues.map((issue) => ({ path: issue.path.join('.') || 'arguments', message: issue.message })),
      );
    }
    try {
      const result = await tool.run(parsed.data, { services, principal });
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      if (isDiskFull(err)) services.disk.noteFull();
      return fromError(tool, err);
    }
  });

  return server;
}

/** A tool error: the message, what to do next, and the public API's error body as structured content. */
function failure(code: ErrorCode, message: string, problems: FieldProblem[] = [], next = NEXT_STEP[code]): CallToolResult {
  return {
    content: [{ type: 'text', text: `${message}${next ? `\n${next}` : ''}\n(code: ${code})` }],
    structuredContent: { error: errorBody(code, message, problems) },
    isError: true,
  };
}

function invalidArguments(tool: string, problems: FieldProblem[]): CallToolResult {
  const listed = problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  return failure(
    'invalid_body',
    `Invalid arguments for ${tool}: ${listed}. Nothing was done: correct these and call ${tool} again (its input schema lists every argument).`,
    problems,
  );
}

function fromError({ name: tool, hints }: HeraldTool, err: unknown): CallToolResult {
  if (err instanceof ApiError) {
    // The domain refuses before it writes: a refused change changed nothing.
    const unchanged = !hints.readOnly && err.statusCode < 500 ? ' Nothing was changed.' : '';
    return failure(err.code, `${/[.!?]$/.test(err.message) ? err.message : `${err.message}.`}${unchanged}`, err.errors);
  }
  if (isDiskFull(err)) {
    return failure(
      'storage_full',
      `Herald's disk is full; nothing was changed. Call ${tool} again once space is freed (in ${DISK_FULL_RETRY_AFTER_SECONDS} s or later).`,
    );
  }
  if (isStoreUnavailable(err)) {
    return failure(
      'store_unavailable',
      `Herald's database is unavailable right now; nothing was changed. Call ${tool} again in ${STORE_RETRY_AFTER_SECONDS} s.`,
    );
  }
  log.error({ err, tool }, 'MCP tool failed');
  return failure('internal_error', `${tool} failed because of a fault on Herald's side, not because of your arguments; the server log has the details.`);
}
