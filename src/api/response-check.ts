/**
 * For the tests: every answer is checked against the response schema its route
 * declares for that status (the schemas that also document the API), and each
 * mismatch is reported. In production answers are not checked twice: the code
 * builds them from typed rows.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodType } from 'zod';

export function checkResponsesAgainstSchemas(app: FastifyInstance, report: (problem: string) => void): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const responses = request.routeOptions.schema?.response as Record<string, ZodType> | undefined;
    const status = reply.statusCode;
    const schema = responses?.[status] ?? responses?.[`${String(status)[0]}xx`];
    if (!schema || typeof schema.safeParse !== 'function' || typeof payload !== 'string' || payload === '') return payload;
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      report(`${request.method} ${request.routeOptions.url} answered ${status} with a body that is not JSON`);
      return payload;
    }
    const result = schema.safeParse(body);
    if (!result.success) {
      const issues = result.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
      report(`${request.method} ${request.routeOptions.url} answered ${status} off its schema: ${issues}`);
    }
    return payload;
  });
}
