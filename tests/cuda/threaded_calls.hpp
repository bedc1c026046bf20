// For the GPU tests that call one op from several host threads at once (shared plan and graph
// caches, per-thread library handles): how many of the calls disagreed with the expected answer.
#pragma once

#include <thread>
#include <vector>

namespace ferrite::cuda_tests {

/// Runs `same()` `rounds` times on each of `threads` host threads, all at once, and returns
/// the number of runs that answered false.
template <class Same>
int disagreements_across_threads(int threads, int rounds, const Same& same) {
  std::vector<int> wrong(static_cast<std::size_t>(threads), 0);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t)
    running.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) wrong[static_cast<std::size_t>(t)] += same() ? 0 : 1;
    });
  for (std::thread& th : running) th.join();
  int total = 0;
  for (int w : wrong) total += w;
  return total;
}

}  // namespace ferrite::cuda_tests
