/** The registry of networks Herald can publish to, by identifier. */
import type { Provider } from './types.ts';
import { webhook } from './webhook.ts';

const providers = new Map<string, Provider>([[webhook.identifier, webhook]]);

export function findProvider(identifier: string): Provider | undefined {
  return providers.get(identifier);
}

export function allProviders(): Provider[] {
  return [...providers.values()];
}
