// Sign in with a password or a passkey. A first login comes from an invitation link (the access
// page makes it); a forgotten password is reset from the access page too.
import { type FormEvent, useState } from 'react';
import { passkeysAvailable } from '../api/dashboard-client';
import { useDashboard, useSession } from '../app/dashboard-context';
import { PageHeading } from '../app/PageHeading';

export function SignInPage() {
  const { session } = useDashboard();
  const busy = useSession((s) => s.busy);
  const notice = useSession((s) => s.notice);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void session.getState().signIn(email, password);
  };
  return (
    <main className="centered sign-in" id="main">
      <div className="card">
        <p className="brand">Marquee</p>
        <PageHeading>Sign in</PageHeading>
        <p className="notice-line" role="status">
          {notice}
        </p>
        <form onSubmit={submit} className="stack">
          <label>
            Email address
            <input
              type="email"
              autoComplete="username webauthn"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
            />
          </label>
          <label>
            Password
            <input
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
        {passkeysAvailable() && (
          <button
            type="button"
            className="secondary wide"
            disabled={busy}
            onClick={() => void session.getState().signInWithPasskey()}
          >
            Sign in with a passkey
          </button>
        )}
        <p className="hint">
          New here? A member or your project's agent sends you an invitation link; opening it makes your login.{' '}
          <a href="/access">Forgot your password?</a>
        </p>
      </div>
    </main>
  );
}
