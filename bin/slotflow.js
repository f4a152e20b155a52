#!/usr/bin/env node
// The `slotflow` command. slotflow runs its TypeScript sources through tsx (a dependency).
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
