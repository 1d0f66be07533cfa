import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PendingRequests, type Timers } from './child-requests';
import { BridgeError } from './protocol';

const NONCE = 'n'.repeat(32);
const ACTIVATION = { generation: 1, nonce: NONCE };
const timers: Timers = {
  setTimeout: ((fn: () => void, ms: number) => setTimeout(fn, ms)) as unknown as Timers['setTimeout'],
  clearTimeout: ((id: number) => clearTimeout(id)) as Timers['clearTimeout'],
};

const ack = (id: string, result: unknown, activation = ACTIVATION) => ({
  kind: 'response.ack' as const,
  value: { ...activation, request_message_id: id, result },
});

describe('request/response correlation', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('resolves a request with the ack to its message id, and clears its timer', async () => {
    const pending = new PendingRequests(timers, 1000);
    const answer = pending.wait('msg_00000001', 'kv.get', ACTIVATION);
    expect(pending.answer(ack('msg_00000001', { key: 'k' }))).toBeNull();
    await expect(answer).resolves.toEqual({ key: 'k' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with the parent's problem, code, status, request id and current revision", async () => {
    const pending = new PendingRequests(timers, 1000);
    const answer = pending.wait('msg_00000001', 'kv.set', ACTIVATION);
    const problem = {
      code: 'revision_conflict',
      status: 412,
      detail: 'moved on',
      request_id: 'req_1',
      current_revision: 3,
    };
    pending.answer({ kind: 'response.problem', value: { ...ACTIVATION, request_message_id: 'msg_00000001', problem } });
    const error = (await answer.catch((e: unknown) => e)) as BridgeError;
    expect(error).toBeInstanceOf(BridgeError);
    expect([error.code, error.status, error.requestId, error.currentRevision]).toEqual([
      'revision_conflict',
      412,
      'req_1',
      3,
    ]);
  });

  it('ignores an answer to nothing pending, or from another activation', async () => {
    const pending = new PendingRequests(timers, 1000);
    const answer = pending.wait('msg_00000001', 'kv.get', ACTIVATION);
    expect(pending.answer(ack('msg_99999999', null))?.code).toBe('invalid_response');
    expect(pending.answer(ack('msg_00000001', null, { generation: 2, nonce: NONCE }))?.code).toBe('invalid_generation');
    expect(pending.answer(ack('msg_00000001', null, { generation: 1, nonce: 'o'.repeat(32) }))?.code).toBe(
      'invalid_generation',
    );
    expect(pending.answer(ack('msg_00000001', 'right'))).toBeNull();
    await expect(answer).resolves.toBe('right');
  });

  it('times out with ack_timeout, after which a late answer counts as none', async () => {
    const pending = new PendingRequests(timers, 1000);
    const answer = pending.wait('msg_00000001', 'page.advance', ACTIVATION).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    expect(((await answer) as BridgeError).code).toBe('ack_timeout');
    expect(pending.answer(ack('msg_00000001', null))?.code).toBe('invalid_response');
  });

  it('rejects everything still waiting at once', async () => {
    const pending = new PendingRequests(timers, 1000);
    const answers = ['msg_00000001', 'msg_00000002'].map((id) =>
      pending.wait(id, 'kv.get', ACTIVATION).catch((e: BridgeError) => e.code),
    );
    pending.rejectAll('destroyed', 'gone');
    expect(await Promise.all(answers)).toEqual(['destroyed', 'destroyed']);
    expect(vi.getTimerCount()).toBe(0);
  });
});
