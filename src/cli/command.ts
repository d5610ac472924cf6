/** The shape of a client command and the parsing every command shares. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ClientConfig } from '../config.ts';
import type { Output } from './output.ts';
import { ClientError } from './session.ts';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

export interface Invocation {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
  /** The options in the order they were typed (posts create pairs --media with the --content before it). */
  tokens: Token[];
  config: ClientConfig;
  out: Output;
}

export interface Command {
  /** "posts create" */
  name: string;
  /** One line for the overview. */
  summary: string;
  /** The full help: usage, options, examples. */
  help: string;
  options?: Options;
  run(invocation: Invocation): Promise<void>;
}

/** Wrong use of a command: exit code 2 and a pointer to --help. */
export class UsageError extends ClientError {
  constructor(message: string) {
    super(message, 2);
  }
}

export const COMMON_OPTIONS: Options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export function parse(command: Command, args: string[]): Omit<Invocation, 'config' | 'out'> {
  try {
    const { values, positionals, tokens } = parseArgs({
      args,
      options: { ...COMMON_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
    return { values: values as Invocation['values'], positionals, tokens: tokens ?? [] };
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

export function str(invocation: Invocation, name: string): string | undefined {
  const value = invocation.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function flag(invocation: Invocation, name: string): boolean {
  return invocation.values[name] === true;
}

/** A repeatable option; "a,b" counts as two values. */
export function list(invocation: Invocation, name: string): string[] {
  const value = invocation.values[name];
  const raw = Array.isArray(value) ? (value as string[]) : typeof value === 'string' ? [value] : [];
  return raw
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

export function positional(invocation: Invocation, index: number, what: string): string {
  const value = invocation.positionals[index];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

const LOCAL_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * A date typed by a person: "2026-12-01 09:00" (no offset) is local time; an
 * ISO 8601 date with Z or an offset is taken as written. Returns ISO 8601 UTC.
 */
export function parseUserDate(text: string, what: string): string {
  const local = LOCAL_DATE.exec(text.trim());
  const date = local
    ? new Date(Number(local[1]), Number(local[2]) - 1, Number(local[3]), Number(local[4] ?? 0), Number(local[5] ?? 0), Number(local[6] ?? 0))
    : new Date(text);
  if (Number.isNaN(date.getTime())) throw new UsageError(`${what} "${text}" is not a date; use e.g. "2026-12-01 09:00" (local time) or 2026-12-01T09:00:00Z`);
  return date.toISOString();
}
