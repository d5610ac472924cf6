/**
 * What an API key or an OAuth token may do. A credential without a scope list
 * has full access; one with a list may only do what the list names.
 * Which scope each public endpoint needs is decided in src/api/scopes.ts.
 */
import { invalidField } from './errors.ts';

export const SCOPES = {
  'posts:read': 'list and read posts, find posting slots',
  'posts:write': 'create, change, retry and delete posts',
  'media:read': 'list and read uploaded media',
  'media:write': 'upload media',
  'channels:read': 'list channels, their settings and customers',
  'channels:write': 'connect, change and remove channels and customers',
  'analytics:read': 'read analytics of channels and posts',
  'account:read': 'read notifications and short-link statistics',
  'webhooks:read': 'list webhooks and their deliveries',
  'webhooks:write': 'create, change and delete webhooks',
  'feeds:read': 'list RSS and Atom subscriptions and what they posted',
  'feeds:write': 'subscribe to feeds, change, pause, read now and delete subscriptions',
} as const;

export type Scope = keyof typeof SCOPES;

/** null = full access. */
export type ScopeList = Scope[] | null;

export function isScope(name: string): name is Scope {
  return Object.hasOwn(SCOPES, name);
}

/** Checks a requested list (an array or OAuth's space-separated string); throws 400 naming `path` on an unknown scope. */
export function parseScopes(input: string[] | string | undefined | null, path: string): ScopeList {
  if (input === undefined || input === null) return null;
  const names = typeof input === 'string' ? input.split(/\s+/).filter(Boolean) : input;
  if (typeof input === 'string' && names.length === 0) return null;
  const unknown = names.filter((n) => !isScope(n));
  if (unknown.length > 0)
    throw invalidField(path, `unknown scope ${JSON.stringify(unknown[0])}; known scopes: ${Object.keys(SCOPES).join(', ')}`, 'invalid_scope');
  return [...new Set(names as Scope[])].sort();
}

export function scopesToJson(scopes: ScopeList): string | null {
  return scopes === null ? null : JSON.stringify(scopes);
}

export function scopesFromJson(text: string | null): ScopeList {
  return text === null ? null : (JSON.parse(text) as Scope[]);
}

/** Whether a credential with `granted` may use something that needs `needed`. */
export function allows(granted: ScopeList, needed: Scope): boolean {
  return granted === null || granted.includes(needed);
}

/**
 * What a person of `role` may grant an application. Members may not manage keys,
 * so they never hand out full access (which is what a full-access key has, routes
 * yet to come included): their grant is every named scope at most.
 */
export function capScopesForRole(requested: ScopeList, role: 'owner' | 'admin' | 'member'): ScopeList {
  if (role !== 'member' || requested !== null) return requested;
  return (Object.keys(SCOPES) as Scope[]).sort();
}

/** `requested` must stay within `granted` (a refresh may narrow, never widen). */
export function within(requested: ScopeList, granted: ScopeList): boolean {
  if (granted === null) return true;
  if (requested === null) return false;
  return requested.every((s) => granted.includes(s));
}

/** OAuth's `scope` answer: space-separated names, or "*" for full access. */
export function scopeString(scopes: ScopeList): string {
  return scopes === null ? '*' : scopes.join(' ');
}
