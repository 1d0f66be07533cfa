// The app's pages. The server serves the shell for exactly these paths (DASHBOARD_PAGES in
// server/dashboard/dashboard-app.routes.ts; a test holds the two lists equal).
export const PAGES = {
  home: '/',
  signIn: '/sign-in',
  screens: '/screens',
  screen: '/screens/:id',
  playlists: '/playlists',
  playlist: '/playlists/:id',
  media: '/media',
  events: '/events',
  members: '/members',
  billing: '/billing',
  applications: '/applications',
  application: '/applications/:id',
  proofOfPlay: '/proof-of-play',
} as const;

export const screenPath = (id: string) => `/screens/${encodeURIComponent(id)}`;
export const playlistPath = (id: string) => `/playlists/${encodeURIComponent(id)}`;
export const applicationPath = (id: string) => `/applications/${encodeURIComponent(id)}`;
