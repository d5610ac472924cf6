import { useQuery, type QueryKey } from '@tanstack/react-query';
import { api, type SessionPath } from '../../api.ts';
import { useAction } from '../../data.ts';

/** A list from the server, the actions on it, and their errors: what every section has. */
export function useSection<P extends SessionPath<'GET'>>(queryKey: QueryKey, path: P) {
  const list = useQuery({ queryKey, queryFn: () => api('GET', path) });
  return { list, ...useAction(queryKey) };
}
