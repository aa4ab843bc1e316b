// The supervisor a command stage's command runs under (spawned by run-tool.ts). Plain JavaScript,
// so it starts without a TypeScript loader. It leads the command's process group (it is spawned
// detached; the command it spawns stays in its group) and exists for one reason: a parent killed
// by SIGKILL cannot clean up, and Linux's parent-death signal is out of Node's reach. The IPC
// channel to the worker closes when the worker dies, however it dies; the supervisor then
// terminates the whole group (SIGTERM, a short grace, SIGKILL), itself included.
//
// Protocol: the parent sends ONE message {cmd, args, env, cwd, graceMs}; the command is spawned
// with exactly that environment (nothing of the supervisor's own), no stdin, and the supervisor's
// stdout and stderr (the worker's pipes). When it cannot be started the supervisor sends
// {type: 'spawn-error', code, message} and exits 127. When the command ends, the supervisor sends
// {type: 'exit', code, signal} and ends the same way: the same exit code, or the same signal (Node
// itself may not die of every signal, e.g. SIGUSR1 starts its inspector: the message is the truth).
import { spawn } from 'node:child_process';

/** Most time an orphaned group gets between SIGTERM and SIGKILL: well inside the 2 s budget. */
const ORPHAN_GRACE_CAP_MS = 500;

let child;
let graceMs = ORPHAN_GRACE_CAP_MS;
let orphaned = false;

// The group gets every SIGTERM/SIGINT/SIGHUP meant for the command; the command decides what they
// mean, and the supervisor stays to report how it ended (SIGKILL still ends the supervisor).
const ignore = () => {};
const TERMINATING = ['SIGTERM', 'SIGINT', 'SIGHUP'];
for (const signal of TERMINATING) process.on(signal, ignore);

/** Sends `signal` to the supervisor's own process group; a group already gone is fine. */
function signalGroup(signal) {
  try {
    process.kill(-process.pid, signal);
  } catch {
    // ESRCH: nothing left to signal.
  }
}

/** The worker is gone: nobody will ever collect the command, so the group dies now. */
function onParentGone() {
  if (orphaned) return;
  orphaned = true;
  if (!child) process.exit(1);
  signalGroup('SIGTERM');
  setTimeout(() => signalGroup('SIGKILL'), Math.min(graceMs, ORPHAN_GRACE_CAP_MS));
}

/** Ends the supervisor the way the command ended, so the worker reads the command's status from ours. */
function endLike(code, signal) {
  if (signal) {
    for (const s of TERMINATING) process.off(s, ignore);
    process.kill(process.pid, signal);
    // A signal whose default action does not terminate (none of those a child dies of) falls through.
  }
  process.exit(code ?? 1);
}

function start(spec) {
  graceMs = Number.isFinite(spec.graceMs) ? spec.graceMs : ORPHAN_GRACE_CAP_MS;
  child = spawn(spec.cmd, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'inherit', 'inherit'] });
  child.once('error', (err) => {
    // Before 'exit', only spawn failures land here (ENOENT, EACCES): the command never ran.
    const report = { type: 'spawn-error', code: err.code ?? 'UNKNOWN', message: err.message };
    if (process.connected) process.send(report, () => process.exit(127));
    else process.exit(127);
  });
  child.once('exit', (code, signal) => {
    if (orphaned) return;
    if (process.connected) process.send({ type: 'exit', code, signal }, () => endLike(code, signal));
    else endLike(code, signal);
  });
}

process.once('message', start);
process.once('disconnect', onParentGone);
