import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signNativeProof } from '../../sdk/client/native-proof';
import { useEnrolledServer } from '../runtime/runtime.fixtures';
import { CookieJar, randomKey } from '../testing/harness';
import { NativeDevice, readStream } from './native.fixtures';
import { NATIVE_CHALLENGE_TTL_MS, NATIVE_CODE_TTL_MS } from './native-pairing';
import { NATIVE_COLLECTION_WINDOW_MS } from './native.auth';
import { PROOF_CLOCK_SKEW_MS } from './native-proof';
import { claimCode, startPairing } from './pairing.fixtures';

const env = useEnrolledServer();
const { clock } = env;

/** A new device, a minute later than the last (pairing budgets are per minute). */
async function device(host?: Parameters<typeof NativeDevice.create>[1]): Promise<NativeDevice> {
  clock.advance(61_000);
  return NativeDevice.create(env.server, host);
}

/** Replaces one character of a compact JWS segment (0 header, 1 payload, 2 signature). */
function tamper(jws: string, segment: number): string {
  const parts = jws.split('.');
  const s = parts[segment]!;
  parts[segment] = (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
  return parts.join('.');
}

describe('native pairing start', () => {
  it('answers a code and a Marquee-Pairing credential for 72 hours, never a cookie', async () => {
    const d = await device();
    const res = await d.startRequest();
    expect(res.status, res.text).toBe(201);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body.code).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/);
    expect(body.pairing_credential).toMatch(/^mqp_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(body.expires_at)).toBe(clock.now() + NATIVE_CODE_TTL_MS);
  });

  it('refuses cookies, an Authorization header, query parameters and cross-site pages', async () => {
    const d = await device();
    const cookie = await d.startRequest({ headers: { cookie: '__Host-marquee-runtime=x' } });
    expect([cookie.status, cookie.json().code]).toEqual([400, 'invalid_request']);
    const bearer = await d.startRequest({ headers: { authorization: 'Bearer abc' } });
    expect([bearer.status, bearer.json().code]).toEqual([400, 'invalid_request']);
    const query = await d.startRequest({ path: '/runtime/v1/native/pairing-sessions?credential=x' });
    expect([query.status, query.json().code]).toEqual([400, 'invalid_request']);
    const page = await d.startRequest({ headers: { origin: 'https://evil.example' } });
    expect([page.status, page.json().code]).toEqual([403, 'forbidden']);
  });

  it('refuses a key that is not Ed25519 and a kid that is not its thumbprint', async () => {
    const d = await device();
    const wrongCurve = await d.startRequest({ body: { public_key: { ...d.publicKey, crv: 'X25519' } } });
    expect([wrongCurve.status, wrongCurve.json().code]).toEqual([400, 'invalid_request']);
    const otherKid = await d.startRequest({ body: { public_key: { ...d.publicKey, kid: 'A'.repeat(43) } } });
    expect([otherKid.status, otherKid.json().code]).toEqual([400, 'identity_invalid']);
  });

  it('refuses a key already bound to a screen with enrollment_bound', async () => {
    const d = await device();
    await d.pair(env.token);
    clock.advance(61_000);
    const again = await d.startRequest();
    expect([again.status, again.json().code]).toEqual([409, 'enrollment_bound']);
  });

  it('replays an exact retry with the same Idempotency-Key without a second session', async () => {
    const d = await device();
    const key = randomKey();
    const first = await env.server.request('POST', '/runtime/v1/native/pairing-sessions', {
      json: { public_key: d.publicKey },
      idempotencyKey: key,
    });
    const second = await env.server.request('POST', '/runtime/v1/native/pairing-sessions', {
      json: { public_key: d.publicKey },
      idempotencyKey: key,
    });
    expect(second.json()).toEqual(first.json());
  });
});

