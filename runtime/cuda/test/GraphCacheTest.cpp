//===- GraphCacheTest.cpp - Captured plans by the buffers they bind -------===//
#include "runtime/cuda/GraphCache.h"

#include <gtest/gtest.h>

#include <set>

using namespace dlc::cuda;

namespace {

/// Distinct fake graph handles.
GraphCache::Graph graph(uintptr_t n) {
  return reinterpret_cast<GraphCache::Graph>(n);
}

TEST(GraphCache, OneGraphPerBinding) {
  std::set<GraphCache::Graph> destroyed;
  {
    GraphCache cache;
    cache.setDestroy([&](GraphCache::Graph g) { destroyed.insert(g); });
    // A training step alternates two bindings of its globals.
    GraphCache::Key even = {0x1000, 0x2000, 0x9000};
    GraphCache::Key odd = {0x2000, 0x1000, 0x9000};
    EXPECT_EQ(cache.find(even), nullptr);
    cache.insert(even, graph(1));
    EXPECT_EQ(cache.find(odd), nullptr);
    cache.insert(odd, graph(2));
    for (int call = 0; call < 10; ++call) {
      EXPECT_EQ(cache.find(call % 2 ? odd : even), graph(call % 2 ? 2 : 1));
      EXPECT_EQ(cache.size(), 2u);
    }
    EXPECT_TRUE(destroyed.empty());
  }
  // The cache destroys what it holds.
  EXPECT_EQ(destroyed, (std::set<GraphCache::Graph>{graph(1), graph(2)}));
}

TEST(GraphCache, EvictsTheLeastRecentlyUsedBeyondCapacity) {
  std::vector<GraphCache::Graph> destroyed;
  GraphCache cache(2);
  cache.setDestroy([&](GraphCache::Graph g) { destroyed.push_back(g); });
  cache.insert({1}, graph(1));
  cache.insert({2}, graph(2));
  EXPECT_EQ(cache.find({1}), graph(1)); // {2} is now the oldest.
  cache.insert({3}, graph(3));
  EXPECT_EQ(destroyed, std::vector<GraphCache::Graph>{graph(2)});
  EXPECT_EQ(cache.find({2}), nullptr);
  EXPECT_EQ(cache.find({1}), graph(1));
  EXPECT_EQ(cache.find({3}), graph(3));
  cache.clear();
  EXPECT_EQ(destroyed.size(), 3u);
  EXPECT_EQ(cache.size(), 0u);
}

} // namespace
