/**
 * The fields each ConnectWise resource has, as the published schema lists them (top-level names of the
 * Manage models in HealthITAU/pyconnectwise `models/manage`, which are generated from ConnectWise's
 * OpenAPI document; connectwise-rest `ManageTypes` agrees). Two uses, both as strict as ConnectWise:
 * - a `conditions` clause may only name these (plus `_info` and its members): anything else is
 *   refused with 400 "<field> is not a recognized name" (LabtechConsulting/ConnectWise-Manage-Powershell
 *   issue 4);
 * - a POST stores only these: ProjectTicket, for one, has no `externalXRef`, so it is dropped.
 */
import { CwError } from './errors';

const SCHEMA: Record<string, string> = {
  // Ticket
  tickets: `actualHours addressLine1 addressLine2 agreement allowAllClientsPortalView approved automaticEmailCc
    automaticEmailCcFlag automaticEmailContactFlag automaticEmailResourceFlag billExpenses billProducts
    billTime billingAmount billingMethod board budgetHours city closedBy closedDate closedFlag company
    contact contactEmailAddress contactEmailLookup contactName contactPhoneExtension contactPhoneNumber
    country currency customFields customerUpdatedFlag dateResolved dateResplan dateResponded department
    duration escalationLevel escalationStartDateUTC estimatedExpenseCost estimatedExpenseRevenue
    estimatedProductCost estimatedProductRevenue estimatedStartDate estimatedTimeCost
    estimatedTimeRevenue externalXRef hasChildTicket hasMergedChildTicketFlag hourlyRate id impact
    initialDescription initialDescriptionFrom initialInternalAnalysis initialResolution integratorTags
    isInSla item knowledgeBaseCategoryId knowledgeBaseLinkId knowledgeBaseLinkType
    knowledgeBaseSubCategoryId lagDays lagNonworkingDaysFlag location mergedParentTicket
    minutesBeforeWaiting mobileGuid opportunity owner parentTicketId poNumber predecessorClosedFlag
    predecessorId predecessorType priority processNotifications recordType requestForChangeFlag
    requiredDate resPlanMinutes resolveMinutes resources resplanSkippedMinutes respondMinutes
    respondedSkippedMinutes serviceLocation severity site siteName skipCallback sla slaStatus source
    stateIdentifier status subBillingAmount subBillingMethod subDateAccepted subType summary team type
    workRole workType zip`,
  // ProjectTicket
  project_tickets: `actualHours addressLine1 addressLine2 agreement allowAllClientsPortalView approved automaticEmailCc
    automaticEmailCcFlag automaticEmailContactFlag automaticEmailResourceFlag billExpenses billProducts
    billTime board budgetHours city closedBy closedDate closedFlag company contact contactEmailAddress
    contactEmailLookup contactName contactPhoneExtension contactPhoneNumber country currency
    customFields customerUpdatedFlag department duration estimatedStartDate id initialDescription
    initialInternalAnalysis initialResolution isIssueFlag item knowledgeBaseCategoryId
    knowledgeBaseLinkId knowledgeBaseLinkType knowledgeBaseSubCategoryId lagDays lagNonworkingDaysFlag
    location mobileGuid opportunity owner phase predecessorClosedFlag predecessorId predecessorType
    priority processNotifications project requiredDate resources serviceLocation site siteName
    skipCallback source stateIdentifier status subBillingAmount subBillingMethod subDateAccepted
    subType summary type wbsCode workRole workType zip`,
  // ServiceNote
  ticket_notes: `contact createdBy customerUpdatedFlag dateCreated detailDescriptionFlag externalFlag id
    internalAnalysisFlag internalFlag issueFlag member processNotifications resolutionFlag text
    ticketId`,
  // ProjectTicketNote
  project_ticket_notes: `bundledFlag contact detailDescriptionFlag id internalAnalysisFlag issueFlag member mergedFlag
    noteType originalAuthor resolutionFlag text ticket timeEnd timeStart`,
  // TimeEntry
  time_entries: `actualHours addToDetailDescriptionFlag addToInternalAnalysisFlag addToResolutionFlag agreement
    agreementAmount agreementHours billableOption businessUnitId chargeToId chargeToType company
    customFields dateEntered emailCc emailCcFlag emailContactFlag emailResourceFlag enteredBy
    hourlyRate hoursBilled hoursDeduct id internalNotes invoice invoiceHours locationId member
    mobileGuid notes overageRate phase project status ticket timeEnd timeSheet timeStart workRole
    workType`,
  // Board
  boards: `allSort autoAssignNewECTicketsFlag autoAssignNewPortalTicketsFlag autoAssignNewTicketsFlag
    autoAssignTicketOwnerFlag autoCloseStatus billExpense billProduct billTicketSeparatelyFlag
    billTicketsAfterClosedFlag billTime billUnapprovedTimeExpenseFlag boardIcon closedLoopAllFlag
    closedLoopDiscussionsFlag closedLoopInternalAnalysisFlag closedLoopResolutionFlag contactTemplate
    department discussionsLockedFlag dispatchMember dutyManagerMember
    emailConnectorAllowReopenClosedFlag emailConnectorNeverReopenByDaysClosedFlag
    emailConnectorNeverReopenByDaysFlag emailConnectorNewTicketNoMatchFlag
    emailConnectorReopenDaysClosedLimit emailConnectorReopenDaysLimit emailConnectorReopenResourcesFlag
    emailConnectorReopenStatus id inactiveFlag internalAnalysisSort location markFirstNoteIssueFlag
    name notifyEmailFrom notifyEmailFromName oncallMember overrideBillingSetupFlag
    percentageCalculation problemSort projectFlag resolutionSort resourceTemplate
    restrictBoardByDefaultFlag sendToCCFlag sendToContactFlag sendToResourceFlag serviceManagerMember
    showDependenciesFlag showEstimatesFlag signOffTemplate timeEntryDiscussionFlag
    timeEntryInternalAnalysisFlag timeEntryLockedFlag timeEntryResolutionFlag useMemberDisplayNameFlag
    workRole workType`,
  // BoardStatus
  statuses: `board closedStatus customStatusIndicatorName customerPortalDescription customerPortalFlag
    defaultFlag displayOnBoard emailTemplate escalationStatus id inactive name sortOrder
    statusIndicator timeEntryNotAllowed`,
  // Priority
  priorities: `color defaultFlag id imageLink name sortOrder`,
  // Member
  members: `adminFlag agreementInvoicingDisplayOptions allowExpensesEnteredAgainstCompaniesFlag
    allowInCellEntryOnTimeSheet authenticationServiceType autoPopupQuickNotesWithStopwatch
    autoStartStopwatch billableForecast calendar calendarSyncIntegrationFlag clientId
    companyActivityTabFormat copyColumnLayoutsAndFilters copyPodLayouts copySharedDefaultViews country
    customFields dailyCapacity daysTolerance defaultDepartment defaultEmail defaultLocation
    defaultPhone disableOnlineFlag employeeIdentifer enableLdapAuthenticationFlag enableMobileFlag
    enableMobileGpsFlag enterTimeAgainstCompanyFlag excludedProjectBoardIds excludedServiceBoardIds
    expenseApprover firstName fromMemberRecId globalSearchDefaultSort globalSearchDefaultTicketFilter
    hideMemberInDispatchPortalFlag hireDate homeEmail homeExtension homePhone hourlyCost hourlyRate id
    identifier inactiveDate inactiveFlag includeInUtilizationReportingFlag
    invoiceScreenDefaultTabFormat invoiceTimeTabFormat invoicingDisplayOptions lastLogin lastName
    ldapConfiguration ldapUserName licenseClass mapiName memberPersonas middleInitial minimumHours
    mobileEmail mobileExtension mobilePhone notes office365 officeEmail officeExtension officePhone
    partnerPortalFlag password phoneIntegrationType phoneSource photo primaryEmail projectDefaultBoard
    projectDefaultDepartment projectDefaultLocation reportCard reportsTo requireExpenseEntryFlag
    requireStartAndEndTimeOnTimeEntryFlag requireTimeSheetEntryFlag restrictDefaultSalesTerritoryFlag
    restrictDefaultWarehouseBinFlag restrictDefaultWarehouseFlag restrictDepartmentFlag
    restrictLocationFlag restrictProjectDefaultDepartmentFlag restrictProjectDefaultLocationFlag
    restrictScheduleFlag restrictServiceDefaultDepartmentFlag restrictServiceDefaultLocationFlag
    salesDefaultLocation scheduleCapacity scheduleDefaultDepartment scheduleDefaultLocation
    securityLocation securityRole serviceBoardTeamIds serviceDefaultBoard serviceDefaultDepartment
    serviceDefaultLocation serviceLocation signature ssoSettings structureLevel stsUserAdminUrl
    timeApprover timeReminderEmailFlag timeSheetStartDate timeZone timebasedOneTimePasswordActivated
    title toastNotificationFlag token type useBrowserLanguageFlag vendorNumber warehouse warehouseBin
    workRole workType`,
  // Company
  companies: `accountNumber addressLine1 addressLine2 annualRevenue billToCompany billingContact billingSite
    billingTerms calendar city companyEntityType country currency customFields dateAcquired dateDeleted
    defaultContact deletedBy deletedFlag facebookUrl faxNumber id identifier integratorTags
    invoiceCCEmailAddress invoiceDeliveryMethod invoiceTemplate invoiceToEmailAddress isVendorFlag
    leadFlag leadSource linkedInUrl market mobileGuid name numberOfEmployees ownershipType
    parentCompany phoneNumber pricingSchedule resellerIdentifier revenueYear sicCode site state status
    taxCode taxIdentifier territory territoryManager timeZoneSetup twitterUrl types unsubscribeFlag
    userDefinedField1 userDefinedField10 userDefinedField2 userDefinedField3 userDefinedField4
    userDefinedField5 userDefinedField6 userDefinedField7 userDefinedField8 userDefinedField9
    vendorIdentifier website yearEstablished zip`,
  // Contact
  contacts: `addressLine1 addressLine2 anniversary assistantContact birthDay children childrenFlag city
    communicationItems company companyLocation country customFields defaultBillingFlag defaultFlag
    defaultMergeContactId defaultPhoneExtension defaultPhoneNbr defaultPhoneType department
    disablePortalLoginFlag facebookUrl firstName gender id ignoreDuplicates inactiveFlag integratorTags
    lastName linkedInUrl managerContact marriedFlag mobileGuid nickName photo portalPassword
    portalSecurityLevel presence relationship relationshipOverride school securityIdentifier
    significantOther site state title twitterUrl typeIds types unsubscribeFlag userDefinedField1
    userDefinedField10 userDefinedField2 userDefinedField3 userDefinedField4 userDefinedField5
    userDefinedField6 userDefinedField7 userDefinedField8 userDefinedField9 zip`,
  // Agreement
  agreements: `agreementStatus allowOverruns applicationCycle applicationLimit applicationUnits
    applicationUnlimitedFlag autoInvoiceFlag billAmount billExpenses billOneTimeFlag billProducts
    billStartDate billTime billToCompany billToContact billToSite billableExpenseInvoice
    billableProductInvoice billableTimeInvoice billingCycle billingTerms bottomComment cancelledFlag
    carryOverUnused chargeToFirm compHourlyRate compLimitAmount company companyLocation contact
    coverAgreementExpense coverAgreementProduct coverAgreementTime coverSalesTax currency customFields
    customerPO dateCancelled department employeeCompNotExceed employeeCompRate endDate expireWhenZero
    expiredDays id internalNotes invoiceDescription invoiceTemplate invoicingCycle limit location name
    nextInvoiceDate noEndingDateFlag oneTimeFlag opportunity parentAgreement periodType projectType
    prorateFirstBill prorateFlag reasonCancelled restrictDepartmentFlag restrictDownPayment
    restrictLocationFlag site sla startDate subContractCompany subContractContact taxCode taxable
    topComment type workOrder workRole workType`,
  // Addition
  additions: `agreementId agreementStatus billCustomer billedQuantity cancelledDate customFields description
    effectiveDate extCost extPrice extendedProrateCost extendedProratePrice id invoiceDescription
    invoiceGrouping lessIncluded margin opportunity product prorateCost prorateCurrentPeriodFlag
    proratePrice purchaseItemFlag quantity sequenceNumber serialNumber specialOrderFlag taxableFlag
    unitCost unitPrice uom`,
  // Project
  projects: `actualEnd actualHours actualStart agreement billExpenses billProducts billProjectAfterClosedFlag
    billTime billToCompany billToContact billToSite billUnapprovedTimeAndExpense billingAmount
    billingAttention billingMethod billingRateType billingStartDate billingTerms board budgetAnalysis
    budgetFlag budgetHours closedFlag company companyLocation contact currency customFields customerPO
    department description doNotDisplayInPortalFlag downpayment estimatedEnd estimatedExpenseCost
    estimatedExpenseRevenue estimatedHours estimatedProductCost estimatedProductRevenue estimatedStart
    estimatedTimeCost estimatedTimeRevenue expenseApprover id includeDependenciesFlag
    includeEstimatesFlag location manager name opportunity percentComplete projectTemplateId
    restrictDownPaymentFlag scheduledEnd scheduledHours scheduledStart shipToCompany shipToContact
    shipToSite site status taxCode timeApprover type`,
  // ProjectPhase
  project_phases: `actualEnd actualHours actualStart agreement billExpenses billPhaseClosedFlag billProducts
    billProjectClosedFlag billSeparatelyFlag billTime billToCompany billToContact billToSite
    billingMethod billingStartDate board budgetHours businessUnitId currency customFields deadlineDate
    description downpayment estimatedExpenseCost estimatedExpenseRevenue estimatedProductCost
    estimatedProductRevenue estimatedTimeCost estimatedTimeRevenue hourlyRate id locationId
    markAsMilestoneFlag notes opportunity parentPhase poAmount poNumber projectId scheduledEnd
    scheduledHours scheduledStart shipToCompany shipToContact shipToSite status wbsCode`,
  // ProjectNote
  project_notes: `flagged id projectId text type`,
  // CatalogItem (pyconnectwise models/manage CatalogItem)
  catalog: `agreementType autoUpdateUnitCostFlag autoUpdateUnitPriceFlag billableOption calculatedCost
    calculatedCostFlag calculatedPrice calculatedPriceFlag category connectWiseID cost customFields
    customerDescription description dropShipFlag entityType id identifier inactiveFlag integrationXRef
    manufacturer manufacturerPartNumber markupFlag markupPercentage minStockLevel notes phaseProductFlag
    price priceAttribute productClass recurringBillCycle recurringCost recurringCycleType recurringFlag
    recurringOneTimeFlag recurringRevenue serializedCostFlag serializedFlag sla specialOrderFlag
    subcategory taxableFlag type unitOfMeasure vendor vendorSku`,
};

