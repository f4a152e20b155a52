/**
 * The one shape of a UUID every door and the engine accept (issue 39 item 1: nine copies of this
 * regular expression became these constants). `UUID`: any case (a run id as the API takes it, issue
 * 28 item 6: a looser shape reached PostgreSQL and answered 500); `LOWER_UUID`: lower case only
 * (ids slotflow minted and hands out, e.g. the inbox's cursor and a task's lock token);
 * `UUID_PATTERN`: the bare pattern, to compose a larger one.
 */
export const UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/** A UUID in any case, the whole string. */
export const UUID = new RegExp(`^${UUID_PATTERN}$`, "i");

/** A UUID in lower case, the whole string. */
export const LOWER_UUID = new RegExp(`^${UUID_PATTERN}$`);
