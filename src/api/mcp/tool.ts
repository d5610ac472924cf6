/**
 * What an MCP tool of Herald is: a name, words for the model, the scope it needs,
 * an input schema made of the public API's own zod schemas, and a run that calls
 * the same domain services as the public route it stands for.
 */
import type { z } from 'zod';
import type { Services } from '../../services.ts';
import type { Principal } from '../../domain/accounts.ts';
import type { Scope } from '../../domain/scopes.ts';

export interface ToolContext {
  services: Services;
  principal: Principal;
}

export interface HeraldTool<Input extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** Read by the model: what the tool does, when to use it and what it answers. */
  description: string;
  scope: Scope;
  /** Top-level arguments are strict (an unknown one is named back), the parts taken from the contract are as the API takes them. */
  input: Input;
  /** MCP annotations: only reads; deletes something; a repeat changes nothing more; reaches outside Herald. */
  hints: { readOnly: boolean; destructive?: boolean; idempotent?: boolean; openWorld?: boolean };
  /** An object (sent as the result's structured content and as JSON text). */
  run(args: z.output<Input>, context: ToolContext): Promise<Record<string, unknown>>;
}

/** Keeps each module's tool typed by its own input schema. */
export function defineTool<Input extends z.ZodObject>(tool: HeraldTool<Input>): HeraldTool {
  return tool as unknown as HeraldTool;
}
