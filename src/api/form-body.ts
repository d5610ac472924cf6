/**
 * HTML forms post application/x-www-form-urlencoded; the routes that take forms
 * (login, consent, the OAuth token endpoint) register this parser in their own
 * scope, so the JSON API keeps refusing anything but JSON.
 */
import type { FastifyInstance } from 'fastify';

export function installFormParser(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const fields: Record<string, string> = {};
    // The first value wins; OAuth forbids repeated parameters anyway.
    for (const [name, value] of new URLSearchParams(body as string)) if (!Object.hasOwn(fields, name)) fields[name] = value;
    done(null, fields);
  });
}
