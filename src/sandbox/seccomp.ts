/**
 * The seccomp filter every sandboxed command runs under (docs/safety.md "Shell containment"): a
 * classic-BPF program, handed to bwrap with `--seccomp FD`. It allows by list where a call
 * takes a kind, and refuses the kernel interfaces a namespace does not separate:
 *
 * - `socket`: only AF_INET, AF_INET6 and AF_NETLINK's NETLINK_ROUTE (the network namespace
 *   separates those; see NETLINK_ROUTE for why netlink is needed at all). AF_UNIX fails
 *   with EACCES, so a host service on a Unix socket (D-Bus, an ssh or gpg agent, tmux,
 *   docker) is unreachable wherever its socket lives, abstract ones included. Every other
 *   family (AF_VSOCK reaches the hypervisor's port space) and netlink protocol (much of the
 *   kernel's attack surface) fails with EAFNOSUPPORT, as on a kernel built without it, so
 *   tools take the fallback they have there (glibc's getaddrinfo assumes both IP families).
 * - `socketpair`: AF_UNIX stream and seqpacket pairs only (Node wires a child's stdio with
 *   `socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC)`). A datagram pair is refused: its end
 *   can `sendto` or `connect` to any named datagram socket it can see.
 * - the keyring (`add_key`, `request_key`, `keyctl`): the session keyring is the caller's,
 *   not the sandbox's; refused with EPERM.
 * - nested user namespaces (`unshare`/`clone` with CLONE_NEWUSER, `setns`): a process that
 *   does not exec keeps every capability inside one. `clone3` hides its flags behind a
 *   pointer, so it fails with ENOSYS and glibc falls back to `clone`, which is checked.
 *   bwrap's `--disable-userns` adds a second lock where bwrap has it (probe.ts).
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
/** Low 32 bits of args[n] on a little-endian machine (both known ABIs are). */
const OFFSET_ARG0_LOW = 16;
const OFFSET_ARG1_LOW = 24;
const OFFSET_ARG2_LOW = 32;

/** Classic BPF opcodes (linux/bpf_common.h). */
export const BPF = {
  LD_W_ABS: 0x20,
  JEQ_K: 0x15,
  JGE_K: 0x35,
  JSET_K: 0x45,
  AND_K: 0x54,
  RET_K: 0x06,
} as const;

export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const SECCOMP_RET_ERRNO = 0x00050000;
/** Errno values (asm-generic/errno-base.h, errno.h; the same on both ABIs). */
export const ERRNO = { EPERM: 1, EACCES: 13, ENOSYS: 38, EAFNOSUPPORT: 97 } as const;

/** Address families (linux/socket.h). */
export const AF = { UNIX: 1, INET: 2, INET6: 10, NETLINK: 16, VSOCK: 40 } as const;
/** The families `socket` may create: the ones the network namespace separates. */
export const ALLOWED_FAMILIES: readonly number[] = [AF.INET, AF.INET6];
/**
 * AF_NETLINK is allowed for this one protocol: getifaddrs (Node's os.networkInterfaces,
 * `ip addr`) needs it, and it sees only the sandbox's own network namespace. Every other
 * netlink protocol (sock_diag, uevents, netfilter, audit) is refused; `ss` falls back to /proc.
 */
export const NETLINK_ROUTE = 0;
/** Socket types (linux/net.h) and the flags that may ride on the type argument. */
export const SOCK = { STREAM: 1, DGRAM: 2, SEQPACKET: 5, NONBLOCK: 0o4000, CLOEXEC: 0o2000000 } as const;
/** The pair types `socketpair` may create: connected for good, so no address is ever used. */
export const ALLOWED_PAIR_TYPES: readonly number[] = [SOCK.STREAM, SOCK.SEQPACKET];
export const CLONE_NEWUSER = 0x10000000;
const X32_SYSCALL_BIT = 0x40000000;

export interface Abi {
  /** AUDIT_ARCH_* of the native ABI. */
  auditArch: number;
  socket: number;
  socketpair: number;
  ioUringSetup: number;
  addKey: number;
  requestKey: number;
  keyctl: number;
  unshare: number;
  clone: number;
  clone3: number;
  setns: number;
  /** x86_64 only: the x32 ABI shares the audit arch and sets this bit in the number. */
  x32Bit: boolean;
}

/** By `process.arch`; numbers from asm/unistd_64.h (x86_64) and asm-generic/unistd.h (aarch64). */
export const SECCOMP_ABIS: Readonly<Record<string, Abi>> = {
  x64: {
    auditArch: 0xc000003e,
    socket: 41,
    socketpair: 53,
    ioUringSetup: 425,
    addKey: 248,
    requestKey: 249,
    keyctl: 250,
    unshare: 272,
    clone: 56,
    clone3: 435,
    setns: 308,
    x32Bit: true,
  },
  arm64: {
    auditArch: 0xc00000b7,
    socket: 198,
    socketpair: 199,
    ioUringSetup: 425,
    addKey: 217,
    requestKey: 218,
    keyctl: 219,
    unshare: 97,
    clone: 220,
    clone3: 435,
    setns: 268,
    x32Bit: false,
  },
};

