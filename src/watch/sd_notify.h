// systemd notification (Type=notify): READY=1 once started, WATCHDOG=1 after every tick,
// STOPPING=1 on shutdown, STATUS= lines. Uses sd_notify from libsystemd.so.0, loaded with
// dlopen (no library or no $NOTIFY_SOCKET: every call is a no-op). Thread-safe.
#pragma once

#include <string>

namespace gpudoctor {

void SdNotify(const std::string& state);

}  // namespace gpudoctor
