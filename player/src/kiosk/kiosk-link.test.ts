import { describe, expect, it } from 'vitest';
import { kioskChannelUrl, startKioskLink, type KioskLinkHost } from './kiosk-link';

function doc(content?: string): Document {
  return {
    querySelector: () => (content === undefined ? null : { content }),
  } as unknown as Document;
}
const at = (href: string) => new URL(href) as unknown as Location;

describe('the kiosk link', () => {
  it("is the agent's channel on the page's own origin, and nothing outside a kiosk", () => {
    expect(kioskChannelUrl(doc('/kiosk/v1/channel'), at('http://127.0.0.1:8090/'))).toBe(
      'ws://127.0.0.1:8090/kiosk/v1/channel',
    );
    expect(kioskChannelUrl(doc(undefined), at('http://127.0.0.1:8090/'))).toBeUndefined();
    expect(kioskChannelUrl(doc('//evil.example/x'), at('http://127.0.0.1:8090/'))).toBeUndefined();
    expect(kioskChannelUrl(doc('wss://evil.example/x'), at('http://127.0.0.1:8090/'))).toBeUndefined();
  });

  it('sends the frames drawn every second and reloads when the agent says so', () => {
    const sent: string[] = [];
    let reloads = 0;
    const frames: (() => void)[] = [];
    const intervals: (() => void)[] = [];
    let socket: any;
    class FakeSocket {
      readyState = 0;
      onopen?: () => void;
      onmessage?: (e: { data: string }) => void;
      onclose?: () => void;
      constructor(readonly url: string) {
        socket = this;
      }
      send(text: string) {
        sent.push(text);
      }
    }
    const host: KioskLinkHost = {
      document: doc('/kiosk/v1/channel'),
      location: at('http://127.0.0.1:8090/'),
      WebSocket: FakeSocket as unknown as typeof WebSocket,
      requestAnimationFrame: (cb) => frames.push(cb),
      setInterval: (fn) => intervals.push(fn),
      setTimeout: () => 0,
      reload: () => reloads++,
      livePage: () => 'welcome',
    };
    expect(startKioskLink(host)).toBe(true);
    expect(socket.url).toBe('ws://127.0.0.1:8090/kiosk/v1/channel');
    socket.readyState = 1;
    socket.onopen();
    for (let i = 0; i < 3; i++) frames.shift()!(); // three frames drawn
    intervals[0]!();
    expect(sent.map((t) => JSON.parse(t))).toEqual([{ type: 'heartbeat', frames: 3, page: 'welcome' }]);
    intervals[0]!(); // no frame since: the count stands still
    expect(JSON.parse(sent[1]!).frames).toBe(3);
    socket.onmessage({ data: JSON.stringify({ type: 'reload', reason: 'hang' }) });
    socket.onmessage({ data: 'not json' });
    expect(reloads).toBe(1);
  });
});
