// Entry of the classic script build (dist/sdk/marquee-app.js, packed as _marquee/runtime.js):
// connects the document's bridge and exposes it as a read-only window.marquee.
import { connect } from './child';

const app = connect();
if (!Object.hasOwn(window, 'marquee')) {
  Object.defineProperty(window, 'marquee', { value: app, enumerable: true, writable: false, configurable: false });
}
