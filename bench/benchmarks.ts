// The benchmark registry: one entry per file under bench/.
import { archiveUpload } from './archive.bench';
import { controlPlaneThroughput } from './control-plane.bench';

export const benchmarks: Record<string, () => Promise<void>> = {
  'control-plane': controlPlaneThroughput,
  archive: archiveUpload,
};
