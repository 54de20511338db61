// Control of the deadline runner's worker pool (core/deadline.h, implemented in deadline.cc).
// A pooled worker has the namespaces of the thread that started it, not those of the caller
// whose work it later runs: a caller that moved its own thread into a new namespace (tests that
// unshare a network namespace, tests/net_test_env.h) renews the pool before and after, so its
// work gets workers of its namespace and later work none of them.
// Thread-safety: safe to call concurrently with all deadline runner functions; work started
// while it runs may still land on a worker of the old pool.
#pragma once

namespace gpudoctor {

// Idle workers leave, and workers busy now leave when their work is done instead of waiting for
// more: work started after this call runs on threads started after it (by the thread that starts
// the work), never on one of the workers the pool had.
void RenewWorkerPool();

}  // namespace gpudoctor
