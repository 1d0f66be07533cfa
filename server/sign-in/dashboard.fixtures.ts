// Tests' dashboard browser: requests to the dashboard origin with a cookie jar of its own, the
// Origin and Fetch Metadata a same-origin page sends, and the CSRF token of its current session or
// signup, as the access page sends them.
import { CSRF_HEADER } from '../../sdk/contract/people';
import { CookieJar, type TestResponse, type TestServer } from '../testing/harness';
import { SESSION_COOKIE, SIGNUP_COOKIE } from './dashboard-cookies';

export interface DashboardRequest {
  json?: unknown;
  headers?: Record<string, string>;
  /** Leave out what a same-origin page sends (Origin, Sec-Fetch-Site, the CSRF token). */
  bare?: boolean;
}

export class DashboardBrowser {
  readonly jar = new CookieJar();
  csrf = '';

  constructor(readonly server: TestServer) {}

  get host(): string {
    return `dashboard.localhost:${this.server.port}`;
  }

  get origin(): string {
    return this.server.config.dashboardOrigin;
  }

  get sessionCookie(): string | undefined {
    return this.jar.get(this.host, SESSION_COOKIE);
  }

  get signupCookie(): string | undefined {
    return this.jar.get(this.host, SIGNUP_COOKIE);
  }

  async request(method: string, path: string, options: DashboardRequest = {}): Promise<TestResponse> {
    const headers: Record<string, string> = options.bare
      ? {}
      : {
          origin: this.origin,
          'sec-fetch-site': 'same-origin',
          ...(this.csrf ? { [CSRF_HEADER.toLowerCase()]: this.csrf } : {}),
        };
    const res = await this.server.request(method, path, {
      host: this.host,
      cookies: this.jar,
      json: options.json,
      headers: { ...headers, ...options.headers },
    });
    const csrf =
      res.headers['content-type']?.includes('json') && res.status < 300 && res.text ? res.json().csrf_token : undefined;
    if (typeof csrf === 'string') this.csrf = csrf;
    return res;
  }

  async signIn(email: string, password: string): Promise<TestResponse> {
    const res = await this.request('POST', '/dashboard/v1/sign-in', { json: { email, password } });
    if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
    return res;
  }
}
