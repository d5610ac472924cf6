/**
 * The web application's own routes, under /api/app (the session cookie and its
 * CSRF token; see src/api/app). Not in the OpenAPI document, but declared like
 * the public routes so the server checks what they take, the tests hold their
 * answers to these schemas and the web application's types come from here.
 */
import { z } from 'zod';
import { idParam, isoInstant } from '../common.ts';
import { mediaObject, mediaTag } from '../media.ts';
import { listPostsQuery, postSummary } from '../posts.ts';
import { WEBHOOK_EVENTS } from '../webhooks.ts';
import { personPreferences, preferencesChange } from '../preferences.ts';
import { mailChoicesChange, mailSettings } from '../mail.ts';
import { appRoute, route, routeTable } from '../route.ts';
import { integration } from '../channels.ts';

export const email = z.email().max(320);
export const password = z.string().min(10, 'must be at least 10 characters').max(1024);

export const TEMPLATE_KINDS = ['template', 'signature'] as const;
/** Longest lifetime an application may ask for its access tokens (a year). */
export const MAX_TOKEN_TTL_SECONDS = 365 * 86_400;

const role = z.enum(['owner', 'admin', 'member']);
const invitableRole = z.enum(['admin', 'member']);
const name = z.string().trim().min(1).max(200);
const scopeList = z.array(z.string()).nullable().describe('null: full access');

/** A JSON Schema document (as z.toJSONSchema writes it): the composer builds its counters and forms from these. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  description?: string;
  default?: unknown;
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  format?: string;
}
const jsonSchema = z.custom<JsonSchema>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'must be a JSON Schema object');

/** A post the engine is retrying after a failure it expects to pass (a 5xx, a timeout): its state stays QUEUE meanwhile. */
export const retryingPost = z.object({
  id: z.string().describe("the post's id (its thread's first item)"),
  attempt: z.number().int().describe('attempts made so far'),
  nextTryAt: z.string().nullable().describe('when the engine tries again; null while an attempt is under way'),
  lastReason: z.string().describe("why the last attempt did not go through, in the network's words"),
  excerpt: z.string().describe("the start of the post's text"),
  channel: z.object({ id: z.string(), name: z.string() }),
});

export const user = z.object({ id: z.string(), email: z.string(), name: z.string(), role, createdAt: z.string() });

export const session = z.object({
  user,
  account: z.object({ id: z.string(), name: z.string() }),
  csrfToken: z.string(),
  permissions: z.object({ manageKeys: z.boolean(), manageApps: z.boolean(), invite: z.boolean(), managePeople: z.boolean(), reviewPosts: z.boolean() }),
});

export const apiKey = z.object({
  id: z.string(),
  name: z.string(),
  hint: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revoked: z.boolean(),
  scopes: scopeList,
});
export const revealedKey = apiKey.extend({ key: z.string() });

export const customerView = z.object({ id: z.string(), name: z.string(), createdAt: z.string(), channels: z.array(z.string()) });

export const invitation = z.object({
  id: z.string(),
  email: z.string(),
  role,
  createdAt: z.string(),
  expiresAt: z.string(),
  accepted: z.boolean(),
  signupUrl: z.string().nullable().describe('the link to send the invitee while the invitation is open (for those who may invite)'),
});

export const oauthApp = z.object({
  clientId: z.string(),
  name: z.string(),
  redirectUris: z.array(z.string()),
  tokenLifetime: z.number(),
  createdAt: z.string(),
});
export const oauthAppWithSecret = oauthApp.extend({ clientSecret: z.string() });
export const oauthGrant = z.object({
  id: z.string(),
  app: z.object({ clientId: z.string(), name: z.string() }),
  scopes: scopeList,
  grantedBy: z.string(),
  createdAt: z.string(),
  accessExpiresAt: z.string(),
  lastUsedAt: z.string().nullable(),
});

