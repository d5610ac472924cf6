/**
 * A network's server-side settings: its base URLs (defaults overridable with
 * HERALD_<ENV>_<NAME>_URL) and the app credentials the operator configured
 * (HERALD_<ENV>_CLIENT_ID ...). A network missing a required credential is
 * "not configured": listed, but it cannot be connected.
 */
import type { Config } from '../config.ts';
import type { OutboundGuard } from '../lib/outbound.ts';
import { NetworkHttp } from './adapter-kit/network-http.ts';
import type { NetworkContext, Provider } from './types.ts';

export interface NetworkSettings {
  urls: Record<string, string>;
  app: Record<string, string>;
  /** Names of the required variables that are not set. */
  missing: string[];
}

export function envPrefix(provider: Provider<unknown>): string {
  return `HERALD_${provider.envPrefix ?? provider.identifier.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`;
}

export function networkSettings(config: Config, provider: Provider<unknown>): NetworkSettings {
  const prefix = envPrefix(provider);
  const env = config.networkEnv;
  const urls = Object.fromEntries(
    Object.entries(provider.urls ?? {}).map(([name, fallback]) => [name, (env[`${prefix}${name.toUpperCase()}_URL`] ?? fallback).replace(/\/+$/, '')]),
  );
  const app: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of provider.appSettings ?? []) {
    if (env[prefix + name]) app[name] = env[prefix + name];
    else missing.push(prefix + name);
  }
  for (const name of provider.optionalSettings ?? []) if (env[prefix + name]) app[name] = env[prefix + name];
  return { urls, app, missing };
}

/** Everything an adapter call needs from outside. */
export function networkContext(config: Config, outbound: OutboundGuard, provider: Provider<unknown>, signal: AbortSignal): NetworkContext {
  const { urls, app } = networkSettings(config, provider);
  return { urls, app, outbound, signal, http: new NetworkHttp(outbound, provider.name, signal, provider.readAnswer) };
}
