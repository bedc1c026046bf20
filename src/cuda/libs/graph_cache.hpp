// The cache of built cuDNN graphs that the conv2d and SDPA paths share (cudnn_conv.cpp,
// cudnn_sdpa.cpp): one entry per problem, built once however many threads ask for it (the
// build runs under the cache's lock), handed out as a shared slot that clear() may drop while
// another thread is still enqueueing it, with the hit/miss/unsupported counters their tests
// read. Header-only and free of the cuDNN frontend: the plan type is the user's (anything with
// a `graph` member that converts to bool, null when the library has no plan for the problem).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace ferrite::cuda {

/// A cached plan and the mutex its enqueues take: two threads never submit the same plan at
/// once (cuDNN promises thread safety per handle, not per execution plan).
template <class Plan>
struct GraphSlot {
  explicit GraphSlot(Plan p) : plan(std::move(p)) {}
  const Plan plan;
  std::mutex execute;
};

struct GraphCacheCounts {
  std::int64_t entries = 0, hits = 0, misses = 0, unsupported = 0;
  std::string last_unsupported;  ///< why the last problem without a plan had none
};

template <class Key, class Plan, class Map = std::map<Key, std::shared_ptr<GraphSlot<Plan>>>>
class GraphCache {
 public:
  using Slot = GraphSlot<Plan>;

  /// The slot of `key`; on a miss `build(why)` makes the plan (and says in `why` why a plan
  /// with a null graph has none). `count_hit`: whether finding it counts as a hit (not for
  /// queries made before the call that runs it).
  template <class Build>
  std::shared_ptr<Slot> find_or_build(const Key& key, bool count_hit, Build&& build) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = slots_.find(key); it != slots_.end()) {
      if (count_hit) ++counts_.hits;
      return it->second;
    }
    ++counts_.misses;
    std::string why;
    Plan plan = build(why);
    if (!plan.graph) {
      ++counts_.unsupported;
      counts_.last_unsupported = std::move(why);
    }
    return slots_.emplace(key, std::make_shared<Slot>(std::move(plan))).first->second;
  }

  GraphCacheCounts counts() const {
    std::lock_guard<std::mutex> lock(mutex_);
    GraphCacheCounts c = counts_;
    c.entries = static_cast<std::int64_t>(slots_.size());
    return c;
  }

  /// Drops every plan and zeroes the counters; `before_drop` runs first under the lock (the
  /// SDPA cache waits for the device there).
  template <class BeforeDrop>
  void clear(BeforeDrop&& before_drop) {
    std::lock_guard<std::mutex> lock(mutex_);
    before_drop();
    slots_.clear();
    counts_ = {};
  }
  void clear() {
    clear([] {});
  }

 private:
  mutable std::mutex mutex_;
  Map slots_;
  GraphCacheCounts counts_;
};

}  // namespace ferrite::cuda