/** An agent (MCP client) that registered itself and was approved in this account. */
export const connectedAgent = z.object({
  clientId: z.string(),
  name: z.string(),
  clientUri: z.string().nullable(),
  redirectUris: z.array(z.string()),
  registeredAt: z.string(),
  connectedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  activeTokens: z.number(),
});

export const template = z.object({ id: z.string(), kind: z.enum(TEMPLATE_KINDS), name: z.string(), content: z.string(), updatedAt: z.string() });

/** A network with its content rules and its settings and credentials as JSON Schema. */
export const network = z.object({
  identifier: z.string(),
  name: z.string(),
  auth: z.enum(['oauth2', 'oauth1', 'credentials']),
  configured: z.boolean(),
  missing: z.array(z.string()),
  rules: z.object({
    maxLength: z.number(),
    // The names of src/providers/text-counting.ts; an answer with another is off this schema in the tests.
    counting: z.enum(['codePoints', 'utf16', 'utf8Bytes', 'graphemes', 'x', 'mastodon', 'threads']),
    maxMedia: z.number(),
    minMedia: z.number(),
    mediaKinds: z.array(z.enum(['image', 'video'])),
    threads: z.boolean(),
  }),
  settings: jsonSchema,
  credentials: jsonSchema.nullable(),
  /** OAuth networks that need something before the person goes there (Mastodon: their server). */
  startOptions: jsonSchema.nullable(),
  /** Connected by an approval the person gives on the network (a link to open), not by typing credentials. */
  approval: z.boolean(),
  /** What the network allows, said where the person connects (Medium takes no new tokens). */
  note: z.string().nullable(),
});

/** Where a file is used: a post or a repeating post. */
export const mediaUse = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('post'), id: z.string(), state: postSummary.shape.state, publishDate: z.string(), channel: z.string() }),
  z.object({ kind: z.literal('series'), id: z.string(), name: z.string().nullable(), nextDate: z.string() }),
]);

/** A link preview as Herald reads it for the networks that need one built (Bluesky): the page's Open Graph title, description and image. */
export const linkCard = z.object({
  uri: z.string(),
  title: z.string(),
  description: z.string(),
  /** The image as a data: URL, only when it could be fetched within the size a network takes. */
  image: z.string().nullable(),
});

/** Characters of a post's text a calendar tile receives: more than a tile shows, far less than a long post. */
export const TILE_TEXT_CHARS = 120;

/**
 * What a calendar tile shows of a post (the first item of its thread): the
 * start of its text, its time and state, and its channel's id (the page has the
 * channels' names and pictures already). A month of 1,000 posts is a fraction
 * of the public list's size, which carries settings, tags and media.
 */
export const calendarTile = z.object({
  id: z.string(),
  text: z.string().describe(`the first ${TILE_TEXT_CHARS} characters`),
  publishDate: z.string(),
  state: postSummary.shape.state,
  error: z.string().nullable(),
  approval: postSummary.shape.approval,
  seriesId: z.string().nullable(),
  channel: z.string(),
});

/** An e-mail domain the owner lets join through single sign-on. */
const emailDomain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/, 'must be an e-mail domain such as example.com');

export const ssoSettings = z.object({
  allowedDomains: z.array(emailDomain).max(50).describe('people with a verified e-mail of these domains join on their first sign-in'),
  domainRole: invitableRole.describe('the role they join with'),
  passwordsOff: z.boolean().describe('only the owner may still sign in with a password'),
});

/** The answer of removing something: its id and a flag saying what happened (always true). */
const approvalParams = z.object({ provider: z.string().min(1).max(50) });
const idAnd = <const K extends string>(flag: K) => z.object({ id: z.string() }).extend({ [flag]: z.boolean() } as { [P in K]: z.ZodBoolean });

