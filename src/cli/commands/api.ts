/** `herald api`: any route of the public API, for what has no command of its own. */
import type { Command } from '../command.ts';
import { parseJsonObject, positional, str, UsageError } from '../command.ts';
import { clientFor, requireSession } from '../session.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

const api: Command = {
  name: 'api',
  summary: 'call any route under /public/v1 and print the JSON answer',
  help: `Usage: herald api <METHOD> <route> [--data JSON] [--query KEY=VALUE ...]

Sends one request with the client's credential and prints the JSON answer.
A non-2xx answer prints the server's message on stderr and exits with 1.

Examples:
  herald api GET /notifications --query page=0
  herald api PUT /posts/p_123/status --data '{"status":"draft"}'
  herald api GET /integration-settings/ch_123`,
  options: { data: { type: 'string' }, query: { type: 'string', multiple: true } },
  async run(invocation) {
    const method = positional(invocation, 0, 'the method (GET, POST, PUT, PATCH, DELETE)').toUpperCase();
    if (!METHODS.includes(method)) throw new UsageError(`the method must be one of ${METHODS.join(', ')}`);
    const route = positional(invocation, 1, 'the route, e.g. /integrations').replace(/^\/?(api\/)?(public\/v1)?\/?/, '/');
    const data = str(invocation, 'data');
    const query: Record<string, string> = {};
    for (const pair of (invocation.values.query as string[] | undefined) ?? []) {
      const at = pair.indexOf('=');
      if (at <= 0) throw new UsageError(`--query takes key=value, got "${pair}"`);
      query[pair.slice(0, at)] = pair.slice(at + 1);
    }
    const answer = await clientFor(requireSession(invocation.config)).request(method, route, {
      body: data ? parseJsonObject(data, '--data') : undefined,
      query,
    });
    invocation.out.line(JSON.stringify(answer ?? null, null, 2));
  },
};

export const apiCommands = [api];
