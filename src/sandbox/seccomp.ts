/**
 * The seccomp filter every sandboxed command runs under (docs/safety.md "Shell containment"): a
 * classic-BPF program, handed to bwrap with `--seccomp FD`, that makes `socket(AF_UNIX, …)`
 * fail with EACCES. A host service listening on a Unix socket (D-Bus, an ssh or gpg agent,
 * tmux, docker, podman) is then unreachable wherever its socket lives, even where no mount
 * hides it (an abstract socket has no path at all). `socketpair` stays allowed: it creates
 * an already-connected pair inside the process and is how Node and many tools wire their
 * child processes.
 *
 * Also refused, because they would step around the check:
 * - `io_uring_setup`: io_uring can create sockets without the `socket` system call;
 * - every system call of another ABI (i386 on x86_64, whose `socketcall` hides the family
 *   behind a pointer; x32, whose numbers carry the 0x40000000 bit; arm32 compat on aarch64).
 *
 * Only x86_64 and aarch64 are known; elsewhere `seccompProgram` says why it has none, and
 * `doctor` reports that line as a WARN.
 */

/** `struct seccomp_data` offsets (linux/seccomp.h). */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** Low 32 bits of args[0] on a little-endian machine (both known ABIs are). */
const OFFSET_ARG0_LOW = 16;

/** Classic BPF opcodes (linux/bpf_common.h). */
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EACCES = 13;
const EPERM = 1;

const AF_UNIX = 1;
const X32_SYSCALL_BIT = 0x40000000;

interface Abi {
  /** AUDIT_ARCH_* of the native ABI. */
  auditArch: number;
  socket: number;
  ioUringSetup: number;
  /** x86_64 only: the x32 ABI shares the audit arch and sets this bit in the number. */
  x32Bit: boolean;
}

/** By `process.arch`. */
export const SECCOMP_ABIS: Readonly<Record<string, Abi>> = {
  x64: { auditArch: 0xc000003e, socket: 41, ioUringSetup: 425, x32Bit: true },
  arm64: { auditArch: 0xc00000b7, socket: 198, ioUringSetup: 425, x32Bit: false },
};

type Insn = [code: number, jt: number, jf: number, k: number];

/** The instructions, before encoding; jump offsets count instructions after the jump. */
function instructions(abi: Abi): Insn[] {
  const denyEacces = SECCOMP_RET_ERRNO | EACCES;
  const denyEperm = SECCOMP_RET_ERRNO | EPERM;
  const prog: Insn[] = [];
  prog.push([LD_W_ABS, 0, 0, OFFSET_ARCH]);
  // Another ABI: refuse the call (EPERM) rather than judge numbers that mean something else.
  prog.push([JEQ_K, 1, 0, abi.auditArch]);
  prog.push([RET_K, 0, 0, denyEperm]);
  prog.push([LD_W_ABS, 0, 0, OFFSET_NR]);
  if (abi.x32Bit) {
    prog.push([JGE_K, 0, 1, X32_SYSCALL_BIT]);
    prog.push([RET_K, 0, 0, denyEperm]);
  }
  prog.push([JEQ_K, 0, 1, abi.ioUringSetup]);
  prog.push([RET_K, 0, 0, denyEperm]);
  prog.push([JEQ_K, 0, 3, abi.socket]);
  prog.push([LD_W_ABS, 0, 0, OFFSET_ARG0_LOW]);
  prog.push([JEQ_K, 0, 1, AF_UNIX]);
  prog.push([RET_K, 0, 0, denyEacces]);
  prog.push([RET_K, 0, 0, SECCOMP_RET_ALLOW]);
  return prog;
}

/** `struct sock_filter` array in the host's byte order (what the kernel reads). */
function encode(prog: readonly Insn[]): Buffer {
  const buf = Buffer.alloc(prog.length * 8);
  const le = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  prog.forEach(([code, jt, jf, k], i) => {
    const o = i * 8;
    if (le) {
      buf.writeUInt16LE(code, o);
      buf.writeUInt32LE(k >>> 0, o + 4);
    } else {
      buf.writeUInt16BE(code, o);
      buf.writeUInt32BE(k >>> 0, o + 4);
    }
    buf.writeUInt8(jt, o + 2);
    buf.writeUInt8(jf, o + 3);
  });
  return buf;
}

export type SeccompProgram = { ok: true; program: Buffer } | { ok: false; reason: string };

const built = new Map<string, SeccompProgram>();

/** The filter for this machine's architecture, built once. */
export function seccompProgram(arch: string = process.arch): SeccompProgram {
  const hit = built.get(arch);
  if (hit) return hit;
  const abi = Object.hasOwn(SECCOMP_ABIS, arch) ? SECCOMP_ABIS[arch] : undefined;
  const made: SeccompProgram = abi
    ? { ok: true, program: encode(instructions(abi)) }
    : {
        ok: false,
        reason: `no seccomp filter for the ${arch} architecture (Scoot builds one for x64 and arm64)`,
      };
  built.set(arch, made);
  return made;
}
