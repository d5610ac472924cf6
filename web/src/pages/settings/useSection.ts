import { useQuery, type QueryKey } from '@tanstack/react-query';
import { api } from '../../api.ts';
import { useAction } from '../../data.ts';

/** A list from the server, the actions on it, and their errors: what every section has. */
export function useSection<T>(queryKey: QueryKey, path: string) {
  const list = useQuery({ queryKey, queryFn: () => api<T>('GET', path) });
  return { list, ...useAction(queryKey) };
}
