/**
 * Counts the commands this process sends to Redis, by name, for kiln and BullMQ alike: both talk
 * through ioredis, so wrapping `Redis.prototype.sendCommand` sees every request (pipelined ones
 * and scripts' EVALSHA too). Each counted command is one request with one reply; whether several
 * share a network write is ioredis's business.
 */
import { Redis } from 'ioredis';

type SendCommand = Redis['sendCommand'];

let counts: Record<string, number> | undefined;
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const original: SendCommand = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<SendCommand>) {
    if (counts !== undefined) {
      const name = String(args[0].name).toLowerCase();
      counts[name] = (counts[name] ?? 0) + 1;
    }
    return original.apply(this, args);
  } as SendCommand;
}

/** Starts counting; `stop()` returns the counts by command name and stops. */
export function startCommandCount(): { stop(): Record<string, number> } {
  install();
  const mine: Record<string, number> = {};
  counts = mine;
  return {
    stop() {
      if (counts === mine) counts = undefined;
      return mine;
    },
  };
}
