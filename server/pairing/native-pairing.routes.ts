// The native players' routes on the runtime plane (`/runtime/v1/native/*`): pairing start, its
// event stream and completion, identity challenges, sessions and reset. No route reads or sets a
// cookie; budgets are the reference contract's.
import {
  NativeIdentityChallengeRequest,
  NativeIdentityProof,
  NativePairingComplete,
  NativePairingStart,
  type NativePairingSession,
} from '../../sdk/contract/native';
import { isoTime } from '../clock';
import { clientIp } from '../http/client-ip';
import { mutation, reply, type AnyContext, type RouteHandler } from '../http/route';
import { nativeAnonymous, nativePairing, type NativePairingPrincipal } from './native.auth';
import {
  completeNativePairing,
  issueChallenge,
  mintNativeSession,
  resetNativeIdentity,
  startNativePairing,
} from './native-pairing';
import { pairingEvents } from './pairing.routes';

const NO_STORE = { 'Cache-Control': 'no-store' };

// reference contract x-rate-limit-policies, per client IP and minute
const NATIVE_PAIRING_STARTS_PER_MINUTE = 20;
const NATIVE_PAIRING_COMPLETES_PER_MINUTE = 30;
const NATIVE_CHALLENGES_PER_MINUTE = 60;
const NATIVE_SESSIONS_PER_MINUTE = 60;
const NATIVE_RESETS_PER_MINUTE = 60;

const perIp = (name: string, limit: number) => (ctx: AnyContext) => [
  { name, limit, windowSeconds: 60, key: clientIp(ctx) },
];

/** Idempotency records of these unauthenticated routes are kept apart per client address. */
const byClient = (route: string) => ({
  mode: 'optional' as const,
  anonymousScope: (ctx: AnyContext) => `${route}:${clientIp(ctx)}`,
});

export const startNativePairingSession = mutation(
  {
    auth: nativeAnonymous,
    body: NativePairingStart,
    idempotency: byClient('native-pairing-start'),
    rateLimits: perIp('native-pairing-start-ip', NATIVE_PAIRING_STARTS_PER_MINUTE),
  },
  async (ctx, work) => {
    const { session, credential } = await startNativePairing(
      ctx.services,
      work,
      { publicKey: ctx.body.public_key, host: ctx.body.host },
      ctx.now,
      ctx.requestId,
    );
    const body: NativePairingSession = {
      code: session.code,
      pairing_credential: credential,
      expires_at: isoTime(session.code_expires_at),
    };
    return reply.created(body, { headers: NO_STORE });
  },
);

/** The browser's pairing stream, authorized by `Marquee-Pairing`: one pairing.claimed frame, replayed, then close. */
export const nativePairingEvents: RouteHandler = {
  policy: { auth: nativePairing },
  handler: pairingEvents.handler,
};

export const completeNativePairingSession = mutation<
  NativePairingComplete,
  Record<string, never>,
  NativePairingPrincipal
>(
  {
    auth: nativePairing,
    body: NativePairingComplete,
    rateLimits: perIp('native-pairing-complete-ip', NATIVE_PAIRING_COMPLETES_PER_MINUTE),
  },
  async (ctx, work) => {
    const completion = await completeNativePairing(
      ctx.services,
      work,
      ctx.principal.session.id,
      { completionNonce: ctx.body.completion_nonce, publicKey: ctx.body.public_key, signature: ctx.body.signature },
      ctx.now,
      ctx.requestId,
    );
    return reply.ok(completion, { headers: NO_STORE });
  },
);

export const createNativeIdentityChallenge = mutation(
  {
    auth: nativeAnonymous,
    body: NativeIdentityChallengeRequest,
    rateLimits: perIp('native-identity-challenge-ip', NATIVE_CHALLENGES_PER_MINUTE),
  },
  async (ctx, work) =>
    reply.created(await issueChallenge(work, ctx.body.kid, ctx.body.op ?? 'session.mint', ctx.now), {
      headers: NO_STORE,
    }),
);

const proofOf = (body: NativeIdentityProof) => ({
  kid: body.kid,
  publicKey: body.public_key,
  signature: body.signature,
});

export const createNativeIdentitySession = mutation(
  {
    auth: nativeAnonymous,
    body: NativeIdentityProof,
    idempotency: byClient('native-identity-session'),
    rateLimits: perIp('native-identity-session-ip', NATIVE_SESSIONS_PER_MINUTE),
  },
  async (ctx, work) =>
    reply.created(await mintNativeSession(ctx.services, work, proofOf(ctx.body), ctx.now), { headers: NO_STORE }),
);

export const resetNativeIdentityRoute = mutation(
  {
    auth: nativeAnonymous,
    body: NativeIdentityProof,
    rateLimits: perIp('native-identity-reset-ip', NATIVE_RESETS_PER_MINUTE),
  },
  async (ctx, work) => {
    await resetNativeIdentity(ctx.services, work, proofOf(ctx.body), ctx.now, ctx.requestId);
    return reply.noContent({ headers: NO_STORE });
  },
);