const FIELDS = new Map<string, ReadonlySet<string>>(
  Object.entries(SCHEMA).map(([table, names]) => [table, new Set(names.split(/\s+/).filter(Boolean))]),
);

/** The resource name ConnectWise puts in an error's `resource`, per table. */
const RESOURCE_NAMES: Record<string, string> = {
  tickets: 'ticket', project_tickets: 'projectTicket', ticket_notes: 'ticketNote', project_ticket_notes: 'projectTicketNote',
  time_entries: 'timeEntry', boards: 'board', statuses: 'boardStatus', priorities: 'priority', members: 'member',
  companies: 'company', contacts: 'contact', agreements: 'agreement', additions: 'addition', projects: 'project',
  project_phases: 'projectPhase', project_notes: 'projectNote', catalog: 'catalogItem',
};

/** `_info` members ConnectWise lets a condition name directly (`lastUpdated` for `_info/lastUpdated`). */
const INFO_FIELDS = new Set(['_info', 'lastUpdated', 'dateEntered', 'enteredBy', 'updatedBy']);

/**
 * A checker for the field names of a `conditions` clause on `table`: an unknown name is a 400 in
 * ConnectWise's error shape. Names must match the schema's spelling (whether ConnectWise forgives case
 * is unconfirmed; the records are read case-sensitively here, so a forgiven name would match nothing).
 */
export function conditionFields(table: string): (path: string) => void {
  const fields = FIELDS.get(table);
  const resource = RESOURCE_NAMES[table] ?? table;
  if (!fields) return () => undefined;
  return (path) => {
    const head = path.split(/[/.]/)[0];
    if (fields.has(head) || INFO_FIELDS.has(head)) return;
    const message = `${head} is not a recognized name.`;
    throw new CwError(400, 'InvalidObject', message, [{ code: 'ApiFindCondition', message, resource, field: head }]);
  };
}
