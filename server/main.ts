// `npm start`: serve every plane with the configuration of the environment and arguments.
import { serve, startFailure } from './serve';

serve(process.env, process.argv.slice(2)).catch((error: unknown) => {
  // A start that fails (a port or socket in use, a store that cannot open) says why and exits.
  console.error(startFailure(error));
  process.exit(1);
});
