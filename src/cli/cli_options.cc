#include "cli/cli_options.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "cli/commands.h"
#include "cli/flag_scopes.h"
#include "core/arg_walker.h"
#include "core/strings.h"

namespace gpudoctor {

bool CliOptions::Has(std::string_view sw) const {
  return std::find(switches.begin(), switches.end(), sw) != switches.end();
}

std::optional<std::string> CliOptions::Value(std::string_view flag) const {
  auto it = values.find(flag);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> CliOptions::All(std::string_view flag) const {
  std::vector<std::string> v;
  for (const auto& [name, value] : multi_values) {
    if (name == flag) v.push_back(value);
  }
  return v;
}

Result<CliOptions> ParseCommandLine(int argc, const char* const* argv) {
  CliOptions o;
  const auto& table = FlagTable();
  auto find = [&](std::string_view name) {
    return std::find_if(table.begin(), table.end(),
                        [&](const FlagSpec& f) { return f.name == name; });
  };
  ArgHandlers h;
  h.positional = [&](std::string_view arg) {
    if (o.command.empty()) {
      o.command = std::string(arg);
    } else {
      o.positional.emplace_back(arg);
    }
  };
  h.value_name_of = [&](std::string_view name) -> std::optional<std::string_view> {
    auto it = find(name);
    if (it == table.end()) return std::nullopt;
    return it->value_name;
  };
  std::vector<std::string_view> seen;
  h.flag = [&](std::string_view name, std::optional<std::string_view> value) {
    if (!value) o.switches.emplace_back(name);
    seen.push_back(find(name)->name);
    return find(name)->apply(value.value_or(""), o);
  };
  if (Status s = WalkArgs(argc, argv, h, "see gpudoctor --help"); !s.ok()) return s;
  // A flag of another command is refused, never silently ignored (`check --ticks 5`).
  bool known_command = false;
  for (std::string_view c : CommandNames()) known_command = known_command || c == o.command;
  if (known_command && !o.help) {
    for (std::string_view flag : seen) {
      if (FlagAppliesTo(flag, o.command)) continue;
      return InvalidArgument(std::string(flag) + " is not a flag of `" + o.command +
                             "` (it is one of: " + std::string(FlagCommands(flag).value_or("")) +
                             "); see gpudoctor help " + o.command);
    }
  }
  return o;
}

std::vector<std::string_view> CommandNames() {
  std::vector<std::string_view> names;
  for (const CommandEntry& c : CommandTable()) names.push_back(c.name);
  names.push_back("plan");  // parses its own flags (plan_command.cc)
  return names;
}

std::string FlagLines(std::string_view command) {
  std::string u;
  for (const auto& f : FlagTable()) {
    if (!command.empty() && !FlagAppliesTo(f.name, command)) continue;
    std::string left = "  " + std::string(f.name);
    if (!f.value_name.empty()) left += " " + std::string(f.value_name);
    if (left.size() < 34) {
      left.resize(34, ' ');
    } else {
      left += "  ";
    }
    u += left + std::string(f.help) + "\n";
  }
  return u;
}

namespace {

// What a command takes besides its flags, as its usage line shows it ("" for nothing).
std::string_view OperandsOf(std::string_view command) {
  static constexpr std::pair<std::string_view, std::string_view> kOperands[] = {
      {"explain", "ID | xid N"},
      {"logs", "FILE|-"},
      {"compare", "GOOD [NOW]"},
      {"plan", "kv|batching"},
      {"fleet", "[card SERIAL | slot NODE:BUS]"},
      {"report", "bandwidth"},
      {"mark", "step"},
      {"ack", "ID"},
      {"silence", "ID"},
      {"netcheck", "SERVER[:PORT]"},
      {"help", "COMMAND"},
  };
  for (const auto& [name, operands] : kOperands) {
    if (name == command) return operands;
  }
  return "";
}

}  // namespace

std::string CommandUsageText(std::string_view command) {
  std::string operands(OperandsOf(command));
  return "usage: gpudoctor " + std::string(command) + (operands.empty() ? "" : " " + operands) +
         " [flags]\n\nflags of " + std::string(command) + ":\n" + FlagLines(command);
}

std::string UsageText() {
  std::string u =
      "usage: gpudoctor COMMAND [flags]\n"
      "\n"
      "Why is this GPU server slow or failing? gpudoctor diagnoses it layer by layer\n"
      "(network -> hardware -> software/driver -> resources) with evidence and next steps.\n"
      "\n"
      "commands:\n"
      "  check              diagnose this host once (exit 0 ok, 1 warn, 2 crit, 3 could not run)\n"
      "  explain ID         what a finding means and what to do (--list, --markdown)\n"
      "  explain xid N      the Xid table entry: meaning, class, severity, action\n"
      "  logs FILE|-        scan a saved kernel log (dmesg, journalctl, syslog) for findings\n"
      "  config --default   print the commented default config file\n"
      "  compare GOOD [NOW] what changed since the node was fast (two check --json reports)\n"
      "  watch              run continuously: history, /metrics, alerts, dashboard\n"
      "                     (--db PATH, --listen ADDR:PORT, --interval)\n"
      "  plan kv|batching   KV-cache and batching advisor (gpudoctor plan --help)\n"
      "  fleet              many nodes: health table, stragglers, lemons, failure stats\n"
      "                     (--reports DIR|-, --prometheus URL); fleet card SERIAL,\n"
      "                     fleet slot NODE:BUS tell a bad card from a bad slot\n"
      "  probes             list the probes and what they read\n"
      "  top                live terminal view: GPUs, host, NICs, open findings (q quits,\n"
      "                     f toggles detail; --interval, --connect URL for a watch daemon)\n"
      "  history            stored watch history: --metric NAME, --list-metrics, --findings,\n"
      "                     --events (--db PATH, --since, --until, --gpu, --json)\n"
      "  why                when did the job become slow, and what changed then (--job NAME,\n"
      "                     --at TIME, --since 24h, --json; reads the watch history)\n"
      "  report bandwidth   peak, 95th percentile billing, time above 80% of the plan, top\n"
      "                     senders and plan advice per NIC (--since 30d, --nic X,\n"
      "                     --plan-mbps N, --json; reads the watch history)\n"
      "  mark step          a training loop's step mark for `watch` (--job NAME, --seconds S)\n"
      "  ack ID             acknowledge an open finding (--gpu N, --note TEXT, --db PATH)\n"
      "  silence ID         keep notifiers quiet about a finding (--for 2h, --gpu N, --db PATH)\n"
      "  bundle             write a support archive (tar.gz): a fresh check, 24 h of history,\n"
      "                     kernel log, versions, redacted config (-o FILE, watch flags)\n"
      "  netcheck SERVER[:PORT]  for a user on their own machine: is it my network, the path or\n"
      "                     the server? (--reference HOST:PORT, --json; no GPU, no root)\n"
      "  scan               a compromised host: ClamAV on flagged and GPU processes' executables,\n"
      "                     changed system binaries (dpkg --verify/debsums), authorized_keys\n"
      "                     and crontabs changed --since TIME (default 7d; --json)\n"
      "  version            print the version\n"
      "  help COMMAND       the flags of one command (also: gpudoctor COMMAND --help)\n"
      "\n"
      "flags (each command takes only its own: gpudoctor help COMMAND):\n";
  return u + FlagLines("");
}

}  // namespace gpudoctor
