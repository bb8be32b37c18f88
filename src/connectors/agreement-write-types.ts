/**
 * The contract between the agreement-line write pipeline and each PSA connector (interface document
 * rule 8; docs/architecture.md, Agreements and billing). The pipeline resolves the agreement (it must exist and be active; the
 * service never creates an agreement header), the line (it must belong to that agreement) and the
 * product (from the synced catalogue, `products`) first. The connector then checks the vendor's own
 * rules, shows the exact vendor requests it would send (preview, which sends nothing), sends them
 * (commit), and finds a line it may already have written by our marker (reconcile).
 *
 * Verbs: `add` a line for a product, `rewrite` a line's quantity, price or cost, `end` a line at a
 * date. `replace` is the pipeline's: end the old line and add the new one under one key, each step
 * reconciled by its own marker.
 *
 * Every verb is written so that a retry after an unknown outcome cannot double it: `add` is found by
 * its marker first; `rewrite` and `end` set absolute values (a vendor that only takes deltas, such as
 * Autotask's unit adjustments, has the delta computed at commit from the vendor's current state).
 */
import type { ConnectorName } from '../../entities/tenancy';
import type { FieldProblem, VendorRequestPreview, WriteContext } from './write-types';

/** The catalogue product of a line, as synced (`products`); the pipeline looks it up by source id. */
export interface CatalogueProduct {
  sourceId: string;
  name: string;
  /** The vendor's product code (ConnectWise identifier, Halo item code); null when it has none. */
  sku: string | null;
  unitPrice: number | null;
  unitCost: number | null;
  /** False when the vendor marks it inactive; null when unknown. */
  active: boolean | null;
}

export interface AgreementLineDraft {
  /** Our write marker; the connector keeps it in a free-text field of the line (see each writer). */
  marker: string;
  agreementSourceId: string;
  productSourceId: string;
  /** The product from the synced catalogue; null when the catalogue does not hold it (a vendor rule refuses). */
  product: CatalogueProduct | null;
  quantity: number;
  /** Null: the catalogue's price (and cost). */
  unitPrice: number | null;
  unitCost: number | null;
  /** `YYYY-MM-DD`: the first day the line bills. */
  effectiveDate: string;
  /** Free text for the line (invoice description); null: the product's name. */
  description: string | null;
}

/** The synced state of a line the pipeline read from the store (what a delta is computed against in a preview). */
export interface SyncedLine {
  quantity: number | null;
  unitPrice: number | null;
  unitCost: number | null;
  productSourceId: string | null;
  effectiveStart: string | null;
  effectiveEnd: string | null;
}

export interface AgreementLineChange {
  marker: string;
  agreementSourceId: string;
  lineSourceId: string;
  /** The new absolute values; undefined leaves a value as it is. */
  quantity?: number;
  unitPrice?: number;
  unitCost?: number;
  /** `YYYY-MM-DD`: from when the change applies (Autotask's adjustment date; ConnectWise changes the line as a whole). */
  effectiveDate: string;
  /** The line as last synced; null when the store does not hold it. */
  current: SyncedLine | null;
}

export interface AgreementLineEnd {
  marker: string;
  agreementSourceId: string;
  lineSourceId: string;
  /** `YYYY-MM-DD`: the line's end (ConnectWise `cancelledDate`, Autotask: units go to zero from it). */
  endDate: string;
  current: SyncedLine | null;
  /**
   * The end of a `replace`: the add sent after it. A writer whose vendor could refuse that add checks it
   * before ending the line, so a replace lands whole or not at all.
   */
  replacedBy?: AgreementLineDraft;
}

/** A line as the vendor holds it after a write (or as found by its marker). */
export interface WrittenLine {
  /** The line's id at the vendor: the agreement line's `source_id`. */
  lineRef: string;
  native: Record<string, unknown>;
}

export interface AgreementLineWriter {
  readonly name: ConnectorName;

  /** Vendor rules (required fields, catalogue, dates, numbers). Empty when the request may be sent. */
  checkAdd(d: AgreementLineDraft): FieldProblem[];
  checkRewrite(c: AgreementLineChange): FieldProblem[];
  checkEnd(e: AgreementLineEnd): FieldProblem[];

  /** The exact vendor requests a commit sends, in order; nothing is sent. */
  previewAdd(d: AgreementLineDraft): VendorRequestPreview[];
  previewRewrite(c: AgreementLineChange): VendorRequestPreview[];
  previewEnd(e: AgreementLineEnd): VendorRequestPreview[];

  /** Commit. A vendor refusal is a VendorValidationError (422 `validation`); throttling stays VendorHttpError. */
  addLine(ctx: WriteContext, d: AgreementLineDraft): Promise<WrittenLine>;
  rewriteLine(ctx: WriteContext, c: AgreementLineChange): Promise<WrittenLine>;
  endLine(ctx: WriteContext, e: AgreementLineEnd): Promise<WrittenLine>;

  /** The line of `agreementSourceId` this service wrote with `marker`, or null (reconcile before a retry). */
  findLineByMarker(ctx: WriteContext, agreementSourceId: string, marker: string): Promise<WrittenLine | null>;
}
