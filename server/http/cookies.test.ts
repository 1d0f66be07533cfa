import { describe, expect, it } from 'vitest';
import { cookieValue, readCookie } from './cookies';

describe('cookie parsing', () => {
  it('finds a cookie by exact name among others, trimming spaces', () => {
    expect(cookieValue('a=1; __Host-marquee-runtime=v.s ;b=2', '__Host-marquee-runtime')).toBe('v.s');
    expect(cookieValue('x-a=1; a=2', 'a')).toBe('2');
    expect(readCookie({ headers: { cookie: 'a=1' } }, 'a')).toBe('1');
  });

  it('treats a missing header, a missing name or a name sent twice as absent', () => {
    expect(cookieValue(undefined, 'a')).toBeUndefined();
    expect(cookieValue('b=1', 'a')).toBeUndefined();
    expect(cookieValue('a=1; a=2', 'a')).toBeUndefined();
    expect(cookieValue('a=1; junk; a=1', 'a')).toBeUndefined();
  });
});
