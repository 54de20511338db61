// Catalogue section: network layer — reachability, localisation, NICs, InfiniBand, bandwidth
// consumers, suspicious processes.
#include "rules/catalogue.h"

namespace gpudoctor {

const std::vector<CatalogueEntry>& NetCatalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"net.localize",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kContactProvider,
       "Where the network slowness is",
       "Compares the hosts the service depends on (targets) with other sites (references) and "
       "this host's own NICs. Verdict `local`: targets and references are all slow or lossy, so "
       "the problem is this host's network or uplink. Verdict `target`: only some targets are "
       "slow while references (or other targets) are fine, so look at that target or its path. "
       "Verdict `bandwidth`: this host's own NIC is saturated, which slows everything it talks "
       "to. Verdict `undecided`: one target is slow or lossy and there is nothing to compare it "
       "with (no reference, no other target). Slow or lossy means above the `net.latency.high` / "
       "`net.loss` warn thresholds. A finding lists only the next step of its own verdict.",
       {"`local`: check this host's NIC (`ip -s link`, `ethtool IFACE`), the uplink switch port "
        "and the default gateway; compare with a neighbour host in the same rack.",
        "`target`: test the path hop by hop: `mtr -rwc 20 TARGET`; check the target's own load.",
        "`bandwidth`: find the top talkers (`net.outbound.heavy`, `ss -tinp`, `iftop -i IFACE`) "
        "and throttle or move them.",
        "`undecided`: add a reference site to compare with (`--reference 1.1.1.1:443`, or "
        "`[network] references`) or a second target, and run the check again; meanwhile test "
        "the path hop by hop: `mtr -rwc 20 TARGET`."},
       {}},
      {"net.latency.high",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kContactProvider,
       "High round-trip time to a target",
       "The median round-trip time of the probes to a target (or the gateway) is high. Inside "
       "a cluster RTTs are well under a millisecond; tens of milliseconds mean queueing "
       "(bufferbloat on a saturated link), a long detour or an overloaded host.",
       {"Look at the path: `mtr -rwc 20 TARGET` (where does the RTT jump?).",
        "Check whether this host's NIC is saturated (`net.nic.saturated`) and what the "
        "references show (`net.localize`)."},
       {{"warn_rtt_ms", 100, "median RTT to a target or the gateway"},
        {"crit_rtt_ms", 500, "median RTT at which interactive use and RPCs break"},
        {"reference_warn_rtt_ms", 0,
         "median RTT at which a reference site counts as slow; 0: the targets' warn_rtt_ms, so a "
         "reference is judged like the targets it is compared with"}}},
      {"net.loss",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kContactProvider,
       "Packet loss to a target",
       "Probes to a target went unanswered. Partial loss slows TCP sharply (retransmits, "
       "congestion window collapse); 100% loss means the target is unreachable from here (down, "
       "firewalled, or the path is broken). A TCP target that answers with RST is reachable: "
       "only its port is closed.",
       {"Repeat by hand: `ping -c 20 TARGET` or `nc -vz HOST PORT`.",
        "Check the route and the next hop: `ip route get ADDRESS`, `mtr -rwc 20 TARGET`.",
        "If all targets are lost at once, check this host's link (`ip -s link`, `net.link`)."},
       {{"warn_loss_pct", 5, "share of probes lost (2 of the 40 sent by default)"},
        {"crit_loss_pct", 20, "share of probes lost that breaks the service"}}},
      {"net.target.jitter",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kContactProvider,
       "Unstable round-trip time to a target",
       "The round-trip times of the probes to a target vary a lot from one probe to the next "
       "(jitter: the mean absolute difference of consecutive RTTs, as RFC 3550 without "
       "smoothing, over the ICMP or TCP series). Queues that fill and drain (bufferbloat, a "
       "congested uplink, a busy virtual switch) or a host that answers late under load make "
       "it; it stalls RPCs and collective operations even when the median RTT looks fine.",
       {"Watch the RTT over time: `ping -i 0.05 -c 200 TARGET` (look at mdev) or `mtr -rwc 100 "
        "TARGET` (which hop adds the variation?).",
        "Check this host's NIC and queues: `net.nic.saturated`, `ip -s link`, `tc -s qdisc`.",
        "If only one target jitters, check its load (CPU, interrupts) and its path."},
       {{"warn_jitter_ms", 20,
         "mean difference of consecutive RTTs ([network] jitter_ms sets this too)"},
        {"crit_jitter_ms", 100, "jitter at which interactive use and RPC deadlines break"},
        {"min_replies", 10, "replies a series needs before its jitter is judged"}}},
      {"net.http.failing",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kRestartApp,
       "HTTP service failing",
       "Requests to a URL target (`http://` or `https://` in `[network] targets` or `--target`) "
       "failed: no connection (refused, unreachable), no answer within `[network] "
       "http_timeout_ms`, a TLS handshake or certificate error, a reply that was not HTTP, or a "
       "5xx status. The summary names the kind that happened most often in the series; 4xx is an "
       "answer (the service runs) and is shown but not judged. A finding lists only the next "
       "step of its own kind of failure.",
       {"`connect`: nothing accepts connections on that port: is the service running and "
        "listening (`ss -ltnp` on the server, `systemctl status SERVICE`)? If ICMP/TCP to the "
        "host is fine, it is the service, not the network; else check the path and firewall.",
        "`timeout`: the server accepted nothing or answered nothing in time: check its load and "
        "the backend it waits on (logs, `top`); compare with an ICMP/TCP target on the same host "
        "to tell a dead host from a stuck service.",
        "`tls`: inspect the handshake: `openssl s_client -connect HOST:PORT -servername HOST` "
        "(expired or self-signed certificate, wrong name, no common protocol). For an internal "
        "service with its own CA set `[network] http_tls_verify = false`.",
        "`protocol`: the server closed the connection or did not speak HTTP (wrong port, or "
        "https on an http port): `curl -v URL`.",
        "`http_5xx`: the application answers with server errors: read its logs; 502/503/504 "
        "from a proxy mean its upstream (backend) is down or slow.",
        "`other`: the request failed in a way not classified above (the evidence's `error` "
        "names it): reproduce it with `curl -v URL` from this host and read the message."},
       {{"warn_failed_pct", 20, "share of requests failed (1 of 5 by default)"},
        {"crit_failed_pct", 50, "share of requests failed that breaks the service"}}},
      {"net.http.slow",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kWatch,
       "HTTP service slow to answer",
       "The median time to first byte of a URL target is high. gpudoctor splits it into the TCP "
       "handshake (a network round trip), the TLS handshake and the server's own wait (request "
       "sent to first byte). Verdict `application`: the handshake is fast but the server takes "
       "long to answer, so the network is fine and the application or its backend is slow. "
       "Verdict `network`: the TCP handshake itself is slow (above `net.latency.high`), so look "
       "at the path first. Verdict `tls`: the TLS handshake takes longer than the server's own "
       "wait. "
       "A finding lists only the next step of its own verdict.",
       {"`application`: the network answers quickly: look at the service and its backend "
        "(its logs and latency metrics, database, upstream APIs, CPU and GC of the server); "
        "`curl -w '%{time_connect} %{time_starttransfer}\\n' -o /dev/null -s URL` reproduces "
        "the split.",
        "`network`: the TCP handshake is slow: test the path (`mtr -rwc 20 HOST`), see "
        "`net.latency.high` / `net.localize` for the same host.",
        "`tls`: the TLS handshake takes longer than the server's answer: check the server's "
        "TLS setup (OCSP stapling, certificate chain length, key size, session resumption) "
        "with `openssl s_client -connect HOST:PORT -servername HOST -status`."},
       {{"warn_ttfb_ms", 1000, "median time to first byte ([network] http_slow_ms sets this too)"},
        {"crit_ttfb_ms", 2500, "median time to first byte at which clients time out"}}},
      {"net.target.unresolved",
       Layer::kNetwork,
       Severity::kWarn,
       Action::kFixConfig,
       "Target name does not resolve",
       "A configured target or reference is a valid host name that could not be resolved at "
       "check time (no such name, or DNS did not answer in time). The target could not be "
       "probed.",
       {"Check resolution by hand: `getent hosts NAME`; look at /etc/resolv.conf and the DNS "
        "servers' reachability.",
        "If the name is wrong, fix `[network] targets` in the config."},
       {}},
      {"net.target.unfinished",
       Layer::kNetwork,
       Severity::kInfo,
       Action::kNone,
       "Target not measured in time",
       "The probe series of a target or reference was still running when the check's deadline "
       "came (a short --deadline with a long probe interval or timeout, or very many targets). "
       "Nothing is known about that host: this is neither a DNS failure nor packet loss.",
       {"Give the check more time (`--deadline`) or shorten the series: `[network] probe_count`, "
        "`probe_interval_ms`, `probe_timeout_ms`.",
        "Probe that host alone: `gpudoctor check --probes reachability --target NAME`."},
       {}},
      {"net.nic.saturated",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kContactProvider,
       "NIC near its link speed",
       "Received or transmitted throughput over the sampling window is close to the link speed "
       "the driver reports. Everything this host sends or receives queues behind it: latency "
       "rises and throughput of every flow drops.",
       {"Find the top talkers: see `net.outbound.heavy`, or `ss -tinp` and `iftop -i IFACE`.",
        "Check whether the link negotiated below its rated speed: `ethtool IFACE`.",
        "Spread traffic (bonding, a second NIC) or schedule bulk copies off-peak."},
       {{"warn_util_pct", 90,
         "max(rx, tx) throughput as a share of the capacity: the bandwidth plan when set "
         "([network] plan_mbps / plan_mbps_nics), else the link speed"},
        {"crit_util_pct", 98, "share of the capacity at which queues overflow"},
        {"plan_mbps", 0,
         "bandwidth bought for this host in Mb/s ([network] plan_mbps; 0: judge against the link "
         "speed). Hosted servers often buy 100 Mb/s on a 10 Gb/s port"}}},
      {"net.clients.degraded",
       Layer::kNetwork,
       Severity::kWarn,
       Action::kContactProvider,
       "Some client networks see a slow server",
       "From the server's own TCP connections (no setup): peers are grouped by network (/24, "
       "/64) and compared. When a few networks see high round-trip times or retransmissions "
       "while the rest are fine, the problem is on their path (an ISP, a region, a VPN), not "
       "this server; when nearly all of them are degraded, it points at this server or its "
       "uplink. With fewer networks than min_networks (one or two client networks), each network "
       "is compared with its own history instead: its RTT and retransmissions now against the "
       "median of its stored samples (`gpudoctor watch` keeps the 8 busiest networks per sockets "
       "sample). Only TCP peers are judged: the kernel's sock_diag reports no RTT for UDP "
       "sockets, so game and streaming traffic over UDP is not measured here (ask those users to "
       "run `gpudoctor netcheck` from their side).",
       {"`some`: Only some networks: trace from the server to one of them (`mtr -rwc 50 HOST`) and "
        "compare with a healthy one; contact that network's provider with the numbers.",
        "`everyone`: Everyone: check this host's NIC and uplink (net.nic.saturated, "
        "net.nic.errors), the "
        "server's CPU and the service itself.",
        "`own_history`: Slower than usual for this network: compare the times it was fine with now "
        "(`gpudoctor history --metric gpudoctor_net_client_rtt_seconds --since 7d`), then trace "
        "to it (`mtr -rwc 50 HOST`) and check this host's uplink (net.nic.saturated).",
        "See the connections: `ss -ti state established` shows rtt and retrans per connection."},
       {{"warn_rtt_ms", 150, "median smoothed RTT of a client network that counts as degraded"},
        {"warn_retrans_pct", 5, "retransmitted share of sent segments that counts as degraded"},
        {"min_networks", 3, "client networks needed before they are compared"},
        {"everyone_pct", 80, "share of degraded networks that means everyone is affected"},
        {"history_rtt_factor", 2,
         "against its own history: median RTT at least this many times the network's usual one"},
        {"history_rtt_margin_ms", 30, "... and at least this many ms above it"},
        {"history_retrans_pct", 3,
         "against its own history: retransmitted share this many points above the usual one"},
        {"history_min_samples", 20, "stored samples of a network before its history is a baseline"},
        {"history_days", 7, "how far back a network's baseline reaches"}}},
      {"net.nic.capacity_unknown",
       Layer::kNetwork,
       Severity::kInfo,
       Action::kFixConfig,
       "NIC saturation cannot be judged",
       "The interface carries traffic but reports no link speed (virtio and other virtual NICs) "
       "and no bandwidth plan is configured, so gpudoctor cannot tell whether it is saturated.",
       {"Set the bandwidth you pay for: `[network] plan_mbps = 100` (all NICs) or `plan_mbps_nics "
        "= [\"eth0=100\"]` in /etc/gpudoctor/gpudoctor.toml.",
        "Ask the provider for the plan; measure with `iperf3` against a host in the same site."},
       {}},
      {"net.nic.errors",
       Layer::kNetwork,
       Severity::kWarn,
       Action::kWatch,
       "NIC errors or drops rising",
       "The interface's error or drop counters grew during the sampling window. Errors point at "
       "the physical layer (cable, transceiver, switch port: CRC/frame errors); drops at "
       "overflowing rings or buffers (the host cannot keep up) or filtered traffic.",
       {"See which counter grows: `ip -s -s link show IFACE`, `ethtool -S IFACE | grep -iE "
        "'err|drop|discard'`.",
        "CRC/frame errors: reseat or replace the cable/transceiver, check the switch port.",
        "rx drops: raise ring sizes (`ethtool -G`), check IRQ affinity and CPU load."},
       {{"warn_errors", 1, "rx+tx errors within the window"},
        {"warn_drops_per_s", 100, "rx+tx drops per second over the window"}}},
      {"net.ib.port",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kContactProvider,
       "InfiniBand port not active",
       "An InfiniBand/RoCE port is not in state ACTIVE (DOWN, INIT, ARMED), or its physical "
       "state is not LinkUp. RDMA traffic (NCCL, storage) over it fails or falls back to TCP.",
       {"Check `ibstat` / `ibv_devinfo` for the port; INIT means no subnet manager answered "
        "(check opensm / the fabric manager).",
        "Check cable and switch port; `ibdiagnet` or the switch's port counters."},
       {},
       {.reboot_fixable = true}},
      {"net.ib.rate",
       Layer::kNetwork,
       Severity::kWarn,
       Action::kInspectHardware,
       "InfiniBand port below its expected rate",
       "An ACTIVE InfiniBand port runs at a lower rate than `[network] ib_min_rate_gbps`: the "
       "link trained at fewer lanes or a lower speed (a bad cable, transceiver or switch port, "
       "or a port in the wrong mode). Every collective that spans this node runs at its pace, "
       "so Slurm drains it (as NHC's check_hw_ib does) until the link is fixed. RoCE ports "
       "(link layer Ethernet) are not judged here.",
       {"See the negotiated width and speed: `ibstat DEV PORT` (Rate, Link width), or "
        "`cat /sys/class/infiniband/DEV/ports/N/rate`.",
        "Reseat or replace the cable or transceiver; check the switch port's configuration and "
        "counters.",
        "After a fix, bounce the port (or reboot) so that the link trains again."},
       {{"min_rate_gbps", 0,
         "an ACTIVE InfiniBand port below this rate in Gb/s counts as degraded; 0: not checked "
         "(set it with [network] ib_min_rate_gbps)"}}},
      {"net.ib.errors",
       Layer::kNetwork,
       Severity::kCrit,
       Action::kContactProvider,
       "InfiniBand error counters rising",
       "Error counters of an InfiniBand port grew during the sampling window: symbol errors and "
       "link error recoveries point at the cable or optics, link_downed at a link that failed "
       "recovery, receive errors and transmit discards at congestion or a bad peer.",
       {"Read the counters: `perfquery -x` or `cat /sys/class/infiniband/DEV/ports/N/counters/*`.",
        "Rising symbol_error / link_error_recovery: replace the cable or transceiver.",
        "If link_downed grows, keep collective jobs off this node (they hang or fail); a site "
        "that drains on it sets `[finding.\"net.ib.errors\"] action = \"drain_reset\"`."},
       {{"warn_errors", 1, "growth of the error counters within the window"},
        {"crit_link_downed", 1, "link_downed growth within the window"}}},
      {"net.outbound.heavy",
       Layer::kNetwork,
       Severity::kWarn,
       Action::kWatch,
       "A process sends a lot of traffic",
       "One process sent (acknowledged) many bytes over TCP during the sampling window. That is "
       "normal for a data loader, a checkpoint upload or NCCL over TCP, but when the link is "
       "saturated it is the one to look at; an unknown process sending to unknown peers is a "
       "reason to inspect the host (a compromised server that sends traffic out eats the "
       "bandwidth).",
       {"Check what it is: `ls -l /proc/PID/exe`, `ps -o user,lstart,args -p PID`.",
        "See its connections: `ss -tinp | grep pid=PID`; are the peers expected?",
        "Throttle bulk transfers (rsync --bwlimit, tc) or move them off-peak."},
       {{"warn_tx_bytes_per_s", 50e6, "bytes per second sent by one process over the window"},
        {"warn_plan_share_pct", 50,
         "with a bandwidth plan ([network] plan_mbps): share of the plan one process may send "
         "before it counts as heavy"}}},
      {"net.outbound.udp",
       Layer::kNetwork,
       Severity::kWarn,
       Action::kWatch,
       "A process floods UDP or raw packets out",
       "This host sends many UDP datagrams (or raw/ICMP packets) per second, and the process "
       "holding those sockets is named. A compromised server is often used for UDP floods; a "
       "game or streaming server, a DNS server or a UDP-based transfer tool can also send that "
       "much. The kernel keeps no byte counters per UDP or raw socket, so the rate is the "
       "namespace's (/proc/net/snmp) and the sender is found by socket ownership, peers and "
       "send-queue sizes (sock_diag); the evidence states the method.",
       {"Check what it is: `ls -l /proc/PID/exe`, `ps -o user,lstart,args -p PID`.",
        "See its sockets and peers: `ss -uanp | grep pid=PID` (`ss -wanp` for raw sockets).",
        "If it is not yours, stop the traffic first (`kill -STOP PID`, or block it with the "
        "firewall), keep evidence and run `gpudoctor scan`."},
       {{"warn_datagrams_per_s", 20000, "UDP datagrams per second sent by this host"},
        {"warn_other_packets_per_s", 20000,
         "IPv4 packets per second that are neither TCP nor UDP (raw sockets, ICMP)"}}},
      {"proc.suspicious",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "Process worth inspecting",
       "A process shows signs often seen with cryptocurrency miners or other unwanted software: "
       "a known miner name, connections to common stratum ports (3333, 4444, 5555, 7777, "
       "14433, 14444, 45560, 45700) or listening on one (a mining proxy), an executable under "
       "/tmp, /var/tmp or /dev/shm, an executable deleted from disk while running (these "
       "static signs count even while the process is idle), sustained high CPU together "
       "with persistent outbound connections, or a GPU in use by a user outside the known "
       "service accounts (`[network] known_gpu_users`). These are reasons to look, not proof: "
       "a process that was upgraded while running also shows a deleted executable. Two signs are "
       "weak and never reported alone: a deleted executable, and high CPU with persistent "
       "outbound connections (every rank of a multi-node training job talking to its master "
       "port, and every data loader streaming from S3, looks exactly like that). Temporary "
       "directories are judged by what the path says: under /dev/shm or below a hidden (dot) "
       "name (/tmp/.x/, /tmp/.ICE-unix/: where dropped malware hides) it is a sign on its own "
       "(warn); any other temporary path alone (a developer's test build in /tmp looks the same "
       "as a dropped binary) is a note (info) and warns next to another sign; and what build "
       "tools and runtimes create and run there is no sign at all: `go run`/`go test` "
       "(/tmp/go-build<N>/), an AppImage's own mount (/tmp/.mount_*) and pip's build "
       "environments (/tmp/pip-build-env-*, pip-install-*, pip-req-build-*), also inside a "
       "systemd PrivateTmp (/tmp/systemd-private-*/tmp/, judged as the service sees its /tmp). "
       "A miner's name or pool port is reported wherever the executable lies, and `gpudoctor "
       "scan` still puts every temporary-directory executable through ClamAV.",
       {"Inspect it: `ls -l /proc/PID/exe /proc/PID/cwd`, `ps -o user,lstart,args -p PID`, "
        "`ss -tnp | grep pid=PID`.",
        "A busy process with outbound connections alone is not reported (training ranks and "
        "data loaders look the same); when it is listed, judge the other signs first.",
        "Compare the binary with the package: `dpkg -S` / `rpm -qf` on the path, or hash it.",
        "If it is unknown, isolate the host and follow the incident process before killing it "
        "(keep evidence: `cp /proc/PID/exe /root/evidence.bin`).",
        "Once the evidence is kept (binary, `ss -tanp`, crontabs, systemd units, "
        "~/.ssh/authorized_keys, ideally a disk image): scan (`rkhunter --check`, `chkrootkit`, "
        "`clamscan -ri /`), then reinstall the node from a known-good image and rotate its "
        "credentials and keys; do not trust a cleaned system."},
       {{"warn_cpu_pct", 80,
         "CPU in percent of one core that, with outbound connections, is a weak sign (reported "
         "only together with another sign)"}}},
      {"scan.malware",
       Layer::kSoftware,
       Severity::kCrit,
       Action::kDrainReset,
       "ClamAV found malware in a running executable",
       "`gpudoctor scan` ran ClamAV on the executables of flagged processes (a known miner name, "
       "an executable under /tmp, /var/tmp or /dev/shm, or deleted from disk) and of every GPU "
       "process, and it matched a signature. The host is compromised: whoever ran it may have "
       "left other ways in (keys, crontabs, replaced binaries), so a cleaned system cannot be "
       "trusted.",
       {"Isolate the host (firewall it, drain it) and keep evidence before killing anything: "
        "`gpudoctor bundle`, `cp /proc/PID/exe /root/evidence.bin`, `ss -tanp`.",
        "Confirm a fresh backup exists (`host.backup.stale` clear in `gpudoctor check`) or copy "
        "the data you need off the host now.",
        "Save the data and reinstall the node from a known-good image; rotate its credentials, "
        "SSH keys and tokens; do not trust a cleaned system."}},
      {"scan.packages.changed",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "System binaries differ from their packages",
       "`dpkg --verify` (or `debsums -s`) found files under /usr/bin, /usr/sbin, /bin, /sbin or "
       "the library directories whose content or attributes differ from what their package "
       "installed. A local build installed over a packaged file does this too; an attacker "
       "replacing `ps`, `ss` or `ls` to hide a miner does exactly this.",
       {"Find the package of each file (`dpkg -S PATH`) and compare the file with a fresh copy "
        "(`apt-get download PKG`, `dpkg-deb -x`); reinstall the package (`apt-get install "
        "--reinstall PKG`) if nobody changed it on purpose.",
        "If system tools were replaced, treat the host as compromised: keep evidence "
        "(`gpudoctor bundle`), check the backup, then save the data and reinstall."}},
      {"scan.ssh_keys.changed",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "SSH authorized_keys changed recently",
       "An authorized_keys file of root or a user under /home was modified since the given "
       "time. Adding a key is how intruders keep their way in after the first break-in.",
       {"Read the file and remove every key you cannot name: `cat -n PATH`.",
        "Check who logged in around that time: `last -Fw`, `journalctl -u ssh --since TIME`."}},
      {"scan.cron.changed",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "Crontabs changed recently",
       "/etc/crontab, a file under /etc/cron.d or a user crontab (/var/spool/cron) was modified "
       "since the given time. Miners reinstall themselves from cron after being killed.",
       {"Read each listed file (`crontab -l -u USER` for user crontabs) and remove entries you "
        "did not add, especially ones that download (`curl`, `wget`) or run from /tmp.",
        "Kill the process only after the cron entry is gone, or it comes back."}},
      {"scan.not_checked",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kFixConfig,
       "A scan step could not run",
       "A step of `gpudoctor scan` did not run to the end: its tool is not installed, failed "
       "(ClamAV without a virus database), or ran out of time. Nothing is known about what it "
       "would have checked: this is not a clean result. As with check's probes, a tool that is "
       "not installed (or switched off with --tool-timeout 0) is a note (info; exit 0 unless "
       "something else is found) that says how to install it, like a skipped probe; a tool that "
       "is there but failed or ran out of time is a warning (exit 1), like a failed probe.",
       {"Install the tool (`apt-get install clamav debsums`; `freshclam` for the database) or "
        "give it more time (`--tool-timeout SECONDS`), then run `gpudoctor scan` again."}},
      {"scan.clean",
       Layer::kSoftware,
       Severity::kInfo,
       Action::kNone,
       "A scan step found nothing",
       "A step of `gpudoctor scan` ran to the end and found nothing; the evidence says what was "
       "checked and how. Signatures only find known malware, and files changed before the "
       "`--since` time are not listed.",
       {"Nothing to do for this step; run `gpudoctor scan --since 7d` regularly (after every "
        "proc.suspicious or net.outbound.udp finding too) and keep the reports."}},
  };
  return entries;
}

}  // namespace gpudoctor
