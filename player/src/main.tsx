import { createRoot } from 'react-dom/client';

// The player shell; pairing and playback grow here (issue: the web player).
function App() {
  return (
    <main style={{ display: 'grid', placeItems: 'center', height: '100vh', margin: 0, background: '#0b0f14', color: '#e8eef5', fontFamily: 'system-ui, sans-serif' }}>
      <h1 style={{ fontWeight: 500 }}>Marquee</h1>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(<App />);
