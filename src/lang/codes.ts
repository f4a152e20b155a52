/**
 * Every diagnostic code of the flow compiler, in one table. Code elsewhere refers to a code by its
 * name (`Codes.UnknownState`), never by its number or its message; docs/diagnostics.md describes
 * each one with an example. A code, once published, keeps its meaning.
 *
 * Ranges: FLOW0xx lexical and syntax, FLOW1xx declarations and names, FLOW2xx types,
 * FLOW3xx slots, handlers and links, FLOW999 an internal compiler fault.
 */
export const Codes = {
  // --- lexical --------------------------------------------------------------------------------
  UnexpectedCharacter: "FLOW001",
  UnterminatedString: "FLOW002",
  UnterminatedComment: "FLOW003",
  InvalidEscape: "FLOW004",
  InvalidNumber: "FLOW005",
  NumberOutOfRange: "FLOW006",
  TooDeep: "FLOW007",
  TooManyDiagnostics: "FLOW008",
  UnstorableCharacter: "FLOW009",
  // --- syntax ---------------------------------------------------------------------------------
  ExpectedToken: "FLOW010",
  UnexpectedToken: "FLOW011",
  ExpectedContextualWord: "FLOW020",
  UnknownSetting: "FLOW021",
  SettingArity: "FLOW022",
  AfterNotAlias: "FLOW023",
  InvalidAssignmentTarget: "FLOW024",
  StatementAfterArm: "FLOW025",
  SendEmailFields: "FLOW026",
  ElseOutsideRequires: "FLOW027",
  BareArrow: "FLOW028",
  /** v0.5 (issue 42): a language variant (`, de: …`) after a setting other than Title, Intro or Requires' else. */
  VariantOutsideText: "FLOW038",
  ReservedName: "FLOW029",
  DeliveryFields: "FLOW030",
  EndpointNotLiteral: "FLOW031",
  // --- declarations and names -----------------------------------------------------------------
  DuplicateName: "FLOW100",
  UnknownType: "FLOW101",
  UnknownEvent: "FLOW102",
  UnknownState: "FLOW103",
  UnknownAlias: "FLOW104",
  UnknownName: "FLOW105",
  UnknownMember: "FLOW106",
  NoInitialState: "FLOW107",
  MultipleInitialStates: "FLOW108",
  NoTerminalState: "FLOW109",
  TerminalStateMember: "FLOW110",
  UnreachableState: "FLOW111",
  PrincipalNotAllowed: "FLOW112",
  EntityTypeNotAllowed: "FLOW113",
  InvalidTypeArguments: "FLOW114",
  EntityCycle: "FLOW115",
  ReservedTypeName: "FLOW116",
  UnknownAnnotation: "FLOW117",
  InvalidAnnotation: "FLOW118",
  Shadowing: "FLOW119",
  UnknownFunction: "FLOW120",
  NotCallable: "FLOW121",
  // --- added for v0.5 (issue 43): constraints on event parameters (check-constraints.ts) ---------
  /** `@min`/`@max`/`@minLength`/… on a parameter of a type the rule does not apply to. */
  ConstraintNotForType: "FLOW130",
  /** A constraint's argument is wrong, it is given twice, or its minimum exceeds its maximum. */
  InvalidConstraint: "FLOW131",
  /** `@pattern("…")` that RE2 cannot compile (backreferences, look-arounds): never run by a backtracking engine. */
  PatternNotRe2: "FLOW132",
  // --- added for v0.5 (issue 43 item 4): insiders' pages ------------------------------------------
  /** A warning: a slot with `Candidates` and no `Title` — its inbox entry and task page say only "Answer: <event>". */
  CandidatesWithoutTitle: "FLOW140",
  // --- types ----------------------------------------------------------------------------------
  TypeMismatch: "FLOW200",
  OperatorTypes: "FLOW201",
  ConditionNotBool: "FLOW202",
  CoalesceNotOptional: "FLOW203",
  NotAList: "FLOW204",
  DeadlineType: "FLOW205",
  ArgumentCount: "FLOW206",
  CannotInferType: "FLOW207",
  RequiresWordingType: "FLOW208",
  // --- slots, handlers, links -----------------------------------------------------------------
  SubscribeParams: "FLOW300",
  HandlerParamCount: "FLOW301",
  DuplicateHandler: "FLOW302",
  DuplicateSetting: "FLOW303",
  InvalidMatcher: "FLOW304",
  MatcherOutsideCandidates: "FLOW305",
  AfterSelf: "FLOW306",
  AfterCycle: "FLOW307",
  ExpiredWithoutDeadline: "FLOW308",
  AliasNotInScope: "FLOW309",
  CallbackUrlFanOut: "FLOW310",
  CallbackUrlInOwnHandler: "FLOW311",
  CallbackUrlAuthorize: "FLOW312",
  CallbackUrlDiscarded: "FLOW313",
  SlotNotAValue: "FLOW314",
  ReadOnlyAssignment: "FLOW315",
  InvalidAssignmentPath: "FLOW316",
  ExpressionNotCall: "FLOW317",
  /** v0.4 "Answers inside Slack": `answer:` of `send message` names no slot of this state, or a fanned-out one. */
  AnswerNotASlot: "FLOW318",
  /** v0.5 (issue 38 M2): a link minted for a slot whose `Candidates` has `anyone()` (two doors for two audiences). */
  CallbackUrlAnyone: "FLOW319",
  MapUnknownParam: "FLOW320",
  MapMissingParam: "FLOW321",
  UnknownEndpoint: "FLOW330",
  // --- added for v0.3 (issue 19): timers and routing on entry ----------------------------------
  TimerType: "FLOW340",
  TimerPeriodTooShort: "FLOW341",
  EnterArmsTwice: "FLOW342",
  LeftAtOnce: "FLOW343",
  // --- added for v0.4: many responders -------------------------------------------------------
  /** `Quorum` or `each { … }` on a slot that is not fanned out (`for each`). */
  FanOutSettingOnSingleSlot: "FLOW355",
  /** `Quorum` reads a tracked row (an entity-typed workflow parameter), which the workflow may change. */
  QuorumReadsTrackedRow: "FLOW356",
  // --- added for v0.4: a link sent where it is no longer live (check-dead-links.ts) --------------
  DeadLinkSent: "FLOW350",
  // --- added for v0.5: calls and results (language reference "A call is a slot that a machine answers", "Results")
  /** `Method:` is not one of GET, POST, PUT, PATCH, DELETE written as a bare word. */
  CallMethod: "FLOW370",
  /** A setting that does not belong to this member: a person's setting on a call, a call's on a subscribe, `Method`/`Path` off `call http`, `Timeout` on `call workflow`. */
  CallSettingMisplaced: "FLOW371",
  /** `Timeout` is not a positive duration, or `Path` is not a string. */
  CallSettingType: "FLOW373",
  /** `Attempts` is not an int, or a literal below 1. */
  CallAttempts: "FLOW374",
  /** `on x.failed` where x is not a call (a person's slot never fails). */
  FailedNotACall: "FLOW375",
  /** `x.CallbackUrl()` / `x.TaskUrl()` on a call: its slot is answered by its callee only. */
  CallHasNoLink: "FLOW376",
  /** `x.error`, `x.status` or `x.attempts` of a fanned-out call where the alias names many calls. */
  CallMemberFanOut: "FLOW377",
  /** `returns` names no event of this workflow (on a call or on the workflow). */
  UnknownReturns: "FLOW378",
  /** `result { … }` in a workflow that declares no `returns E`. */
  ResultWithoutReturns: "FLOW380",
  /** A `result { … }` field that is not a parameter of the returns event, or a required one missing. */
  ResultFields: "FLOW381",
  // --- added for v0.5: languages of the responder (issue 42) ------------------------------------
  /** A language variant's key is not a valid BCP 47 tag (Intl.getCanonicalLocales refuses it), or one is given twice. */
  UnknownLanguageTag: "FLOW390",
  /** The texts of one slot are translated into different sets of languages (a warning). */
  UnevenLanguageCoverage: "FLOW391",
  /** `Language:` is not a string (a BCP 47 tag). */
  LanguageType: "FLOW392",
  // --- internal -------------------------------------------------------------------------------
  InternalError: "FLOW999",
} as const;

export type CodeName = keyof typeof Codes;
export type Code = (typeof Codes)[CodeName];
