// `npm start`: serve every plane with the configuration of the environment and arguments.
import { serve } from './serve';

void serve(process.env, process.argv.slice(2));
