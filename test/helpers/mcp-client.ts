/**
 * An agent's side of Herald's MCP server for tests: the SDK's own client over
 * Streamable HTTP, and tool calls read as the text and structured answer a
 * model gets.
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface ToolAnswer {
  isError: boolean;
  text: string;
  data: any;
}

/** A client connected to `heraldUrl`'s /api/mcp with `credential` in Authorization; close it after the test. */
export async function connectMcp(heraldUrl: string, credential: string): Promise<Client> {
  const client = new Client({ name: 'herald-test-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${heraldUrl}/api/mcp`), { requestInit: { headers: { authorization: credential } } });
  await client.connect(transport);
  return client;
}

/** Agents of one Herald, each connected with its own credential, closed together at the end of the suite. */
export function mcpAgents(heraldUrl: () => string) {
  const clients: Client[] = [];
  return {
    async connect(credential: string): Promise<Client> {
      const client = await connectMcp(heraldUrl(), credential);
      clients.push(client);
      return client;
    },
    closeAll: () => Promise.all(clients.map((c) => c.close())),
  };
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { type: string; text: string }[];
    structuredContent?: any;
  };
  const text = result.content.map((c) => c.text).join('\n');
  return { isError: result.isError === true, text, data: result.structuredContent };
}

/** A call that must succeed; its structured answer. */
export async function toolResult(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const answer = await callTool(client, name, args);
  assert.equal(answer.isError, false, `${name} failed: ${answer.text}`);
  assert.deepEqual(JSON.parse(answer.text), answer.data, 'the text is the structured answer as JSON');
  return answer.data;
}
