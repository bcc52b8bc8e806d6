// Process figures from /proc (Linux), and CPU pinning with taskset when present.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

const TICKS = 100; // USER_HZ on Linux
let tasksetPresent;

export function hasTaskset() {
  if (tasksetPresent === undefined) {
    try {
      execFileSync("taskset", ["-V"], { stdio: "ignore" });
      tasksetPresent = true;
    } catch {
      tasksetPresent = false;
    }
  }
  return tasksetPresent;
}

/** `[command, args]` run on the given cores when taskset exists, as is otherwise. */
export function pin(cpu, command, args) {
  if (cpu === null || !hasTaskset()) return [command, args];
  return ["taskset", ["-c", cpu, command, ...args]];
}

/** User + system CPU seconds used so far by a process, or null once it is gone. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return null;
  }
}

/** A process and its descendants (a server's cluster workers), from /proc/PID/task/TID/children. */
export function processTree(pid) {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${tree[i]}/task`)) {
        const children = readFileSync(`/proc/${tree[i]}/task/${task}/children`, "utf8").trim();
        if (children) tree.push(...children.split(" ").map(Number));
      }
    } catch {
      // Gone meanwhile, or a kernel without the children file: the process alone.
    }
  }
  return tree;
}

/** Resident memory in bytes, or null once the process is gone. */
export function rssBytes(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
