// Boots the dashboard: links that carry a token go to the access page; everything else is the app.
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import './app/dashboard.css';
import { createDashboard, DashboardContext } from './app/dashboard-context';
import { accessPageFor } from './app/access-links';

const handoff = accessPageFor(location);
if (handoff) location.replace(handoff);
else {
  const dashboard = createDashboard(location.origin);
  createRoot(document.getElementById('root')!).render(
    <DashboardContext value={dashboard}>
      <App />
    </DashboardContext>,
  );
}
