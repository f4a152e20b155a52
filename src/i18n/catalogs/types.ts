/** The shape every catalog has: a message for each key of the English one (en.ts). */
import type { MessageKey } from "./en.js";

export type Catalog = Record<MessageKey, string>;
