/**
 * Routes outside the APIs: the OAuth authorization server (token and
 * revocation, the sign-in and consent pages) and the preview links a visitor
 * opens without an account. None is in the OpenAPI document; the pages and the
 * OAuth answers (RFC 6749's own bodies) declare no JSON schema.
 */
import { z } from 'zod';
import { errorBody } from '../common.ts';
import { guestAnswer, guestCommentBody, guestDecisionBody, previewToken, previewView } from '../approvals.ts';
import { route, routeTable } from '../route.ts';

/** As long as the login page takes `next` in its address; a longer one is not followed. */
export const MAX_NEXT = 4096;

export const oauthTokenRoutes = routeTable('/api/oauth', {
  token: route({ method: 'POST', path: '/token', responses: {} }),
  revoke: route({ method: 'POST', path: '/revoke', responses: {} }),
  /** Dynamic client registration (RFC 7591), for MCP clients that know only the server's address. */
  register: route({ method: 'POST', path: '/register', responses: {} }),
});

/** How an MCP client finds the OAuth server by itself: RFC 9728 and RFC 8414 metadata documents. */
export const oauthDiscoveryRoutes = routeTable('/.well-known', {
  protectedResource: route({ method: 'GET', path: '/oauth-protected-resource', responses: {} }),
  /** The same document at the address RFC 9728 section 3.1 derives from the MCP endpoint's path. */
  mcpProtectedResource: route({ method: 'GET', path: '/oauth-protected-resource/api/mcp', responses: {} }),
  authorizationServer: route({ method: 'GET', path: '/oauth-authorization-server', responses: {} }),
});

export const oauthPages = routeTable('', {
  loginPage: route({
    method: 'GET',
    path: '/oauth/login',
    query: z.object({ next: z.string().max(MAX_NEXT).optional(), invitation: z.string().max(200).optional() }),
    responses: {},
  }),
  logIn: route({ method: 'POST', path: '/oauth/login', responses: {} }),
  consentPage: route({ method: 'GET', path: '/oauth/authorize', responses: {} }),
  consent: route({ method: 'POST', path: '/oauth/authorize', responses: {} }),
});

export const previewRoutes = routeTable('', {
  page: route({ method: 'GET', path: '/p/:token', params: previewToken, responses: {} }),
  view: route({
    method: 'GET',
    path: '/api/preview/:token',
    params: previewToken,
    responses: { 200: previewView, 404: errorBody, 410: errorBody, 429: errorBody },
  }),
  comment: route({
    method: 'POST',
    path: '/api/preview/:token/comments',
    params: previewToken,
    body: guestCommentBody,
    responses: { 201: guestAnswer, 400: errorBody, 404: errorBody, 410: errorBody, 429: errorBody },
  }),
  decide: route({
    method: 'POST',
    path: '/api/preview/:token/decision',
    params: previewToken,
    body: guestDecisionBody,
    responses: { 201: guestAnswer, 400: errorBody, 404: errorBody, 409: errorBody, 410: errorBody, 429: errorBody },
  }),
});
