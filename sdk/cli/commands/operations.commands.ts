// Durable operations (uploads, publication): read one, wait for it to end, cancel it.
import type { Operation } from '../../contract/operations';
import { command } from '../command';
import { fields } from '../output';

/** How long `operation wait` waits, unless --timeout says otherwise. */
const DEFAULT_WAIT_SECONDS = 120;

function operationFields(op: Operation) {
  return fields(
    ['id', op.id],
    ['kind', op.kind],
    ['state', op.state],
    ['result', op.result ? JSON.stringify(op.result) : undefined],
    ['error', op.error ? `${op.error.code}: ${op.error.detail}` : undefined],
    ['created', op.created_at],
    ['updated', op.updated_at],
  );
}

export const operationCommands = [
  command({
    name: 'operation show',
    summary: 'show an operation',
    arguments: ['<operation-id>'],
    async run(ctx) {
      return (await (await ctx.client()).operations.get(ctx.args[0] as string)).data;
    },
    human: (op) => [operationFields(op)],
    ids: (op) => [op.id],
  }),
  command({
    name: 'operation wait',
    summary: 'wait until an operation ends (exit 13 when it failed or was cancelled)',
    arguments: ['<operation-id>'],
    options: [
      {
        flags: '--timeout <seconds>',
        description: `wait at most this long (default ${DEFAULT_WAIT_SECONDS})`,
        parse: 'positive-number',
      },
    ],
    async run(ctx) {
      const client = await ctx.client();
      const timeoutMs = ((ctx.options.timeout as number | undefined) ?? DEFAULT_WAIT_SECONDS) * 1000;
      return client.operations.waitForSuccess(ctx.args[0] as string, { timeoutMs, signal: ctx.signal });
    },
    human: (op) => [operationFields(op)],
    ids: (op) => [op.id],
  }),
  command({
    name: 'operation cancel',
    summary: 'cancel an operation that has not ended',
    arguments: ['<operation-id>'],
    idempotencyKeyOption: true,
    async run(ctx) {
      return (await (await ctx.client()).operations.cancel(ctx.args[0] as string, ctx.call())).data;
    },
    human: (op) => [operationFields(op)],
    ids: (op) => [op.id],
  }),
];
