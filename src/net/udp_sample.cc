#include "net/udp_sample.h"

#include <netinet/in.h>

#include "net/udp_senders.h"

namespace gpudoctor {

UdpSample TakeUdpSample(const RootFs& fs) {
  UdpSample s;
  if (auto udp = DumpInetSockets(IPPROTO_UDP); udp.ok()) {
    s.sockets = std::move(*udp);
    s.udp_ok = true;
  }
  if (auto raw = DumpInetSockets(IPPROTO_RAW); raw.ok()) {
    s.sockets.insert(s.sockets.end(), raw->begin(), raw->end());
    s.raw_supported = true;
  }
  std::string dir =
      RootFs::Exists(fs.ProcPath("thread-self/net/snmp")) ? "thread-self/net/" : "net/";
  if (auto text = fs.ReadProc(dir + "snmp", 64 * 1024); text.ok()) {
    s.counters_ok = ParseSnmpCounters(*text, s.counters, kUdpSenderCounters).ok();
  }
  if (auto text = fs.ReadProc(dir + "snmp6", 64 * 1024); text.ok()) {
    (void)ParseSnmp6Counters(*text, s.counters, kUdpSenderCounters);
  }
  s.at = SteadyClock::now();
  return s;
}

UdpTrafficFacts UdpFactsBetween(const UdpSample& before, const UdpSample& after,
                                const std::vector<ScannedProcess>& processes,
                                const std::vector<ScannedProcess>* processes_before) {
  UdpSenderInputs in;
  in.samples = {&before.sockets, &after.sockets};
  in.processes = &processes;
  in.processes_before = processes_before;
  if (before.counters_ok && after.counters_ok) {
    in.counters_before = &before.counters;
    in.counters_after = &after.counters;
  }
  in.window_s = std::chrono::duration<double>(after.at - before.at).count();
  in.raw_supported = after.raw_supported;
  return CollectUdpSenders(in);
}

}  // namespace gpudoctor