type Insn = [code: number, jt: number, jf: number, k: number];
/** A jump target: an instruction index, or a label resolved when the program is assembled. */
type Target = number | string;
type Draft = { insn: Insn; jt?: Target; jf?: Target } | { label: string };

const ALLOW = "allow";
const EPERM = "eperm";
const EACCES = "eacces";
const ENOSYS = "enosys";
const EAFNOSUPPORT = "eafnosupport";
const NEXT = 0;

/** The instructions, before encoding; jump offsets count instructions after the jump. */
function instructions(abi: Abi): Insn[] {
  const d: Draft[] = [];
  const op = (code: number, k: number) => d.push({ insn: [code, 0, 0, k] });
  const jump = (code: number, k: number, jt: Target, jf: Target) => d.push({ insn: [code, 0, 0, k], jt, jf });
  const label = (name: string) => d.push({ label: name });
  op(BPF.LD_W_ABS, OFFSET_ARCH);
  // Another ABI: refuse the call (EPERM) rather than judge numbers that mean something else.
  jump(BPF.JEQ_K, abi.auditArch, NEXT, EPERM);
  op(BPF.LD_W_ABS, OFFSET_NR);
  if (abi.x32Bit) jump(BPF.JGE_K, X32_SYSCALL_BIT, EPERM, NEXT);
  jump(BPF.JEQ_K, abi.socket, "socket", NEXT);
  jump(BPF.JEQ_K, abi.socketpair, "socketpair", NEXT);
  jump(BPF.JEQ_K, abi.unshare, "newuser", NEXT);
  jump(BPF.JEQ_K, abi.clone, "newuser", NEXT);
  jump(BPF.JEQ_K, abi.clone3, ENOSYS, NEXT);
  for (const nr of [abi.setns, abi.addKey, abi.requestKey, abi.keyctl, abi.ioUringSetup])
    jump(BPF.JEQ_K, nr, EPERM, NEXT);
  op(BPF.RET_K, SECCOMP_RET_ALLOW);
  label("socket");
  op(BPF.LD_W_ABS, OFFSET_ARG0_LOW);
  for (const af of ALLOWED_FAMILIES) jump(BPF.JEQ_K, af, ALLOW, NEXT);
  jump(BPF.JEQ_K, AF.UNIX, EACCES, NEXT);
  jump(BPF.JEQ_K, AF.NETLINK, NEXT, EAFNOSUPPORT);
  op(BPF.LD_W_ABS, OFFSET_ARG2_LOW);
  jump(BPF.JEQ_K, NETLINK_ROUTE, ALLOW, EAFNOSUPPORT);
  label("socketpair");
  op(BPF.LD_W_ABS, OFFSET_ARG0_LOW);
  jump(BPF.JEQ_K, AF.UNIX, NEXT, EAFNOSUPPORT);
  op(BPF.LD_W_ABS, OFFSET_ARG1_LOW);
  // The flags ride on the type; any other stray bit leaves a type that matches nothing.
  op(BPF.AND_K, ~(SOCK.NONBLOCK | SOCK.CLOEXEC) >>> 0);
  for (const t of ALLOWED_PAIR_TYPES) jump(BPF.JEQ_K, t, ALLOW, NEXT);
  op(BPF.RET_K, SECCOMP_RET_ERRNO | ERRNO.EACCES);
  label("newuser");
  op(BPF.LD_W_ABS, OFFSET_ARG0_LOW);
  jump(BPF.JSET_K, CLONE_NEWUSER, EPERM, ALLOW);
  label(ALLOW);
  op(BPF.RET_K, SECCOMP_RET_ALLOW);
  label(EPERM);
  op(BPF.RET_K, SECCOMP_RET_ERRNO | ERRNO.EPERM);
  label(EACCES);
  op(BPF.RET_K, SECCOMP_RET_ERRNO | ERRNO.EACCES);
  label(EAFNOSUPPORT);
  op(BPF.RET_K, SECCOMP_RET_ERRNO | ERRNO.EAFNOSUPPORT);
  label(ENOSYS);
  op(BPF.RET_K, SECCOMP_RET_ERRNO | ERRNO.ENOSYS);
  return assemble(d);
}

/** Classic BPF jumps are 8-bit and forward only. */
const MAX_JUMP = 255;

function assemble(draft: readonly Draft[]): Insn[] {
  const at = new Map<string, number>();
  let n = 0;
  for (const x of draft) {
    if ("label" in x) at.set(x.label, n);
    else n += 1;
  }
  const out: Insn[] = [];
  for (const x of draft) {
    if ("label" in x) continue;
    const here = out.length;
    const offset = (t: Target | undefined): number => {
      if (t === undefined) return 0;
      const to = typeof t === "number" ? here + 1 + t : at.get(t);
      if (to === undefined)
        throw new Error(`seccomp.ts: jump to unknown label ${t}; define it in instructions()`);
      const off = to - here - 1;
      if (off < 0 || off > MAX_JUMP)
        throw new Error(`seccomp.ts: jump from ${here} to ${to} out of range; reorder instructions()`);
      return off;
    };
    const [code, , , k] = x.insn;
    out.push([code, offset(x.jt), offset(x.jf), k]);
  }
  return out;
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
