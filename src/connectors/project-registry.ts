/**
 * Connector name -> its project writer (notes and items on existing projects), beside registry.ts so
 * that the project writes stay in files of their own. 501 `not_supported` for a connector without one.
 */
import { ServiceError } from '../errors/service-error';
import type { ProjectWriter } from './project-write-types';
import { autotaskProjectWriter } from './autotask/project-writer';
import { connectwiseProjectWriter } from './connectwise/project-writer';
import { haloPsaProjectWriter } from './halopsa/project-writer';

const PROJECT_WRITERS: Record<string, ProjectWriter> = {
  connectwise: connectwiseProjectWriter,
  autotask: autotaskProjectWriter,
  halopsa: haloPsaProjectWriter,
};

export function projectWriter(connector: string): ProjectWriter {
  const w = Object.hasOwn(PROJECT_WRITERS, connector) ? PROJECT_WRITERS[connector] : null;
  if (!w) throw ServiceError.notSupported(`The ${connector} connector does not write to projects.`);
  return w;
}
