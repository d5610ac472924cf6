import type { FastifyInstance } from 'fastify';

/**
 * "METHOD /path" of every route the server registered under `prefix`, read from
 * Fastify's route tree (each line adds its segment to its parent's path), HEAD
 * left out (Fastify adds one beside every GET), sorted, each once.
 */
export function registeredRoutes(server: FastifyInstance, prefix: string): string[] {
  const routes = new Set<string>();
  const stack: { depth: number; path: string }[] = [];
  for (const line of server.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│├└─\s]*)(\S.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length;
    while (stack.length > 0 && stack[stack.length - 1].depth >= depth) stack.pop();
    const segment = match[2];
    const parent = stack[stack.length - 1]?.path ?? '';
    const path = parent === '/' && !segment.startsWith('/') ? `/${segment}` : parent + segment;
    stack.push({ depth, path });
    for (const method of match[3]?.split(', ') ?? []) {
      if (method !== 'HEAD' && path.startsWith(prefix)) routes.add(`${method} ${path}`);
    }
  }
  return [...routes].sort();
}
