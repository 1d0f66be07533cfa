// KV counter: counts how often this page came on glass, in the application's key/value storage,
// shows the count large, and asks the player for the next page after a few seconds.
// `window.marquee` comes from ./_marquee/runtime.js, which `--runtime` packing adds.
(() => {
  const KEY = 'counter';
  const ADVANCE_AFTER_MS = 4000;
  const main = document.getElementById('counter');
  const countText = document.getElementById('count');
  const statusText = document.getElementById('status');
  const marquee = window.marquee;
  let advanceTimer = null;

  function show(state, status, count) {
    main.setAttribute('data-state', state);
    statusText.textContent = status;
    if (count !== undefined) countText.textContent = String(count);
  }

  // Read, add one, write back with the revision we read; on a conflict (another screen wrote in
  // between) read again and retry.
  async function increment() {
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await marquee.kv.get(KEY);
      const next = (entry ? Number(marquee.kv.text(entry)) || 0 : 0) + 1;
      try {
        await marquee.kv.set(KEY, String(next), entry ? { expectedRevision: entry.revision } : {});
        return next;
      } catch (error) {
        if (error.code !== 'revision_conflict') throw error;
      }
    }
    throw new Error('the counter kept changing; giving up for this activation');
  }

  async function onActivation(context) {
    clearTimeout(advanceTimer);
    try {
      if (context.capabilities['kv.write']) {
        const count = await increment();
        show('counted', `Activation ${context.generation} of placement ${context.placementId}`, count);
        marquee.event.emit('counter.incremented');
        marquee.log.info(`counter is now ${count}`, 'counter');
      } else {
        // A screen that may only read (a public screen, not paired): show the count as it stands.
        const entry = await marquee.kv.get(KEY);
        show(
          'read-only',
          'This screen shows the count without adding to it.',
          entry ? Number(marquee.kv.text(entry)) || 0 : 0,
        );
      }
    } catch (error) {
      show('error', `Could not update the counter: ${error.code || error.message}`);
      marquee.log.error(String(error.message), 'counter.failed');
    }
    if (context.capabilities['page.advance']) {
      advanceTimer = setTimeout(() => {
        marquee.page.advance().then(
          () => {
            main.setAttribute('data-advanced', String(context.generation));
          },
          (error) => {
            marquee.log.warn(`advance refused: ${error.code}`, 'counter.advance');
          },
        );
      }, ADVANCE_AFTER_MS);
    }
  }

  if (!marquee) {
    show('error', 'The Marquee runtime is missing: pack this app with --runtime.');
    return;
  }
  // Each activation (the page comes round again, or the frame reloads) counts once.
  let handled = null;
  function activate(context) {
    if (context.generation === handled) return;
    handled = context.generation;
    onActivation(context);
  }
  marquee.ready().then(
    (context) => {
      activate(context);
      marquee.onContext(activate);
    },
    (error) => {
      show(
        'inert',
        error.code === 'inert' ? 'Open this app in a Marquee player to count.' : `Bridge error: ${error.code}`,
      );
    },
  );
})();