export const appRoutes = routeTable('/api/app', {
  signUp: appRoute({
    method: 'POST',
    path: '/auth/signup',
    body: z.object({ email, password, name: z.string().trim().max(200).optional(), invitation: z.string().max(200).optional() }),
    responses: { 201: session },
  }),
  logIn: appRoute({
    method: 'POST',
    path: '/auth/login',
    body: z.object({ email: z.string().max(320), password: z.string().max(1024) }),
    responses: { 200: session },
  }),
  authStatus: appRoute({ method: 'GET', path: '/auth/status', responses: { 200: z.object({ signupOpen: z.boolean() }) } }),
  /** Which sign-in methods this server offers: the sign-in page shows a button for single sign-on when it is configured. */
  signInMethods: appRoute({
    method: 'GET',
    path: '/auth/methods',
    responses: {
      200: z.object({
        password: z.boolean(),
        sso: z.object({ name: z.string(), startUrl: z.string().describe('the address that sends the browser to the provider') }).nullable(),
      }),
    },
  }),
  /** Single sign-on: a redirect to the OpenID Connect provider, and its way back (a redirect into the web application). */
  /** Takes `next`, a path of this server to open once signed in (read by its handler: a query schema here makes the call types too deep). */
  oidcStart: appRoute({ method: 'GET', path: '/auth/oidc/start', responses: {} }),
  oidcCallback: appRoute({ method: 'GET', path: '/auth/oidc/callback', responses: {} }),
  session: appRoute({ method: 'GET', path: '/session', responses: { 200: session } }),
  logOut: appRoute({ method: 'POST', path: '/auth/logout', responses: { 200: z.object({ signedOut: z.boolean() }) } }),
  /** "Forgot password?": the same answer whether or not the address belongs to someone. */
  forgotPassword: appRoute({
    method: 'POST',
    path: '/auth/password-reset',
    body: z.object({ email }),
    responses: {
      202: z.object({
        mailEnabled: z.boolean().describe('false: this Herald sends no mail; the owner makes a link with "herald people reset-password"'),
      }),
    },
  }),
  /** The link's page: a new password, once; the person is signed in and their other sessions end. */
  resetPassword: appRoute({
    method: 'POST',
    path: '/auth/password-reset/complete',
    body: z.object({ token: z.string().min(1).max(200), password }),
    responses: { 200: session },
  }),

  people: appRoute({ method: 'GET', path: '/people', responses: { 200: z.array(user) } }),
  setRole: appRoute({ method: 'PATCH', path: '/people/:id', params: idParam, body: z.object({ role: invitableRole }), responses: { 200: user } }),
  removePerson: appRoute({ method: 'DELETE', path: '/people/:id', params: idParam, responses: { 200: idAnd('removed') } }),
  ssoSettings: appRoute({
    method: 'GET',
    path: '/sso',
    responses: { 200: ssoSettings.extend({ configured: z.boolean(), providerName: z.string().nullable() }) },
  }),
  saveSsoSettings: appRoute({ method: 'PUT', path: '/sso', body: ssoSettings, responses: { 200: ssoSettings } }),
  invitations: appRoute({ method: 'GET', path: '/invitations', responses: { 200: z.array(invitation) } }),
  invite: appRoute({
    method: 'POST',
    path: '/invitations',
    body: z.object({ email, role: invitableRole.default('member') }),
    responses: {
      201: invitation.extend({
        token: z.string(),
        signupUrl: z.string(),
        mailed: z.boolean().describe('the invitation is on its way by mail; false: mail is off, send the link yourself'),
      }),
    },
  }),
  withdrawInvitation: appRoute({ method: 'DELETE', path: '/invitations/:id', params: idParam, responses: { 200: idAnd('withdrawn') } }),

  keys: appRoute({ method: 'GET', path: '/keys', responses: { 200: z.array(apiKey) } }),
  scopes: appRoute({ method: 'GET', path: '/scopes', responses: { 200: z.array(z.object({ name: z.string(), description: z.string() })) } }),
  createKey: appRoute({
    method: 'POST',
    path: '/keys',
    body: z.object({ name, scopes: z.array(z.string().max(100)).max(50).nullable().optional() }),
    responses: { 201: revealedKey },
  }),
  revealKey: appRoute({ method: 'POST', path: '/keys/:id/reveal', params: idParam, responses: { 200: z.object({ id: z.string(), key: z.string() }) } }),
  rotateKey: appRoute({ method: 'POST', path: '/keys/:id/rotate', params: idParam, responses: { 200: revealedKey } }),
  revokeKey: appRoute({ method: 'DELETE', path: '/keys/:id', params: idParam, responses: { 200: idAnd('revoked') } }),

  customers: appRoute({ method: 'GET', path: '/customers', responses: { 200: z.array(customerView) } }),
  createCustomer: appRoute({ method: 'POST', path: '/customers', body: z.object({ name }), responses: { 201: customerView } }),
  renameCustomer: appRoute({ method: 'PATCH', path: '/customers/:id', params: idParam, body: z.object({ name }), responses: { 200: customerView } }),
  deleteCustomer: appRoute({
    method: 'DELETE',
    path: '/customers/:id',
    params: idParam,
    responses: { 200: z.object({ deleted: z.boolean(), id: z.string() }) },
  }),
  assignChannels: appRoute({
    method: 'PUT',
    path: '/customers/:id/channels',
    params: idParam,
    body: z.object({ channels: z.array(z.string().min(1).max(200)).max(1000) }),
    responses: { 200: customerView },
  }),

  oauthApps: appRoute({ method: 'GET', path: '/oauth/apps', responses: { 200: z.array(oauthApp) } }),
  registerApp: appRoute({
    method: 'POST',
    path: '/oauth/apps',
    body: z.object({ name, redirectUris: z.array(z.string().min(1).max(2048)).min(1).max(20), tokenLifetime: tokenLifetime().optional() }),
    responses: { 201: oauthAppWithSecret },
  }),
  updateApp: appRoute({
    method: 'PATCH',
    path: '/oauth/apps/:id',
    params: idParam,
    body: z.object({
      name: name.optional(),
      redirectUris: z.array(z.string().min(1).max(2048)).min(1).max(20).optional(),
      tokenLifetime: tokenLifetime().optional(),
    }),
    responses: { 200: oauthApp },
  }),
  rotateAppSecret: appRoute({ method: 'POST', path: '/oauth/apps/:id/secret', params: idParam, responses: { 200: oauthAppWithSecret } }),
  deleteApp: appRoute({
    method: 'DELETE',
    path: '/oauth/apps/:id',
    params: idParam,
    responses: { 200: z.object({ deleted: z.boolean(), clientId: z.string() }) },
  }),
  authorizations: appRoute({ method: 'GET', path: '/oauth/authorizations', responses: { 200: z.array(oauthGrant) } }),
  revokeAuthorization: appRoute({
    method: 'DELETE',
    path: '/oauth/authorizations/:id',
    params: idParam,
    responses: { 200: z.object({ revoked: z.boolean(), id: z.string() }) },
  }),

  connectedAgents: appRoute({ method: 'GET', path: '/oauth/agents', responses: { 200: z.array(connectedAgent) } }),
  /** Disconnects the agent: its registration is removed and its tokens stop working at once. */
  disconnectAgent: appRoute({
    method: 'DELETE',
    path: '/oauth/agents/:id',
    params: idParam,
    responses: { 200: z.object({ disconnected: z.boolean(), clientId: z.string() }) },
  }),

  networks: appRoute({ method: 'GET', path: '/networks', responses: { 200: z.array(network) } }),
  /** Connecting by approval: the network's request and where the person approves it, then asking until they did. */
  startApproval: appRoute({
    method: 'POST',
    path: '/connect/:provider/approval',
    params: approvalParams,
    responses: { 201: z.object({ id: z.string(), approvalUrl: z.string() }) },
  }),
  checkApproval: appRoute({
    method: 'GET',
    path: '/connect/:provider/approval/:id',
    params: approvalParams.extend({ id: z.string().min(1).max(200) }),
    responses: { 200: z.object({ status: z.enum(['pending', 'approved']), channel: integration.nullable() }) },
  }),
  /** Channels whose access the network does not let Herald renew: they publish until then, and need connecting again. */
  expiringAccess: appRoute({
    method: 'GET',
    path: '/channels/expiring',
    responses: { 200: z.array(z.object({ id: z.string(), accessExpiresAt: z.string() })) },
  }),
  webhookEvents: appRoute({ method: 'GET', path: '/webhook-events', responses: { 200: z.array(z.enum(WEBHOOK_EVENTS)).readonly() } }),
  describeMedia: appRoute({
    method: 'PATCH',
    path: '/media/:id',
    params: idParam,
    body: z.object({ alt: z.string().max(1500).optional(), tags: z.array(mediaTag).max(20).optional() }),
    responses: { 200: mediaObject },
  }),
  mediaUsage: appRoute({ method: 'GET', path: '/media/:id/usage', params: idParam, responses: { 200: z.array(mediaUse) } }),
  calendar: appRoute({
    method: 'GET',
    path: '/calendar',
    query: listPostsQuery.omit({ customer: true }),
    responses: {
      200: z.object({
        posts: z.array(calendarTile),
        publishing: z.array(z.string()).describe('ids of the posts being published now'),
        retrying: z.array(retryingPost).describe('queued posts the engine is trying again'),
      }),
    },
  }),
  publishing: appRoute({ method: 'GET', path: '/posts/publishing', responses: { 200: z.array(z.string()).describe('ids of the posts being published now') } }),
  retrying: appRoute({ method: 'GET', path: '/posts/retrying', responses: { 200: z.array(retryingPost) } }),
  reschedule: appRoute({
    method: 'PUT',
    path: '/posts/:id/date',
    params: idParam,
    body: z.object({ date: isoInstant }),
    responses: { 200: z.object({ id: z.string(), publishDate: z.string() }) },
  }),

  linkCard: appRoute({
    method: 'GET',
    path: '/link-card',
    query: z.object({ url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048) }),
    responses: { 200: z.object({ card: linkCard.nullable().describe('null: the page could not be read, so the post goes out without a card') }) },
  }),

  templates: appRoute({ method: 'GET', path: '/templates', responses: { 200: z.array(template) } }),
  createTemplate: appRoute({
    method: 'POST',
    path: '/templates',
    body: z.object({ kind: z.enum(TEMPLATE_KINDS), name, content: templateContent() }),
    responses: { 201: template },
  }),
  updateTemplate: appRoute({
    method: 'PATCH',
    path: '/templates/:id',
    params: idParam,
    body: z.object({ name: name.optional(), content: templateContent().optional() }),
    responses: { 200: template },
  }),
  deleteTemplate: appRoute({
    method: 'DELETE',
    path: '/templates/:id',
    params: idParam,
    responses: { 200: z.object({ deleted: z.boolean(), id: z.string() }) },
  }),

  preferences: appRoute({ method: 'GET', path: '/preferences', responses: { 200: personPreferences } }),
  setPreferences: appRoute({ method: 'PUT', path: '/preferences', body: preferencesChange, responses: { 200: personPreferences } }),

  mailSettings: appRoute({ method: 'GET', path: '/mail', responses: { 200: mailSettings } }),
  setMailChoices: appRoute({ method: 'PUT', path: '/mail', body: mailChoicesChange, responses: { 200: mailSettings } }),

  /** Server-Sent Events: a stream, not a JSON answer. */
  events: route({ method: 'GET', path: '/events', responses: {} }),
});

function tokenLifetime() {
  return z.number().int().min(60).max(MAX_TOKEN_TTL_SECONDS).describe('seconds');
}
function templateContent() {
  return z.string().min(1).max(100_000);
}
