#!/usr/bin/env python3
"""Writes a synthetic kernel log (dmesg shape) of SIZE bytes to PATH: ordinary kernel noise with
about 0.1% NVRM lines (Xids of several codes and GPUs, companion lines) and a few AER / link /
OOM lines. LINK_SHARE (default 0.02) is the share of NIC link up/down lines in the
noise, as on a host whose links flap or whose containers come and go (veth, bonding, mlx5, ixgbe,
e1000e, bnxt_en, igb shapes). Used by bench/kmsg_scan.sh.
XID_SHARE (default 0.001) is the share of NVRM lines; 0.99 is an Xid storm (a GPU logging an Xid
per fault, thousands a second), where every line is parsed and aggregated.
Usage: kmsg_gen.py PATH SIZE_BYTES [LINK_SHARE] [XID_SHARE]"""
import random
import sys

NOISE = [
    "usb 1-1.2: new high-speed USB device number {n} using xhci_hcd",
    "audit: type=1400 audit(1700000000.{n}:45): apparmor=\"STATUS\" operation=\"profile_load\" "
    "profile=\"unconfined\" name=\"snap-update-ns.lxd\" pid={n} comm=\"apparmor_parser\"",
    "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
    "IPv6: ADDRCONF(NETDEV_CHANGE): enp65s0f0: link becomes ready",
    "systemd[1]: Started Session {n} of User slurm.",
    "docker0: port 3(veth{n}) entered forwarding state",
    "nvme nvme0: 64/0/0 default/read/poll queues",
    "perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79800",
    "br-4f1c: port 2(vethab{n}) entered disabled state",
    "mlx5_core 0000:41:00.0: mlx5_pcie_event:301:(pid {n}): PCIe slot advertised sufficient power (75W).",
    "EDAC skx: ECC is enabled",
    "kauditd_printk_skb: 12 callbacks suppressed",
    "NFSD: Using UMH upcall client tracking operations.",
    "Lockdown: systemd: /dev/mem,kmem,port is restricted; see man kernel_lockdown.7",
    "ACPI: PCI Interrupt Link [LNKC] enabled at IRQ 11",
    "x86/split lock detection: #AC: crashing the kernel on kernel split_locks and warning on user-space split_locks",
]
NVRM = [
    "NVRM: Xid (PCI:0000:{b}:00): 13, pid={n}, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
    "NVRM: Xid (PCI:0000:{b}:00): 31, pid={n}, name=torchrun, Ch 00000013, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x7fd2_11c00000. Fault is of type FAULT_PTE ACCESS_TYPE_VIRT_WRITE",
    "NVRM: Xid (PCI:0000:{b}:00): 95, pid={n}, name=python, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No",
    "NVRM: Xid (PCI:0000:{b}:00): 119, pid={n}, name=nvidia-smi, Timeout waiting for RPC from GSP0! Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
    "NVRM: GPU at PCI:0000:{b}:00: GPU-4a1e7b52-3b8c-6f9d-2e17-a0c5d3f81b{b}",
    "NVRM: GPU0 RPC history (CPU -> GSP):",
]
# NIC drivers' link state lines: each passes the scanner's "Link " prefilter and is parsed.
LINK = [
    "ixgbe 0000:3b:00.0 enp59s0f0: NIC Link is Up 10 Gbps, Flow Control: RX/TX",
    "ixgbe 0000:3b:00.0 enp59s0f0: NIC Link is Down",
    "e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: None",
    "e1000e 0000:00:1f.6 eno1: NIC Link is Down",
    "mlx5_core 0000:41:00.0 enp65s0f0np0: Link up",
    "mlx5_core 0000:41:00.0 enp65s0f0np0: Link down",
    "bnxt_en 0000:c1:00.0 ens1f0np0: NIC Link is Up, 25000 Mbps full duplex, Flow control: ON - receive & transmit",
    "bnxt_en 0000:c1:00.0 ens1f0np0: NIC Link is Down",
    "igb 0000:02:00.0 eno2: igb: eno2 NIC Link is Up 1000 Mbps Full Duplex, Flow Control: RX",
    "bond0: (slave enp59s0f0): link status definitely down, disabling slave",
    "bond0: (slave enp59s0f0): link status definitely up, 10000 Mbps full duplex",
    "IPv6: ADDRCONF(NETDEV_CHANGE): veth{n}: link becomes ready",
]
RARE = [
    "nvidia 0000:{b}:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
    "mlx5_core 0000:41:00.0 ibp65s0: Link down",
    "mlx5_core 0000:41:00.0 ibp65s0: Link up",
    "Out of memory: Killed process {n} (python3) total-vm:91234560kB, anon-rss:61440000kB, file-rss:8192kB, shmem-rss:0kB, UID:1001 pgtables:130000kB oom_score_adj:0",
]

def block(rng, t0, target, link_share, xid_share):
    out, size, t = [], 0, t0
    buses = ["18", "2a", "3b", "5d", "9a", "ab", "ba", "db"]
    while size < target:
        r = rng.random()
        if r < xid_share:
            # A storm is Xid lines; the usual mix also has the GPU's companion lines.
            tpl = rng.choice(NVRM[:4] if xid_share > 0.5 else NVRM)
        elif r < xid_share + 0.0002:
            tpl = rng.choice(RARE)
        elif r < xid_share + 0.0002 + link_share:
            tpl = rng.choice(LINK)
        else:
            tpl = rng.choice(NOISE)
        t += rng.random() * 0.01
        line = "[%12.6f] " % t + tpl.format(n=rng.randrange(100000), b=rng.choice(buses)) + "\n"
        out.append(line)
        size += len(line)
    return "".join(out), t

def main():
    path, total = sys.argv[1], int(sys.argv[2])
    link_share = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    xid_share = float(sys.argv[4]) if len(sys.argv) > 4 else 0.001
    rng = random.Random(42)
    chunk, t = block(rng, 1.0, 8 << 20, link_share, xid_share)
    written = 0
    with open(path, "w") as f:
        f.write("[    0.000000] Linux version 6.5.0-41-generic (buildd@lcy02-amd64-079)\n")
        while written < total:
            f.write(chunk)
            written += len(chunk)

if __name__ == "__main__":
    main()
