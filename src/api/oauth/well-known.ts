/**
 * What an MCP client reads to sign in by itself (MCP authorization, 2025-06-18):
 * the protected resource metadata of /api/mcp (RFC 9728), which names Herald as
 * its authorization server, and Herald's authorization server metadata
 * (RFC 8414): where to register (RFC 7591), authorize and get tokens, with PKCE
 * S256 and refresh tokens. Addresses are built from HERALD_PUBLIC_URL, the
 * address clients know the server by.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Services } from '../../services.ts';
import { oauthDiscoveryRoutes, oauthPages, oauthTokenRoutes } from '../../contract/routes/visitors.ts';
import { heraldResources } from '../../domain/oauth.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { serve } from '../serve.ts';

export const MCP_PATH = '/api/mcp';

const { routes } = oauthDiscoveryRoutes;

function base(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '');
}

/** The address of /api/mcp's metadata, as its 401 names it (RFC 9728 section 5.1). */
export function protectedResourceMetadataUrl(publicUrl: string): string {
  return `${base(publicUrl)}${oauthDiscoveryRoutes.prefix}${routes.mcpProtectedResource.path}`;
}

export function protectedResourceMetadata(publicUrl: string) {
  return {
    resource: heraldResources(publicUrl).mcp,
    authorization_servers: [base(publicUrl)],
    scopes_supported: Object.keys(SCOPES),
    bearer_methods_supported: ['header'],
    resource_name: 'Herald MCP server',
  };
}

export function authorizationServerMetadata(publicUrl: string) {
  const issuer = base(publicUrl);
  const token = (path: string) => `${issuer}${oauthTokenRoutes.prefix}${path}`;
  const clientAuth = ['client_secret_basic', 'client_secret_post', 'none'];
  return {
    issuer,
    authorization_endpoint: `${issuer}${oauthPages.routes.consentPage.path}`,
    token_endpoint: token(oauthTokenRoutes.routes.token.path),
    registration_endpoint: token(oauthTokenRoutes.routes.register.path),
    revocation_endpoint: token(oauthTokenRoutes.routes.revoke.path),
    scopes_supported: Object.keys(SCOPES),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: clientAuth,
    revocation_endpoint_auth_methods_supported: clientAuth,
    code_challenge_methods_supported: ['S256'],
  };
}

/** Public documents: any origin may read them (browser-based MCP clients discover from their own page). */
function sendDocument(reply: FastifyReply, document: object): FastifyReply {
  return reply.header('access-control-allow-origin', '*').header('cache-control', 'public, max-age=300').send(document);
}

export function discoveryRoutes(services: Services): FastifyPluginAsync {
  const { publicUrl } = services.config;
  return async (app) => {
    const resource = async (_request: unknown, reply: FastifyReply) => sendDocument(reply, protectedResourceMetadata(publicUrl));
    serve(app, routes.protectedResource, { hide: true, handler: resource });
    serve(app, routes.mcpProtectedResource, { hide: true, handler: resource });
    serve(app, routes.authorizationServer, { hide: true, handler: async (_request, reply) => sendDocument(reply, authorizationServerMetadata(publicUrl)) });
  };
}
