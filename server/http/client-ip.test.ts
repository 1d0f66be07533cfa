import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { TestServer, clientId, randomKey } from '../testing/harness';
import { TrustedProxies, isAddressOrRange, markProxySocket } from './trusted-proxies';

function request(peer: string, forwardedFor?: string | string[]) {
  return {
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as never;
}

describe('client IP', () => {
  it('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const none = new TrustedProxies([]);
    expect(none.clientIp(request('192.0.2.7', '198.51.100.1'))).toBe('192.0.2.7');
    expect(none.clientIp(request('::ffff:192.0.2.7'))).toBe('192.0.2.7');
  });

  it('is the right-most X-Forwarded-For hop that is not a trusted proxy', () => {
    const proxies = new TrustedProxies(['10.0.0.0/8', '2001:db8::1']);
    expect(proxies.clientIp(request('10.1.1.1', '198.51.100.1'))).toBe('198.51.100.1');
    // Entries left of the first untrusted hop are the client's own words: never believed.
    expect(proxies.clientIp(request('10.1.1.1', '203.0.113.9, 198.51.100.1'))).toBe('198.51.100.1');
    // A chain of trusted proxies is walked through.
    expect(proxies.clientIp(request('::ffff:10.1.1.1', ['203.0.113.9, 198.51.100.1', '10.2.2.2, 2001:db8::1']))).toBe(
      '198.51.100.1',
    );
    // A peer that is not a trusted proxy is the client, even with the header.
    expect(proxies.clientIp(request('192.0.2.7', '198.51.100.1'))).toBe('192.0.2.7');
    // Without the header, or with garbage in it, the trusted proxy itself is all that is known.
    expect(proxies.clientIp(request('10.1.1.1'))).toBe('10.1.1.1');
    expect(proxies.clientIp(request('10.1.1.1', 'not-an-ip, 198.51.100.1'))).toBe('198.51.100.1');
    expect(proxies.clientIp(request('10.1.1.1', 'random-key-123'))).toBe('10.1.1.1');
    // Only trusted hops: the left-most is the best guess.
    expect(proxies.clientIp(request('10.1.1.1', '10.3.3.3'))).toBe('10.3.3.3');
  });

  it('trusts a connection from the proxy socket whatever the list holds, and walks its X-Forwarded-For the same way', () => {
    // A connection on MARQUEE_PROXY_SOCKET has no address: the mark alone makes it the proxy's.
    const fromSocket = (forwardedFor?: string) => {
      const req = { socket: {}, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } };
      markProxySocket(req.socket);
      return req as never;
    };
    for (const list of [[], ['10.0.0.0/8']]) {
      const proxies = new TrustedProxies(list);
      expect(proxies.socketIsTrusted((fromSocket() as { socket: object }).socket)).toBe(true);
      expect(proxies.clientIp(fromSocket('203.0.113.9, 198.51.100.1'))).toBe('198.51.100.1');
    }
    // With a list, a listed hop behind the socket's proxy is walked through; an unmarked socket is not trusted.
    const listed = new TrustedProxies(['10.0.0.0/8']);
    expect(listed.clientIp(fromSocket('198.51.100.1, 10.2.2.2'))).toBe('198.51.100.1');
    expect(listed.socketIsTrusted({ remoteAddress: '192.0.2.7' })).toBe(false);
    expect(listed.clientIp(request('192.0.2.7', '198.51.100.1'))).toBe('192.0.2.7');
  });

  it('takes MARQUEE_TRUSTED_PROXIES as comma-separated addresses and CIDR ranges', () => {
    expect(loadConfig({}, []).trustedProxies).toEqual([]);
    expect(loadConfig({ MARQUEE_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8,fd00::/8' }, []).trustedProxies).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      'fd00::/8',
    ]);
    expect(() => loadConfig({ MARQUEE_TRUSTED_PROXIES: '10.0.0.0/33' }, [])).toThrow(/MARQUEE_TRUSTED_PROXIES/);
    expect(() => loadConfig({ MARQUEE_TRUSTED_PROXIES: 'proxy.example' }, [])).toThrow(/MARQUEE_TRUSTED_PROXIES/);
    expect(['1.2.3.4', '::1', '10.0.0.0/8', 'fd00::/128'].every(isAddressOrRange)).toBe(true);
    expect(['1.2.3', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x'].some(isAddressOrRange)).toBe(false);
  });
});

describe('per-IP budgets behind a proxy', () => {
  const enroll = (server: TestServer, forwardedFor: string) =>
    server.request('POST', '/api/v1/enrollments', {
      json: { client_id: clientId(), email: `owner-${randomKey()}@example.com` },
      idempotencyKey: randomKey(),
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('gives each forwarded client its own budget when the proxy is trusted', async () => {
    const server = await TestServer.start({
      config: { enrollmentsPerIpPerHour: 1, trustedProxies: ['127.0.0.1', '::1'] },
    });
    try {
      expect((await enroll(server, '198.51.100.1')).status).toBe(201);
      expect((await enroll(server, '198.51.100.2')).status).toBe(201);
      const again = await enroll(server, '198.51.100.1');
      expect(again.status).toBe(429);
      expect(again.headers['ratelimit-policy']).toContain('enrollment-ip');
      // A spoofed left-hand entry does not buy a new budget.
      expect((await enroll(server, '203.0.113.50, 198.51.100.2')).status).toBe(429);
    } finally {
      await server.stop();
    }
  });

  it('ignores X-Forwarded-For when no proxy is trusted: the socket peer is the client', async () => {
    const server = await TestServer.start({ config: { enrollmentsPerIpPerHour: 1 } });
    try {
      expect((await enroll(server, '198.51.100.1')).status).toBe(201);
      expect((await enroll(server, '198.51.100.2')).status).toBe(429);
    } finally {
      await server.stop();
    }
  });
});
