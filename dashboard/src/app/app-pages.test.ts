// The client's pages and the server's list of shell paths are the same list; token links go to the
// access page.
import { describe, expect, it } from 'vitest';
import { DASHBOARD_PAGES } from '../../../server/dashboard/dashboard-app.routes';
import { accessPageFor } from './access-links';
import { PAGES } from './routes';

describe('the app’s pages', () => {
  it('are exactly the paths the server answers with the shell', () => {
    expect(Object.values(PAGES).sort()).toEqual([...DASHBOARD_PAGES].sort());
  });

  it('hand invitation, dashboard and reset links to the access page, fragment and all', () => {
    expect(accessPageFor({ pathname: '/', hash: '#invite=abc' })).toBe('/access#invite=abc');
    expect(accessPageFor({ pathname: '/', hash: '#reset=xyz' })).toBe('/access#reset=xyz');
    expect(accessPageFor({ pathname: '/', hash: '#link=tok' })).toBe('/access#link=tok');
    expect(accessPageFor({ pathname: '/screens', hash: '' })).toBeUndefined();
  });
});
