// A best-fit memory pool with coalescing over raw memory regions, in the
// style of TensorFlow's BFC allocator. Each Device owns one, fed by its
// plugin's allocator; the pool does not know about devices, so tests can
// feed it host memory.
//
// The pool asks for regions that grow geometrically (each at least double
// the previous one, up to max_region_bytes; a larger request gets a region of
// its own size). A region is cut into blocks, kept in a list by address; a
// free block sits in an index ordered by (size, address), so Allocate takes
// the smallest free block that fits (the lowest such one on ties) and splits
// off the rest, and Free merges a block with its free neighbours in the same
// region. Regions are given back to the raw allocator only when wholly free
// and only by ReleaseFree, when a region is refused, and at destruction.
#ifndef PLEXUS_CORE_MEMORY_POOL_H_
#define PLEXUS_CORE_MEMORY_POOL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "plexus/device.h"  // MemoryPoolStats

namespace plexus {

struct MemoryPoolOptions {
  // Every block starts at a multiple of this from its region's start (and
  // regions are expected to be aligned to it). A power of two.
  size_t alignment = 256;
  // The first region's size, and the least any region is asked for.
  size_t min_region_bytes = size_t{2} << 20;
  // Growth stops here; a larger request still gets a region of its size.
  size_t max_region_bytes = size_t{1} << 30;
  // The most the pool may reserve in all; 0 means no limit.
  uint64_t limit_bytes = 0;
};

class MemoryPool {
 public:
  using Options = MemoryPoolOptions;
  using Stats = MemoryPoolStats;

  // Where regions come from. allocate_region returns memory aligned to the
  // pool's alignment, or an error (of any code) when it has none;
  // free_region gets back exactly what allocate_region returned, with the
  // same size. Both are called with the pool's lock held.
  struct RegionAllocator {
    std::function<absl::StatusOr<void*>(size_t bytes)> allocate_region;
    std::function<void(void* ptr, size_t bytes)> free_region;
  };

  explicit MemoryPool(RegionAllocator allocator, Options options = Options());
  // Gives every region back, including blocks still in use (a caller bug,
  // but the memory's owner is going away).
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // A block of at least `bytes` (rounded up to the alignment; at least one
  // alignment unit, so zero bytes still get a distinct pointer). When no
  // free block fits, a new region is obtained; when that is refused, the
  // wholly free regions are given back and a region of exactly the rounded
  // size is tried. Failing that: RESOURCE_EXHAUSTED saying what was asked
  // for, what is in use and reserved, and the largest free block.
  absl::StatusOr<void*> Allocate(size_t bytes);
  // Frees a block from Allocate (null is ignored).
  void Free(void* ptr);
  // The rounded size of the in-use block at `ptr`; 0 when there is none.
  size_t BlockSize(void* ptr) const;
  // Gives every wholly free region back to the raw allocator.
  void ReleaseFree();

  Stats stats() const;
  const Options& options() const { return options_; }

 private:
  struct Region;
  struct Block {
    char* ptr = nullptr;
    size_t size = 0;       // a multiple of the alignment
    size_t requested = 0;  // what the caller asked for, while in use
    bool in_use = false;
    Block* prev = nullptr;  // neighbours by address, in the same region
    Block* next = nullptr;
    Region* region = nullptr;
  };
  struct Region {
    char* base;
    size_t size;
    Block* first;  // the block at base; never merged away
  };
  struct BySizeThenAddress {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
  };

  // The smallest free block of at least `rounded` bytes, or null.
  Block* FindFreeLocked(size_t rounded);
  // Obtains a region able to hold `rounded` bytes and files its one free
  // block; the error says why not.
  absl::Status GrowLocked(size_t rounded);
  // Asks the raw allocator for a region of exactly `size` bytes.
  absl::Status AddRegionLocked(size_t size);
  void ReleaseFreeLocked();
  size_t LargestFreeLocked() const;

  const RegionAllocator allocator_;
  const Options options_;
  mutable std::mutex mu_;
  std::list<Region> regions_;
  std::set<Block*, BySizeThenAddress> free_;
  absl::flat_hash_map<void*, Block*> in_use_;
  size_t next_region_bytes_;  // the size of the next region, before capping
  Stats stats_;
};

}  // namespace plexus

#endif  // PLEXUS_CORE_MEMORY_POOL_H_