describe('native pairing stream and completion', () => {
  it('pairs end to end: claim, pairing.claimed on the stream, signed completion, an active identity-bound screen', async () => {
    const d = await device();
    const { code } = await d.start();
    const claim = await claimCode(env.server, env.token, code, { label: 'Kiosk' });
    expect(claim.status, claim.text).toBe(201);
    const stream = await d.events();
    expect(stream.frames.map((f) => f.event)).toEqual(['pairing.claimed']);
    const nonce = stream.frames[0]!.data.completion_nonce;
    const done = await d.completeRequest(nonce);
    expect(done.status, done.text).toBe(200);
    expect(done.headers['set-cookie']).toBeUndefined();
    expect(done.json().screen).toMatchObject({ id: claim.json().screen.id, state: 'active', label: 'Kiosk' });
    const row = await env.server.services.store.db
      .selectFrom('screens')
      .select('native_identity')
      .where('id', '=', claim.json().screen.id)
      .executeTakeFirstOrThrow();
    expect(row.native_identity).toBe(1);
    // A retry whose answer was lost gets the same completion.
    const retry = await d.completeRequest(nonce);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.json().screen.id).toBe(claim.json().screen.id);
  });

  it('the stream needs the Marquee-Pairing credential and refuses cookies beside it', async () => {
    const d = await device();
    await d.start();
    const none = await readStream(env.server, '/runtime/v1/native/pairing-events', {});
    expect(none.status).toBe(401);
    const forged = await readStream(env.server, '/runtime/v1/native/pairing-events', {
      authorization: `Marquee-Pairing mqp_${'A'.repeat(43)}`,
    });
    expect(forged.status).toBe(401);
    const both = await readStream(env.server, '/runtime/v1/native/pairing-events', {
      ...d.pairingHeaders(),
      cookie: '__Host-marquee-pairing=x',
    });
    expect(both.status).toBe(400);
    // A browser pairing cookie never opens the native stream: without the native credential the
    // caller is unauthenticated, whatever cookie it holds (D-470).
    const jar = new CookieJar();
    await startPairing(env.server, jar);
    const cookieOnly = await env.server.request('GET', '/runtime/v1/native/pairing-events', { cookies: jar });
    expect(cookieOnly.status).toBe(401);
  });

  it('an unclaimed native code lapses after 72 hours; a claim opens a fresh 72-hour collection window', async () => {
    const lapsing = await device();
    const { code } = await lapsing.start();
    clock.advance(NATIVE_CODE_TTL_MS + 1000);
    expect((await claimCode(env.server, env.token, code)).status).toBe(404);
    expect((await readStream(env.server, '/runtime/v1/native/pairing-events', lapsing.pairingHeaders())).status).toBe(
      401,
    );

    const late = await device();
    const started = await late.start();
    clock.advance(NATIVE_CODE_TTL_MS - 60_000); // claimed in the last minute of the code
    expect((await claimCode(env.server, env.token, started.code)).status).toBe(201);
    clock.advance(NATIVE_COLLECTION_WINDOW_MS - 120_000); // well past the code's own 72 h
    expect((await late.events()).frames[0]?.event).toBe('pairing.claimed');
    clock.advance(120_000);
    expect((await readStream(env.server, '/runtime/v1/native/pairing-events', late.pairingHeaders())).status).toBe(401);
  });

  it('refuses a completion before the claim', async () => {
    const d = await device();
    await d.start();
    const early = await d.completeRequest('A'.repeat(43));
    expect([early.status, early.json().code]).toEqual([409, 'resource_conflict']);
  });

  describe('refuses a completion proof that is', () => {
    async function claimed(): Promise<{ d: NativeDevice; nonce: string }> {
      const d = await device();
      const { code } = await d.start();
      expect((await claimCode(env.server, env.token, code)).status).toBe(201);
      const stream = await d.events();
      return { d, nonce: stream.frames[0]!.data.completion_nonce };
    }

    it('tampered (payload or signature changed)', async () => {
      const { d, nonce } = await claimed();
      const good = await d.sign('pairing.complete', nonce);
      for (const segment of [1, 2]) {
        const res = await d.completeRequest(nonce, tamper(good, segment));
        expect([res.status, res.json().code]).toEqual([401, 'proof_invalid']);
      }
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', kid: d.kid })).toString('base64url')}.${good.split('.')[1]}.${'A'.repeat(86)}`;
      const none = await d.completeRequest(nonce, unsigned);
      expect([none.status, none.json().code]).toEqual([401, 'proof_invalid']);
    });

    it('signed by another key, whatever key it names', async () => {
      const { d, nonce } = await claimed();
      const other = await NativeDevice.create(env.server);
      const byOther = await signNativeProof(other.privateKey, {
        kid: d.kid,
        op: 'pairing.complete',
        nonce,
        nowMs: clock.now(),
      });
      const res = await d.completeRequest(nonce, byOther);
      expect([res.status, res.json().code]).toEqual([401, 'proof_invalid']);
      // The other key's own proof with its own public key: not the key that started this pairing.
      const swapped = await d.completeRequest(nonce, await other.sign('pairing.complete', nonce), other.publicKey);
      expect([swapped.status, swapped.json().code]).toEqual([401, 'proof_invalid']);
    });

    it('for another operation, another nonce, or too old', async () => {
      const { d, nonce } = await claimed();
      const wrongOp = await d.completeRequest(nonce, await d.sign('session.mint', nonce));
      expect(wrongOp.json().code).toBe('proof_invalid');
      const wrongNonce = await d.completeRequest(nonce, await d.sign('pairing.complete', 'B'.repeat(43)));
      expect(wrongNonce.json().code).toBe('proof_invalid');
      const stale = await d.completeRequest(
        nonce,
        await d.sign('pairing.complete', nonce, clock.now() - PROOF_CLOCK_SKEW_MS - 1000),
      );
      expect([stale.status, stale.json().code]).toEqual([401, 'proof_invalid']);
      // None of these consumed anything: the right proof still completes.
      expect((await d.completeRequest(nonce)).status).toBe(200);
    });
  });
});

