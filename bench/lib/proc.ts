/**
 * Reading processes from /proc (Linux): CPU time (user + system, ms) and resident memory (kB).
 * CPU time per operation is the figure that survives a noisy shared machine; wall-clock rates do not.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";

const TICK_MS = 10; // CLK_TCK is 100 on Linux

/** CPU ms used so far by `pid` (utime + stime), or null when the process is gone. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // fields 14 and 15 of stat(5)
  } catch {
    return null;
  }
}

/** `VmHWM` (peak resident set) and `VmRSS` of `pid` in kB. */
export function memoryKb(pid: number): { peakKb: number; rssKb: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
    return { peakKb: field("VmHWM"), rssKb: field("VmRSS") };
  } catch {
    return { peakKb: 0, rssKb: 0 };
  }
}

/**
 * Resets the peak resident set (VmHWM) of `pid` to its current RSS (`echo 5 > /proc/<pid>/clear_refs`,
 * Linux ≥ 4.0), so a later peak is the peak of what follows: under load, not the start-up's or a
 * deploy's compile (issue 22). Returns false when the kernel refused.
 */
export function resetPeakKb(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Whole-machine CPU jiffies (busy, total) for the load note. */
export function machineCpu(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = line[3] + line[4];
  const total = line.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** One line saying how loaded the machine is (load average and the share of CPU busy since `since`). */
export function loadNote(since: { busy: number; total: number }): string {
  const now = machineCpu();
  const busy = (now.busy - since.busy) / Math.max(1, now.total - since.total);
  return `machine load: loadavg ${loadavg().map((l) => l.toFixed(2)).join(" ")}, all cores ${(busy * 100).toFixed(0)}% busy during the run`;
}

/** Tracks the CPU of a changing set of processes: a pid first seen later starts from its first sample. */
export class CpuMeter {
  private readonly start = new Map<number, number>();
  constructor(private readonly groups: () => Record<string, number[]>) {}

  /** Samples every current pid as the baseline. */
  begin(): void {
    this.start.clear();
    for (const pids of Object.values(this.groups())) for (const pid of pids) this.start.set(pid, cpuMs(pid) ?? 0);
  }

  /** CPU ms per group since `begin()` (pids that appeared since count from 0: their whole life). */
  end(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [group, pids] of Object.entries(this.groups())) {
      out[group] = pids.reduce((sum, pid) => sum + Math.max(0, (cpuMs(pid) ?? 0) - (this.start.get(pid) ?? 0)), 0);
    }
    return out;
  }
}
