/** Channels (the API's "integrations"), customers (groups) and slots. */
import type { Command } from '../command.ts';
import { parseJsonObject, positional, str } from '../command.ts';
import { localDate, table } from '../output.ts';
import { clientFor, requireSession } from '../session.ts';

const list: Command = {
  name: 'channels list',
  summary: 'connected channels',
  help: `Usage: herald channels list [--customer ID]

Lists the connected channels; their ids are what "posts create --channel" takes.

Options:
  --customer ID   only the channels of one customer (see "herald groups list")
  --json          the API's answer as JSON

Examples:
  herald channels list
  herald channels list --json | jq -r '.[].id'`,
  options: { customer: { type: 'string' } },
  async run(invocation) {
    const { out, config } = invocation;
    const channels = await clientFor(requireSession(config)).integrations({ group: str(invocation, 'customer') });
    out.result(channels, (rows) =>
      rows.length === 0
        ? 'No channels yet. Add one with "herald channels add webhook --credentials \'{"url":"https://..."}\'".'
        : table(
            ['ID', 'NAME', 'NETWORK', 'CUSTOMER', 'TIME ZONE', 'STATUS'],
            rows.map((c) => [
              c.id,
              c.name,
              c.identifier,
              c.customer?.name ?? '-',
              c.timeZone,
              c.disabled ? 'disabled' : c.needsReconnect ? 'needs reconnect' : 'active',
            ]),
            out.style,
          ),
    );
  },
};

const slot: Command = {
  name: 'channels slot',
  summary: "a channel's next free posting time",
  help: `Usage: herald channels slot <channel-id>

Prints the channel's next posting time that has no post yet (find-slot).

Example:
  herald channels slot ch_123`,
  async run(invocation) {
    const id = positional(invocation, 0, 'the channel id (see "herald channels list")');
    const found = await clientFor(requireSession(invocation.config)).findSlot(id);
    invocation.out.result(found, (slot) => `Next free slot: ${localDate(slot.date)}  (${slot.date})`);
  },
};

const add: Command = {
  name: 'channels add',
  summary: 'add a channel that connects with credentials (webhook)',
  help: `Usage: herald channels add <network> [--name NAME] [--credentials JSON] [--customer ID]
                           [--time-zone ZONE] [--posting-time HH:MM ...]

Adds a channel of a network that connects with credentials rather than a
browser login, such as "webhook". Secrets in the answer are shown once.

Examples:
  herald channels add webhook --name "My n8n" --credentials '{"url":"https://n8n.example.com/webhook/herald"}'
  herald channels add webhook --credentials '{"url":"https://example.com/hook"}' --posting-time 09:00 --posting-time 17:30`,
  options: {
    name: { type: 'string' },
    credentials: { type: 'string' },
    customer: { type: 'string' },
    'time-zone': { type: 'string' },
    'posting-time': { type: 'string', multiple: true },
  },
  async run(invocation) {
    const identifier = positional(invocation, 0, 'the network (e.g. webhook)');
    const credentials = str(invocation, 'credentials');
    const postingTimes = invocation.values['posting-time'] as string[] | undefined;
    const created = await clientFor(requireSession(invocation.config)).createIntegration({
      identifier,
      name: str(invocation, 'name'),
      credentials: credentials ? parseJsonObject(credentials, '--credentials') : undefined,
      customer: str(invocation, 'customer'),
      timeZone: str(invocation, 'time-zone'),
      postingTimes,
    });
    invocation.out.result(created, (c) =>
      [
        `Added channel ${c.name} (${c.identifier}), id ${c.id}`,
        ...Object.entries(c.secrets ?? {}).map(([name, value]) => `  ${name}: ${value}   (shown once; keep it)`),
      ].join('\n'),
    );
  },
};

const remove: Command = {
  name: 'channels delete',
  summary: 'remove a channel and its pending posts',
  help: `Usage: herald channels delete <channel-id>

Example:
  herald channels delete ch_123`,
  async run(invocation) {
    const id = positional(invocation, 0, 'the channel id');
    const answer = await clientFor(requireSession(invocation.config)).deleteIntegration(id);
    invocation.out.result(answer, () => `Removed channel ${id}.`);
  },
};

const groupsList: Command = {
  name: 'groups list',
  summary: 'customers (groups of channels)',
  help: `Usage: herald groups list

Example:
  herald groups list --json`,
  async run({ config, out }) {
    const groups = await clientFor(requireSession(config)).groups();
    out.result(groups, (rows) =>
      rows.length === 0
        ? 'No customers yet: herald groups create "Acme"'
        : table(
            ['ID', 'NAME'],
            rows.map((g) => [g.id, g.name]),
            out.style,
          ),
    );
  },
};

const groupsCreate: Command = {
  name: 'groups create',
  summary: 'create a customer',
  help: `Usage: herald groups create <name>

Example:
  herald groups create "Acme Inc"`,
  async run(invocation) {
    const name = positional(invocation, 0, 'the customer name');
    const group = await clientFor(requireSession(invocation.config)).createGroup(name);
    invocation.out.result(group, (g) => `Created customer ${g.name}, id ${g.id}`);
  },
};

export const channelCommands = [list, slot, add, remove, groupsList, groupsCreate];