describe('native identity sessions', () => {
  it('mints a 24-hour Marquee-Session from a challenge proof, with no cookie', async () => {
    const d = await device();
    await d.pair(env.token);
    const nonce = await d.challenge();
    const res = await d.proofRequest('sessions', await d.sign('session.mint', nonce));
    expect(res.status, res.text).toBe(201);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toMatchObject({
      paired: true,
      runtime_credential: expect.stringMatching(/^mqs_[A-Za-z0-9_-]+$/),
    });
    expect(res.json().capabilities).toContain('runtime.report');
  });

  it('refuses a replayed proof: each challenge is spent once', async () => {
    const d = await device();
    await d.pair(env.token);
    const proof = await d.sign('session.mint', await d.challenge());
    expect((await d.proofRequest('sessions', proof)).status).toBe(201);
    const replay = await d.proofRequest('sessions', proof);
    expect([replay.status, replay.json().code]).toEqual([401, 'proof_invalid']);
  });

  it('refuses a proof of an expired challenge, of a never-issued nonce, or for another operation', async () => {
    const d = await device();
    await d.pair(env.token);
    const nonce = await d.challenge();
    clock.advance(NATIVE_CHALLENGE_TTL_MS + 1000);
    const expired = await d.proofRequest('sessions', await d.sign('session.mint', nonce));
    expect([expired.status, expired.json().code]).toEqual([401, 'proof_invalid']);
    const invented = await d.proofRequest(
      'sessions',
      await d.sign('session.mint', crypto.randomBytes(32).toString('base64url')),
    );
    expect(invented.json().code).toBe('proof_invalid');
    const resetChallenge = await d.challenge('identity.reset');
    const otherOp = await d.proofRequest('sessions', await d.sign('session.mint', resetChallenge));
    expect(otherOp.json().code).toBe('proof_invalid');
  });

  it("refuses a proof by another key (a wrong key cannot mint the bound key's session)", async () => {
    const d = await device();
    await d.pair(env.token);
    const nonce = await d.challenge();
    const thief = await NativeDevice.create(env.server);
    const forged = await signNativeProof(thief.privateKey, {
      kid: d.kid,
      op: 'session.mint',
      nonce,
      nowMs: clock.now(),
    });
    const res = await d.proofRequest('sessions', forged);
    expect([res.status, res.json().code]).toEqual([401, 'proof_invalid']);
    // Naming the thief's public key under the bound kid is not even a valid identity.
    const swapped = await d.proofRequest('sessions', forged, thief.publicKey);
    expect([swapped.status, swapped.json().code]).toEqual([400, 'identity_invalid']);
  });

  it('an unknown key gets no challenge', async () => {
    const d = await device();
    const res = await env.server.request('POST', '/runtime/v1/native/identity/challenges', { json: { kid: d.kid } });
    expect(res.status).toBe(404);
  });
});

describe('identity-bound screens', () => {
  it('delete gives screen_archive_required; archive keeps the key bound and still mints a session', async () => {
    const d = await device();
    const screen = await d.pair(env.token);
    const refused = await env.server.request('DELETE', `/api/v1/screens/${screen.id}`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect([refused.status, refused.json().code]).toEqual([409, 'screen_archive_required']);
    const archived = await env.server.request('POST', `/api/v1/screens/${screen.id}/archive`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(archived.status, archived.text).toBe(200);
    await d.mintSession();
    const manifest = await d.runtime('GET', '/runtime/v1/manifest');
    expect([manifest.status, manifest.json().darkened]).toEqual([200, true]);
    const unarchived = await env.server.request('POST', `/api/v1/screens/${screen.id}/unarchive`, {
      token: env.token,
      idempotencyKey: randomKey(),
    });
    expect(unarchived.status, unarchived.text).toBe(200);
    expect((await d.runtime('GET', '/runtime/v1/manifest')).status).toBe(200);
    expect(
      (
        await env.server.request('DELETE', `/api/v1/screens/${screen.id}`, {
          token: env.token,
          idempotencyKey: randomKey(),
        })
      ).status,
    ).toBe(409);
  });

  it('a signed reset unbinds the key and tombstones its screen; its sessions end', async () => {
    const d = await device();
    const screen = await d.pair(env.token);
    const unsigned = await d.proofRequest('reset', await d.sign('identity.reset', 'C'.repeat(43)));
    expect(unsigned.json().code).toBe('proof_invalid');
    expect((await env.server.request('GET', `/api/v1/screens/${screen.id}`, { token: env.token })).status).toBe(200);

    const reset = await d.proofRequest('reset', await d.sign('identity.reset', await d.challenge('identity.reset')));
    expect(reset.status, reset.text).toBe(204);
    expect((await env.server.request('GET', `/api/v1/screens/${screen.id}`, { token: env.token })).status).toBe(404);
    expect((await d.runtime('GET', '/runtime/v1/manifest')).status).toBe(401);
    // The key may pair again as a new device.
    clock.advance(61_000);
    expect((await d.startRequest()).status).toBe(201);
  });
});
