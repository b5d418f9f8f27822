//===- GraphCache.h - Captured plans by the buffers they bind ---*- C++ -*-===//
//
// A CUDA graph replays exactly the launches it captured, pointers included,
// so a session keeps one executable graph per binding of a function's
// buffers (its argument and result base addresses) and captures a new one
// only for a binding it has not seen. A session's bindings are few (which
// buffer of each global is current x which staging slot), but the cache is
// bounded anyway and drops the least recently used graph beyond its
// capacity, so that no pattern of calls grows device memory without bound.
// The logic knows nothing of CUDA (graphs are opaque handles and a
// callback destroys them) so that the CPU test suite checks it.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_GRAPHCACHE_H
#define DLC_RUNTIME_CUDA_GRAPHCACHE_H

#include <cstdint>
#include <functional>
#include <list>
#include <utility>
#include <vector>

namespace dlc::cuda {

class GraphCache {
public:
  using Key = std::vector<uint64_t>;
  using Graph = void *;
  using Destroy = std::function<void(Graph)>;

  explicit GraphCache(size_t capacity = 8) : capacity_(capacity) {}
  ~GraphCache() { clear(); }
  GraphCache(GraphCache &&) = default;
  /// Destroys the graphs it held before taking `other`'s.
  GraphCache &operator=(GraphCache &&other) {
    if (this != &other) {
      clear();
      capacity_ = other.capacity_;
      destroy_ = std::move(other.destroy_);
      entries_ = std::move(other.entries_);
    }
    return *this;
  }

  /// How graphs are destroyed (on eviction and clear()).
  void setDestroy(Destroy destroy) { destroy_ = std::move(destroy); }

  /// The graph captured for `key`, or null; a hit becomes the most
  /// recently used.
  Graph find(const Key &key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return it->second;
      }
    return nullptr;
  }

  /// Adds the graph for a `key` find() did not have, evicting the least
  /// recently used one beyond capacity.
  void insert(Key key, Graph graph) {
    entries_.emplace_front(std::move(key), graph);
    while (entries_.size() > capacity_) {
      if (destroy_)
        destroy_(entries_.back().second);
      entries_.pop_back();
    }
  }

  size_t size() const { return entries_.size(); }

  void clear() {
    for (auto &entry : entries_)
      if (destroy_)
        destroy_(entry.second);
    entries_.clear();
  }

private:
  size_t capacity_;
  Destroy destroy_;
  /// Most recently used first.
  std::list<std::pair<Key, Graph>> entries_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_GRAPHCACHE_H
