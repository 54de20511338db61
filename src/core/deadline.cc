#include "core/deadline.h"

namespace gpudoctor {
namespace {
std::atomic<int> g_abandoned{0};
}

int AbandonedWorkerCount() { return g_abandoned.load(); }
void CountAbandonedWorker() { g_abandoned.fetch_add(1); }

}  // namespace gpudoctor
