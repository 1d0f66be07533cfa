import crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH } from '../../sdk/contract/screens';
import { TestServer } from '../testing/harness';
import { startPairingSession } from './pairing';

let server: TestServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.stop();
});

describe('pairing codes', () => {
  it('draws another code, in the same transaction, when a pending session holds the first', async () => {
    server = await TestServer.start();
    const { services } = server;
    // The first two codes drawn are the same; the third differs.
    let draws = 0;
    vi.spyOn(crypto, 'randomInt').mockImplementation((() => (draws++ < 2 * PAIRING_CODE_LENGTH ? 0 : 1)) as never);
    const now = server.clock.now();
    const first = await services.store.transaction((work) => startPairingSession(services, work, now));
    const second = await services.store.transaction((work) => startPairingSession(services, work, now));
    expect(first.session.code).toBe(PAIRING_CODE_ALPHABET[0]!.repeat(PAIRING_CODE_LENGTH));
    expect(second.session.code).toBe(PAIRING_CODE_ALPHABET[1]!.repeat(PAIRING_CODE_LENGTH));
    const pending = await services.store.db
      .selectFrom('pairing_sessions')
      .select('code')
      .where('state', '=', 'pending')
      .orderBy('code')
      .execute();
    expect(pending.map((p) => p.code)).toEqual([first.session.code, second.session.code]);
  });
});
