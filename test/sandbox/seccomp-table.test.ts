/**
 * The seccomp program run through a small classic-BPF interpreter: for each known ABI, the
 * allow/deny table per system call and argument (docs/safety.md "Shell containment").
 */
import { describe, expect, it } from "vitest";
import {
  AF,
  CLONE_NEWUSER,
  ERRNO,
  SECCOMP_ABIS,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SOCK,
  seccompProgram,
} from "../../src/sandbox/seccomp.js";

type Insn = [number, number, number, number];

function decode(buf: Buffer): Insn[] {
  const out: Insn[] = [];
  for (let o = 0; o < buf.length; o += 8)
    out.push([buf.readUInt16LE(o), buf[o + 2]!, buf[o + 3]!, buf.readUInt32LE(o + 4)]);
  return out;
}

/** Runs the program on one `struct seccomp_data` (nr, arch, low words of args). */
function run(prog: Insn[], nr: number, arch: number, args: number[] = []): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((a, i) => {
    data.writeUInt32LE(a >>> 0, 16 + 8 * i);
  });
  let acc = 0;
  for (let pc = 0; pc < prog.length; ) {
    const [code, jt, jf, k] = prog[pc]!;
    switch (code) {
      case 0x20:
        acc = data.readUInt32LE(k);
        pc += 1;
        break;
      case 0x54:
        acc = (acc & k) >>> 0;
        pc += 1;
        break;
      case 0x15:
        pc += 1 + (acc === k ? jt : jf);
        break;
      case 0x35:
        pc += 1 + (acc >= k ? jt : jf);
        break;
      case 0x45:
        pc += 1 + ((acc & k) !== 0 ? jt : jf);
        break;
      case 0x06:
        return k;
      default:
        throw new Error(`unknown opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error("the program ran off its end");
}

const ALLOW = SECCOMP_RET_ALLOW;
const err = (e: number) => SECCOMP_RET_ERRNO | e;
const AF_PACKET = 17;
const AF_BLUETOOTH = 31;
const NETLINK_ROUTE = 0;
const NETLINK_SOCK_DIAG = 4;
const NETLINK_KOBJECT_UEVENT = 15;
const NETLINK_NETFILTER = 12;
const CLONE_VM_VFORK = 0x4100 | 17;
const CLONE_NEWNS = 0x20000;
const OPENAT = { x64: 257, arm64: 56 } as Record<string, number>;

describe.each(Object.entries(SECCOMP_ABIS))("seccomp table on %s", (arch, abi) => {
  const p = seccompProgram(arch);
  if (!p.ok) throw new Error(p.reason);
  const prog = decode(p.program);
  const call = (nr: number, ...args: number[]) => run(prog, nr, abi.auditArch, args);

  it("every jump lands inside the program, and it ends in a return", () => {
    prog.forEach(([c, jt, jf], i) => {
      if ((c & 0x07) === 0x05) expect(i + 1 + Math.max(jt, jf)).toBeLessThan(prog.length);
    });
    expect(prog.at(-1)![0]).toBe(0x06);
  });

  it("socket: AF_INET, AF_INET6 and NETLINK_ROUTE only; AF_UNIX EACCES, the rest EAFNOSUPPORT", () => {
    expect(call(abi.socket, AF.INET, SOCK.STREAM, 0)).toBe(ALLOW);
    expect(call(abi.socket, AF.INET6, SOCK.DGRAM | SOCK.CLOEXEC, 0)).toBe(ALLOW);
    expect(call(abi.socket, AF.NETLINK, 3, NETLINK_ROUTE)).toBe(ALLOW);
    expect(call(abi.socket, AF.UNIX, SOCK.STREAM, 0)).toBe(err(ERRNO.EACCES));
    expect(call(abi.socket, AF.UNIX, SOCK.DGRAM, 0)).toBe(err(ERRNO.EACCES));
    for (const proto of [NETLINK_SOCK_DIAG, NETLINK_KOBJECT_UEVENT, NETLINK_NETFILTER])
      expect(call(abi.socket, AF.NETLINK, 3, proto)).toBe(err(ERRNO.EAFNOSUPPORT));
    for (const af of [AF.VSOCK, AF_PACKET, AF_BLUETOOTH, 0, 0xffff])
      expect(call(abi.socket, af, SOCK.STREAM, 0)).toBe(err(ERRNO.EAFNOSUPPORT));
  });

  it("socketpair: AF_UNIX stream and seqpacket (with flags) only; datagram refused", () => {
    for (const t of [SOCK.STREAM, SOCK.SEQPACKET])
      for (const f of [0, SOCK.NONBLOCK, SOCK.CLOEXEC, SOCK.NONBLOCK | SOCK.CLOEXEC])
        expect(call(abi.socketpair, AF.UNIX, t | f, 0)).toBe(ALLOW);
    expect(call(abi.socketpair, AF.UNIX, SOCK.DGRAM, 0)).toBe(err(ERRNO.EACCES));
    expect(call(abi.socketpair, AF.UNIX, SOCK.DGRAM | SOCK.CLOEXEC, 0)).toBe(err(ERRNO.EACCES));
    // A stray bit beside the type matches no allowed type.
    expect(call(abi.socketpair, AF.UNIX, SOCK.STREAM | 0x100, 0)).toBe(err(ERRNO.EACCES));
    expect(call(abi.socketpair, AF.VSOCK, SOCK.STREAM, 0)).toBe(err(ERRNO.EAFNOSUPPORT));
  });

  it("the keyring calls are refused", () => {
    for (const nr of [abi.addKey, abi.requestKey, abi.keyctl])
      expect(call(nr, 0, 0, 0)).toBe(err(ERRNO.EPERM));
  });

  it("nested user namespaces are refused; other clone and unshare flags pass; clone3 falls back", () => {
    expect(call(abi.unshare, CLONE_NEWUSER)).toBe(err(ERRNO.EPERM));
    expect(call(abi.unshare, CLONE_NEWUSER | CLONE_NEWNS)).toBe(err(ERRNO.EPERM));
    expect(call(abi.clone, CLONE_NEWUSER | 17)).toBe(err(ERRNO.EPERM));
    expect(call(abi.unshare, CLONE_NEWNS)).toBe(ALLOW);
    expect(call(abi.clone, CLONE_VM_VFORK)).toBe(ALLOW);
    expect(call(abi.clone3, 0, 88)).toBe(err(ERRNO.ENOSYS));
    expect(call(abi.setns, 3, 0)).toBe(err(ERRNO.EPERM));
  });

  it("io_uring_setup and other ABIs are refused; an ordinary call is allowed", () => {
    expect(call(abi.ioUringSetup, 8, 0)).toBe(err(ERRNO.EPERM));
    expect(call(OPENAT[arch]!, 0, 0)).toBe(ALLOW);
    expect(run(prog, abi.socket, 0x40000003, [AF.UNIX])).toBe(err(ERRNO.EPERM)); // i386
    if (abi.x32Bit) expect(call(0x40000000 | abi.socket, AF.UNIX)).toBe(err(ERRNO.EPERM));
  });
});

describe("system call numbers", () => {
  it("match the kernel headers on this machine where they are installed", async () => {
    const fs = await import("node:fs");
    const headers: [string, string, string][] = [
      ["x64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", ""],
      ["arm64", "/usr/include/asm-generic/unistd.h", ""],
    ];
    const names: Record<string, string> = {
      socket: "socket",
      socketpair: "socketpair",
      ioUringSetup: "io_uring_setup",
      addKey: "add_key",
      requestKey: "request_key",
      keyctl: "keyctl",
      unshare: "unshare",
      clone: "clone",
      clone3: "clone3",
      setns: "setns",
    };
    let checked = 0;
    for (const [arch, file] of headers) {
      if (!fs.existsSync(file)) {
        console.log(`seccomp numbers: ${file} not installed, ${arch} not checked against it`);
        continue;
      }
      const text = fs.readFileSync(file, "utf8");
      const abi = SECCOMP_ABIS[arch] as unknown as Record<string, number>;
      for (const [key, name] of Object.entries(names)) {
        const m = new RegExp(`#define __NR_${name}\\s+(\\d+)\\b`).exec(text);
        expect(m, `${name} in ${file}`).not.toBeNull();
        expect(abi[key], `${arch} ${name}`).toBe(Number(m![1]));
        checked += 1;
      }
    }
    if (checked === 0) console.log("seccomp numbers: no kernel headers installed, nothing checked");
  });
});
