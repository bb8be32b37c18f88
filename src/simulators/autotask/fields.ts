/**
 * Field metadata of the simulated Autotask entities, in the shape `GET <Entity>/entityInformation/fields`
 * returns (`{fields: [...]}`). Field names, types and required flags follow Autotask's REST field
 * information (mirrored by generated clients such as panoramicdata/AutoTask.Psa.Api and
 * Anteris-Dev/autotask-client, which mark `isRequired` fields non-nullable). Lengths marked
 * "unconfirmed" are our best reading.
 *
 * Picklist *values* differ per Autotask database, so the built-in lists here are only defaults: an
 * instance seeded with `TicketFields` / `TicketNoteFields` / ... (native field objects) replaces the
 * built-in field of the same name.
 */

export interface PicklistValue {
  value: string;
  label: string;
  isDefaultValue: boolean;
  sortOrder: number;
  parentValue: string;
  isActive: boolean;
  isSystem: boolean;
}

export interface FieldInfo {
  name: string;
  dataType: 'integer' | 'long' | 'string' | 'datetime' | 'boolean' | 'double' | 'decimal';
  length: number;
  isRequired: boolean;
  isReadOnly: boolean;
  isQueryable: boolean;
  isReference: boolean;
  referenceEntityType: string;
  isPickList: boolean;
  picklistValues: PicklistValue[] | null;
  picklistParentValueField: string;
  isSupportedWebhookField: boolean;
}

/** The entities the simulator serves, by their REST path name. */
export const ENTITIES = [
  'Tickets', 'TicketNotes', 'TimeEntries', 'Resources', 'Roles', 'BillingCodes', 'Companies', 'Contacts',
  'Contracts', 'ContractServices', 'ContractServiceUnits', 'Projects', 'Services', 'ContractServiceAdjustments', 'ProjectNotes', 'Tasks',
] as const;
export type EntityName = (typeof ENTITIES)[number];

/** Fixture/seed keys carrying native field objects that override the built-in ones, per entity. */
const FIELD_SEED_KEYS: Record<string, EntityName> = {
  ticketfields: 'Tickets',
  ticketnotefields: 'TicketNotes',
  timeentryfields: 'TimeEntries',
  contractfields: 'Contracts',
  projectfields: 'Projects',
  companyfields: 'Companies',
};

/** The seed key that carries an entity's field information (the inverse of fieldSeedEntity). */
export function fieldSeedKey(entity: EntityName): string | undefined {
  return Object.entries(FIELD_SEED_KEYS).find(([, e]) => e === entity)?.[0];
}

/** The entity whose field information a seed key (TicketFields, TicketNoteFields, ...) carries. */
export function fieldSeedEntity(key: string): EntityName | undefined {
  return FIELD_SEED_KEYS[key.toLowerCase()];
}

type Spec = Partial<FieldInfo> & { name: string; dataType: FieldInfo['dataType'] };

function field(s: Spec): FieldInfo {
  return {
    length: 0,
    isRequired: false,
    isReadOnly: false,
    isQueryable: true,
    isReference: !!s.referenceEntityType,
    referenceEntityType: '',
    isPickList: !!s.picklistValues,
    picklistValues: null,
    picklistParentValueField: '',
    isSupportedWebhookField: false,
    ...s,
  };
}

export function picklist(values: [number | string, string][], defaultValue?: number | string): PicklistValue[] {
  return values.map(([value, label], i) => ({
    value: String(value),
    label,
    isDefaultValue: defaultValue != null && String(defaultValue) === String(value),
    sortOrder: i + 1,
    parentValue: '',
    isActive: true,
    isSystem: true,
  }));
}

const id = () => field({ name: 'id', dataType: 'long', isRequired: true, isReadOnly: true });
const int = (name: string, extra: Partial<Spec> = {}) => field({ name, dataType: 'integer', ...extra });
const str = (name: string, length: number, extra: Partial<Spec> = {}) => field({ name, dataType: 'string', length, ...extra });
const time = (name: string, extra: Partial<Spec> = {}) => field({ name, dataType: 'datetime', ...extra });
const bool = (name: string, extra: Partial<Spec> = {}) => field({ name, dataType: 'boolean', ...extra });
const dbl = (name: string, extra: Partial<Spec> = {}) => field({ name, dataType: 'double', ...extra });
const ref = (name: string, entity: string, extra: Partial<Spec> = {}) => int(name, { referenceEntityType: entity, isReference: true, ...extra });
const pick = (name: string, values: PicklistValue[], extra: Partial<Spec> = {}) => int(name, { isPickList: true, picklistValues: values, ...extra });

