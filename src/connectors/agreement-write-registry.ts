/**
 * Connector name -> agreement-line writer (interface document rules 8 and 14; design section 12). The
 * RMM and distributor connectors have none. The limited connector (HaloPSA) previews anywhere but the
 * service commits its lines only on the fixture host; that decision is the caller's (see
 * `COMMITS_ON_FIXTURE_HOST_ONLY`), the writer itself sends what it is asked to.
 */
import type { ConnectorName } from '../../entities/tenancy';
import { ServiceError } from '../errors/service-error';
import type { AgreementLineWriter } from './agreement-write-types';
import { autotaskAgreementWriter } from './autotask/agreement-writer';
import { connectwiseAgreementWriter } from './connectwise/agreement-writer';
import { haloPsaAgreementWriter } from './halopsa/agreement-writer';

export const AGREEMENT_LINE_WRITERS: Partial<Record<ConnectorName, AgreementLineWriter>> = {
  connectwise: connectwiseAgreementWriter,
  autotask: autotaskAgreementWriter,
  halopsa: haloPsaAgreementWriter,
};

/** Connectors whose agreement-line commits run on the fixture host only (elsewhere: 501 `not_supported`). */
export const COMMITS_ON_FIXTURE_HOST_ONLY: readonly ConnectorName[] = ['halopsa'];

/** The agreement-line writer of a connector; 501 `not_supported` for one that has none. */
export function agreementLineWriter(name: ConnectorName): AgreementLineWriter {
  const w = AGREEMENT_LINE_WRITERS[name];
  if (!w) throw ServiceError.notSupported(`The ${name} connector does not write agreement lines.`);
  return w;
}
