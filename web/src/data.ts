/** The queries the pages share, and the live stream that keeps them current. */
import { useEffect, useState } from 'react';
import { useQuery, useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import type { z } from 'zod';
import type { notificationsPage } from '../../src/contract/index.ts';
import { api, pub } from './api.ts';

export const keys = {
  session: ['session'] as const,
  channels: ['channels'] as const,
  networks: ['networks'] as const,
  posts: ['posts'] as const,
  post: (id: string) => ['posts', 'one', id] as const,
  media: ['media'] as const,
  notifications: ['notifications'] as const,
  templates: ['templates'] as const,
};

export const useSession = () => useQuery({ queryKey: keys.session, queryFn: () => api('GET', '/session'), retry: false });
export const useChannels = () => useQuery({ queryKey: keys.channels, queryFn: () => api('GET', pub('/integrations')) });
export const useTemplates = () => useQuery({ queryKey: keys.templates, queryFn: () => api('GET', '/templates') });
export const useNetworks = () => useQuery({ queryKey: keys.networks, queryFn: () => api('GET', '/networks'), staleTime: Infinity });

export type NotificationPage = z.output<typeof notificationsPage>;
export const useNotifications = () => useQuery({ queryKey: keys.notifications, queryFn: () => api('GET', pub('/notifications')) });

/**
 * A change the person asks for: its error (shown beside the fields it names)
 * and, once it worked, the lists under `refresh` asked for again.
 */
export function useAction(refresh: QueryKey) {
  const client = useQueryClient();
  const [error, setError] = useState<unknown>();
  const act = async <R>(work: () => Promise<R>): Promise<R | undefined> => {
    setError(undefined);
    try {
      const result = await work();
      await client.invalidateQueries({ queryKey: refresh });
      return result;
    } catch (err) {
      setError(err);
      return undefined;
    }
  };
  return { error, setError, act };
}

function refreshAll(client: QueryClient) {
  for (const key of [keys.posts, keys.channels, keys.notifications]) void client.invalidateQueries({ queryKey: key });
}

/**
 * Follows /api/app/events: whenever posts or channels change anywhere (this tab,
 * another person, the publishing engine), the lists on screen are asked for again.
 */
export function useLiveUpdates(enabled: boolean): void {
  const client = useQueryClient();
  useEffect(() => {
    if (!enabled) return;
    const source = new EventSource('/api/app/events');
    source.addEventListener('change', () => refreshAll(client));
    // After a lost connection the browser reconnects by itself; whatever happened meanwhile is fetched.
    source.addEventListener('ready', () => refreshAll(client));
    return () => source.close();
  }, [enabled, client]);
}
