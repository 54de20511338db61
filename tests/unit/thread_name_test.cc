// gpudoctor's threads carry their role's name (core/thread_name.h), as top -H, ps -L and the
// kernel's hung-task reports show them.
#include "core/thread_name.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/deadline.h"
#include "serve/http_loop.h"
#include "store/history_store.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

std::string CommOf(const std::filesystem::path& task) {
  std::ifstream in(task / "comm");
  std::string name;
  std::getline(in, name);
  return name;
}

std::string MyThreadName() { return CommOf("/proc/thread-self"); }

// How many of this process's threads are named `name` now.
int ThreadsNamed(const std::string& name) {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    n += CommOf(task.path()) == name ? 1 : 0;
  }
  return n;
}

TEST(ThreadNameTest, NamesTheCallingThreadCutToTheKernelsLimit) {
  std::string main_name = MyThreadName();
  std::string seen_short;
  std::string seen_long;
  std::thread([&] {
    NameThisThread("gd-test");
    seen_short = MyThreadName();
    NameThisThread("a-name-longer-than-fifteen-bytes");
    seen_long = MyThreadName();
  }).join();
  EXPECT_EQ(seen_short, "gd-test");
  EXPECT_EQ(seen_long, "a-name-longer-t");
  EXPECT_EQ(seen_long.size(), kMaxThreadNameBytes);
  EXPECT_EQ(MyThreadName(), main_name);  // only the calling thread is named
}

TEST(ThreadNameTest, DeadlinePoolWorkersAreGdWorker) {
  std::promise<std::string> name;
  ASSERT_TRUE(RunOnWorker([&name] { name.set_value(MyThreadName()); }));
  EXPECT_EQ(name.get_future().get(), "gd-worker");
}

TEST(ThreadNameTest, TheHistoryWriterIsGdStoreForAsLongAsTheStoreIsOpen) {
  testing::TempDir dir;
  int before = ThreadsNamed("gd-store");
  {
    auto store = HistoryStore::Open(dir.path() + "/history.db", StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    // The writer names itself as it starts: give it a moment.
    for (int i = 0; i < 200 && ThreadsNamed("gd-store") == before; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(ThreadsNamed("gd-store"), before + 1);
  }
  EXPECT_EQ(ThreadsNamed("gd-store"), before);  // joined on close
}

TEST(ThreadNameTest, TheHttpLoopAndItsWorkersAreNamed) {
  HttpLoopOptions options;
  options.workers = 3;
  int loops_before = ThreadsNamed("gd-http");
  int workers_before = ThreadsNamed("gd-http-work");
  auto loop = HttpLoop::Start(
      "127.0.0.1", 0, options, [](const HttpRequest&) { return std::optional<HttpResponse>(); },
      [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  for (int i = 0; i < 200 && (ThreadsNamed("gd-http") == loops_before ||
                              ThreadsNamed("gd-http-work") < workers_before + 3);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(ThreadsNamed("gd-http"), loops_before + 1);
  EXPECT_EQ(ThreadsNamed("gd-http-work"), workers_before + 3);
}

}  // namespace
}  // namespace gpudoctor
