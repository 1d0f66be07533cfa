// The frame around every signed-in page: a skip link, the header (project switcher, who, sign
// out), the navigation, and a polite status region pages announce results in.
import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { useDashboard, useEvents, useSession } from './dashboard-context';
import { PAGES } from './routes';

const NAV: { href: string; label: string }[] = [
  { href: PAGES.screens, label: 'Screens' },
  { href: PAGES.playlists, label: 'Playlists' },
  { href: PAGES.media, label: 'Media' },
  { href: PAGES.applications, label: 'Applications' },
  { href: PAGES.proofOfPlay, label: 'Proof of play' },
  { href: PAGES.events, label: 'Events' },
  { href: PAGES.members, label: 'Members' },
  { href: PAGES.billing, label: 'Billing' },
];

export function Shell({ children }: { children: ReactNode }) {
  const [location] = useLocation();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand" aria-hidden="true">
          Marquee
        </span>
        <ProjectSwitcher />
        <Who />
      </header>
      <nav className="nav" aria-label="Sections">
        <ul>
          {NAV.map((item) => {
            const current = location === item.href || location.startsWith(`${item.href}/`);
            return (
              <li key={item.href}>
                <Link href={item.href} aria-current={current ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            );
          })}
        </ul>
        <LiveMark />
      </nav>
      <main id="main" className="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function ProjectSwitcher() {
  const { session } = useDashboard();
  const projects = useSession((s) => s.projects);
  const selected = useSession((s) => s.session?.project?.id ?? '');
  if (projects.length === 0) return <span className="project-name">No project</span>;
  return (
    <label className="project-switcher">
      <span>Project</span>
      <select value={selected} onChange={(e) => void session.getState().selectProject(e.currentTarget.value)}>
        {projects.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  );
}

function Who() {
  const { session } = useDashboard();
  const name = useSession((s) => s.session?.display_name ?? '');
  return (
    <div className="who">
      {/* The access page holds the person's passkeys and sessions ("sign out everywhere else"). */}
      <a className="who-name" href="/access" title="Your sign-in: passkeys and where you are signed in">
        {name}
      </a>
      <button type="button" className="quiet" onClick={() => void session.getState().signOut()}>
        Sign out
      </button>
    </div>
  );
}

function LiveMark() {
  const live = useEvents((s) => s.live);
  return (
    <p className={`live-mark ${live ? 'on' : 'off'}`} data-testid="live-mark">
      <span aria-hidden="true" className="dot" />
      {live ? 'Live' : 'Reconnecting…'}
    </p>
  );
}