/** Built-in field lists. The picklists are the sandbox's defaults (overridable by seed). */
export function defaultFields(): Record<EntityName, FieldInfo[]> {
  return {
    Tickets: [
      id(),
      str('ticketNumber', 50, { isReadOnly: true }),
      // Autotask: title is required, at most 255 characters.
      str('title', 255, { isRequired: true }),
      // Autotask ticket descriptions hold up to 8000 characters (unconfirmed for REST).
      str('description', 8000),
      pick('status', picklist([[1, 'New'], [8, 'In Progress'], [5, 'Complete']], 1), { isRequired: true }),
      pick('priority', picklist([[1, 'High'], [2, 'Medium'], [3, 'Low'], [4, 'Critical']], 2), { isRequired: true }),
      pick('queueID', picklist([[29683481, 'Service Desk']])),
      ref('companyID', 'Company', { isRequired: true }),
      ref('contactID', 'Contact'),
      ref('contractID', 'Contract'),
      ref('projectID', 'Project'),
      ref('assignedResourceID', 'Resource'),
      ref('assignedResourceRoleID', 'Role'),
      ref('billingCodeID', 'BillingCode'),
      time('createDate', { isReadOnly: true }),
      ref('creatorResourceID', 'Resource', { isReadOnly: true }),
      int('creatorType', { isReadOnly: true, isQueryable: false }),
      time('lastActivityDate', { isReadOnly: true }),
      int('lastActivityPersonType', { isReadOnly: true, isQueryable: false }),
      ref('lastActivityResourceID', 'Resource', { isReadOnly: true }),
      time('completedDate', { isReadOnly: true }),
      ref('completedByResourceID', 'Resource', { isReadOnly: true }),
      time('dueDateTime'),
      dbl('estimatedHours'),
      // Free text for integrations; our write marker. Length unconfirmed (50 assumed).
      str('externalID', 50),
      pick('issueType', picklist([[5, 'Hardware'], [6, 'Software'], [7, 'Network'], [8, 'Email'], [9, 'Security']])),
      int('subIssueType'),
      pick('source', picklist([[2, 'Phone'], [4, 'Email'], [6, 'Client Portal'], [8, 'Monitoring Alert'], [11, 'Web Service']])),
      pick('ticketType', picklist([[1, 'Service Request'], [2, 'Incident'], [3, 'Problem'], [4, 'Change Request'], [5, 'Alert']], 1)),
      pick('ticketCategory', picklist([[3, 'Standard']], 3)),
      str('resolution', 32000),
      time('resolvedDateTime'),
      time('firstResponseDateTime', { isReadOnly: true }),
      str('purchaseOrderNumber', 50),
    ],
    TicketNotes: [
      id(),
      time('createDateTime', { isReadOnly: true }),
      ref('creatorResourceID', 'Resource', { isReadOnly: true }),
      str('description', 32000, { isRequired: true }),
      ref('impersonatorCreatorResourceID', 'Resource', { isReadOnly: true }),
      time('lastActivityDate', { isReadOnly: true }),
      pick('noteType', picklist([[1, 'Task Summary'], [2, 'Task Detail'], [3, 'Task Notes']], 1), { isRequired: true }),
      pick('publish', picklist([[1, 'All Autotask Users'], [2, 'Internal Only']], 1), { isRequired: true }),
      ref('ticketID', 'Ticket', { isRequired: true }),
      // Required unless the ticket category says otherwise; the field information reports it required.
      str('title', 250, { isRequired: true }),
    ],
    TimeEntries: [
      id(),
      ref('billingCodeID', 'BillingCode'),
      ref('contractID', 'Contract'),
      time('createDateTime', { isReadOnly: true }),
      int('creatorUserID', { isReadOnly: true }),
      time('dateWorked', { isRequired: true }),
      time('endDateTime'),
      dbl('hoursToBill', { isReadOnly: true }),
      dbl('hoursWorked'),
      str('internalNotes', 32000),
      bool('isNonBillable'),
      time('lastModifiedDateTime', { isReadOnly: true }),
      ref('resourceID', 'Resource', { isRequired: true }),
      ref('roleID', 'Role'),
      bool('showOnInvoice'),
      time('startDateTime'),
      str('summaryNotes', 32000),
      int('taskID', { referenceEntityType: 'Task', isReference: true }),
      ref('ticketID', 'Ticket'),
      pick('timeEntryType', picklist([[2, 'Ticket'], [6, 'Project Task'], [1, 'Regular']]), { isReadOnly: true }),
    ],
    Resources: [
      id(),
      str('firstName', 50, { isRequired: true }),
      str('lastName', 50, { isRequired: true }),
      str('userName', 32, { isRequired: true }),
      str('email', 50, { isRequired: true }),
      bool('isActive', { isRequired: true }),
      str('title', 50),
      str('resourceType', 15, { isReadOnly: true }),
      str('officePhone', 25),
      str('mobilePhone', 25),
      ref('defaultServiceDeskRoleID', 'Role'),
      time('hireDate'),
      int('licenseType', { isReadOnly: true }),
    ],
    Roles: [
      id(),
      str('name', 200, { isRequired: true }),
      str('description', 200),
      dbl('hourlyRate', { isRequired: true }),
      dbl('hourlyFactor', { isRequired: true }),
      bool('isActive', { isRequired: true }),
      int('roleType', { isReadOnly: true }),
    ],
    BillingCodes: [
      id(),
      str('name', 200, { isReadOnly: true }),
      str('description', 500, { isReadOnly: true }),
      int('billingCodeType', { isReadOnly: true }),
      int('useType', { isReadOnly: true }),
      bool('isActive', { isReadOnly: true }),
      dbl('unitPrice', { isReadOnly: true }),
      dbl('unitCost', { isReadOnly: true }),
      str('externalNumber', 100, { isReadOnly: true }),
    ],
    Companies: [
      id(),
      str('companyName', 100, { isRequired: true }),
      str('companyNumber', 50),
      pick('companyType', picklist([[1, 'Customer'], [2, 'Lead'], [3, 'Prospect'], [4, 'Dead'], [6, 'Cancelation'], [7, 'Vendor'], [8, 'Partner']], 1), { isRequired: true }),
      str('phone', 25, { isRequired: true }),
      str('webAddress', 255),
      str('address1', 128),
      str('city', 50),
      str('state', 25),
      str('postalCode', 20),
      int('countryID'),
      bool('isActive'),
      ref('ownerResourceID', 'Resource', { isRequired: true }),
      ref('parentCompanyID', 'Company'),
      time('createDate', { isReadOnly: true }),
      time('lastActivityDate', { isReadOnly: true }),
      time('lastTrackedModifiedDateTime', { isReadOnly: true }),
    ],
    Contacts: [
      id(),
      ref('companyID', 'Company', { isRequired: true }),
      str('firstName', 50, { isRequired: true }),
      str('lastName', 50, { isRequired: true }),
      str('emailAddress', 254),
      str('phone', 25),
      str('mobilePhone', 25),
      str('title', 50),
      // Autotask Contacts.isActive is an integer (1/0), not a boolean.
      int('isActive', { isRequired: true }),
      bool('primaryContact'),
      str('externalID', 50),
      time('createDate', { isReadOnly: true }),
      time('lastActivityDate', { isReadOnly: true }),
      time('lastModifiedDate', { isReadOnly: true }),
    ],
    Contracts: [
      id(),
      ref('companyID', 'Company', { isRequired: true }),
      ref('contactID', 'Contact'),
      str('contractName', 100, { isRequired: true }),
      str('contractNumber', 50),
      pick('contractType', picklist([[1, 'Time & Materials'], [3, 'Fixed Price'], [4, 'Block Hours'], [6, 'Retainer'], [7, 'Recurring Service'], [8, 'Per Ticket']]), { isRequired: true }),
      int('contractCategory'),
      // Billing period of recurring service contracts. Values are sandbox values (unconfirmed ids).
      pick('contractPeriodType', picklist([[1, 'Monthly'], [2, 'Quarterly'], [3, 'Semi-Annual'], [4, 'Yearly']])),
      str('description', 2000),
      time('startDate', { isRequired: true }),
      time('endDate', { isRequired: true }),
      pick('status', picklist([[0, 'Inactive'], [1, 'Active']], 1), { isRequired: true }),
      bool('isDefaultContract', { isRequired: true }),
      dbl('estimatedRevenue'),
      int('serviceLevelAgreementID'),
      int('timeReportingRequiresStartAndStopTimes', { isRequired: true }),
    ],
    ContractServices: [
      id(),
      ref('contractID', 'Contract', { isRequired: true }),
      ref('serviceID', 'Service', { isRequired: true }),
      dbl('unitPrice'),
      dbl('unitCost', { isReadOnly: true }),
      dbl('adjustedPrice'),
      dbl('internalCurrencyAdjustedPrice', { isReadOnly: true }),
      dbl('internalCurrencyUnitPrice', { isReadOnly: true }),
      str('internalDescription', 1000),
      str('invoiceDescription', 1000),
      int('quoteItemID'),
    ],
    // Create-only, never queried or updated (Autotask REST ContractServiceAdjustments entity page). Fields
    // as Autotask's field information lists them (the SOAP and REST clients agree: effectiveDate and
    // unitChange required; contractServiceID or contractID + serviceID name the contract service).
    ContractServiceAdjustments: [
      id(),
      ref('contractID', 'Contract'),
      ref('serviceID', 'Service'),
      ref('contractServiceID', 'ContractService'),
      time('effectiveDate', { isRequired: true }),
      int('unitChange', { isRequired: true }),
      dbl('adjustedUnitPrice'),
      dbl('adjustedUnitCost'),
      int('quoteItemID'),
      bool('allowRepeatService'),
    ],
    ContractServiceUnits: [
      id(),
      ref('contractID', 'Contract', { isReadOnly: true }),
      ref('contractServiceID', 'ContractService', { isReadOnly: true }),
      ref('serviceID', 'Service', { isReadOnly: true }),
      time('startDate', { isReadOnly: true }),
      time('endDate', { isReadOnly: true }),
      int('units', { isReadOnly: true }),
      dbl('price', { isReadOnly: true }),
      dbl('cost', { isReadOnly: true }),
      time('approveAndPostDate', { isReadOnly: true }),
    ],
    Projects: [
      id(),
      str('projectName', 100, { isRequired: true }),
      str('projectNumber', 50, { isReadOnly: true }),
      ref('companyID', 'Company', { isRequired: true }),
      ref('contractID', 'Contract'),
      ref('projectLeadResourceID', 'Resource'),
      pick('projectType', picklist([[1, 'Proposal'], [2, 'Template'], [3, 'Baseline'], [4, 'Archived'], [5, 'Client'], [8, 'Internal']]), { isRequired: true }),
      pick('status', picklist([[0, 'Inactive'], [1, 'New'], [2, 'In Progress'], [3, 'On Hold'], [5, 'Complete']], 1), { isRequired: true }),
      time('startDateTime', { isRequired: true }),
      time('endDateTime', { isRequired: true }),
      time('completedDateTime', { isReadOnly: true }),
      time('createDateTime', { isReadOnly: true }),
      time('lastActivityDateTime', { isReadOnly: true }),
      str('description', 2000),
      dbl('estimatedTime'),
      int('department'),
      str('statusDetail', 2000),
      int('completedPercentage', { isReadOnly: true }),
    ],
    // Fields of Autotask's ProjectNote and Task entities (opendns/autotask-php AutotaskObjects
    // ProjectNote.php, Task.php: Task requires projectID, status, taskType, title). Picklist values
    // are per database in Autotask; the sandbox's ids are its own, so a client must read them.
    ProjectNotes: [
      id(),
      ref('projectID', 'Project', { isRequired: true }),
      str('title', 250, { isRequired: true }),
      str('description', 32000, { isRequired: true }),
      pick('noteType', picklist([[11, 'Project Summary'], [12, 'Project Detail'], [13, 'Project Notes']], 13), { isRequired: true }),
      pick('publish', picklist([[4, 'All Autotask Users'], [5, 'Internal Only']], 4), { isRequired: true }),
      bool('isAnnouncement'),
      ref('creatorResourceID', 'Resource', { isReadOnly: true }),
      time('createDateTime', { isReadOnly: true }),
      time('lastActivityDate', { isReadOnly: true }),
    ],
    Tasks: [
      id(),
      ref('projectID', 'Project', { isRequired: true }),
      str('title', 255, { isRequired: true }),
      str('description', 8000),
      pick('status', picklist([[7, 'New'], [8, 'In Progress'], [5, 'Complete']], 7), { isRequired: true }),
      pick('taskType', picklist([[21, 'Fixed Work'], [22, 'Fixed Duration']], 21), { isRequired: true }),
      ref('phaseID', 'Phase'),
      ref('assignedResourceID', 'Resource'),
      dbl('estimatedHours'),
      str('externalID', 50),
      str('taskNumber', 50, { isReadOnly: true }),
      ref('creatorResourceID', 'Resource', { isReadOnly: true }),
      time('createDateTime', { isReadOnly: true }),
      time('lastActivityDateTime', { isReadOnly: true }),
    ],
    Services: [
      id(),
      str('name', 150, { isRequired: true }),
      str('description', 400),
      str('invoiceDescription', 1000),
      dbl('unitPrice'),
      dbl('unitCost'),
      pick('periodType', picklist([[1, 'Monthly'], [2, 'Quarterly'], [3, 'Semi-Annual'], [4, 'Yearly']], 1), { isRequired: true }),
      bool('isActive'),
      ref('billingCodeID', 'BillingCode', { isRequired: true }),
      ref('vendorCompanyID', 'Company'),
      time('createDate', { isReadOnly: true }),
      time('lastModifiedDate', { isReadOnly: true }),
    ],
  };
}

/** Built-in fields with seeded native field objects replacing those of the same name. */
export function mergeFields(base: FieldInfo[], overrides: FieldInfo[] | undefined): FieldInfo[] {
  if (!overrides?.length) return base;
  const byName = new Map(overrides.map((f) => [f.name.toLowerCase(), f]));
  const merged = base.map((f) => byName.get(f.name.toLowerCase()) ?? f);
  for (const f of overrides) if (!base.some((b) => b.name.toLowerCase() === f.name.toLowerCase())) merged.push(f);
  return merged;
}
