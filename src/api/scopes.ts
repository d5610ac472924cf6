/**
 * The one place that says which scope each public API endpoint needs. Routes are
 * matched by their first path segment (the resource) and the method, so a new
 * route of a known resource is covered without touching its file. A route of an
 * unknown resource is open only to full-access credentials: it fails closed.
 */
import type { Scope } from '../domain/scopes.ts';

/** 'any': every valid credential may call it (the credential check of the n8n node). */
export type Need = Scope | 'any';

type ByMethod = { read: Need; write: Need };

const READ_WRITE = (resource: string): ByMethod => ({ read: `${resource}:read` as Scope, write: `${resource}:write` as Scope });
const ALWAYS = (need: Need): ByMethod => ({ read: need, write: need });

/** First path segment under /public/v1 -> what reading (GET, HEAD) and writing need. */
const RESOURCES: Record<string, ByMethod> = {
  posts: READ_WRITE('posts'),
  // Repeating posts are posts: reading and changing them needs what posts need.
  series: READ_WRITE('posts'),
  'find-slot': ALWAYS('posts:read'),
  upload: ALWAYS('media:write'),
  'upload-from-url': ALWAYS('media:write'),
  media: READ_WRITE('media'),
  integrations: READ_WRITE('channels'),
  // GET /social/{provider} starts connecting a new channel.
  social: ALWAYS('channels:write'),
  'integration-settings': ALWAYS('channels:read'),
  // Which networks this server can connect: part of choosing a channel.
  networks: ALWAYS('channels:read'),
  // Provider helpers (list boards, subreddits...) are what a post composer needs.
  'integration-trigger': ALWAYS('channels:read'),
  groups: READ_WRITE('channels'),
  analytics: ALWAYS('analytics:read'),
  notifications: ALWAYS('account:read'),
  'short-links': ALWAYS('account:read'),
  webhooks: READ_WRITE('webhooks'),
  // Whether members' posts wait for approval: changing it also needs an owner's or admin's role (checked by the domain).
  'approval-settings': READ_WRITE('posts'),
  feeds: READ_WRITE('feeds'),
  'is-connected': ALWAYS('any'),
};

/**
 * The scope `method` on the route pattern `route` (e.g. "/api/public/v1/posts/:id")
 * needs; undefined when the route belongs to no known resource.
 */
export function requiredScope(method: string, route: string): Need | undefined {
  const resource = route.replace(/^.*?\/public\/v1\//, '').split('/')[0];
  const rule = Object.hasOwn(RESOURCES, resource) ? RESOURCES[resource] : undefined;
  if (!rule) return undefined;
  return method === 'GET' || method === 'HEAD' ? rule.read : rule.write;
}
