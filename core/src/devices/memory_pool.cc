#include "devices/memory_pool.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace plexus {

namespace {

// "1.5 MiB", "300 B".
std::string HumanBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

}  // namespace

std::string MemoryPoolStats::ToString() const {
  return absl::StrCat(
      "in use ", HumanBytes(bytes_in_use), " (peak ", HumanBytes(peak_bytes_in_use),
      ", requested ", HumanBytes(bytes_requested_in_use), ") of ", HumanBytes(bytes_reserved),
      " reserved (peak ", HumanBytes(peak_bytes_reserved), ") in ", num_regions,
      " region(s); free ", HumanBytes(free_bytes), ", largest free block ",
      HumanBytes(largest_free_block), "; ", num_allocations, " allocations, ", num_frees,
      " frees, ", region_allocations, " region allocations, ", region_frees, " region frees, ",
      num_splits, " splits, ", num_coalesces, " coalesces");
}

MemoryPool::MemoryPool(RegionAllocator allocator, Options options)
    : allocator_(std::move(allocator)), options_(options) {
  assert(options_.alignment > 0 && (options_.alignment & (options_.alignment - 1)) == 0);
  next_region_bytes_ = options_.min_region_bytes;
}

MemoryPool::~MemoryPool() {
  for (Region& region : regions_) {
    allocator_.free_region(region.base, region.size);
    Block* b = region.first;
    while (b != nullptr) {
      Block* next = b->next;
      delete b;
      b = next;
    }
  }
}

MemoryPool::Block* MemoryPool::FindFreeLocked(size_t rounded) {
  // The first block of size >= rounded, the lowest address among equals.
  Block key{nullptr, rounded};
  auto it = free_.lower_bound(&key);
  if (it == free_.end()) return nullptr;
  Block* block = *it;
  free_.erase(it);
  return block;
}

absl::Status MemoryPool::AddRegionLocked(size_t size) {
  if (options_.limit_bytes != 0 &&
      (size > options_.limit_bytes || stats_.bytes_reserved > options_.limit_bytes - size)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a region of ", size, " bytes would exceed the pool's limit of ",
                     options_.limit_bytes, " bytes"));
  }
  absl::StatusOr<void*> ptr = allocator_.allocate_region(size);
  if (!ptr.ok()) return ptr.status();
  if (*ptr == nullptr) return absl::InternalError("the region allocator returned null");
  char* base = static_cast<char*>(*ptr);
  regions_.push_back(Region{base, size, nullptr});
  Region* region = &regions_.back();
  Block* block = new Block{base, size};
  block->region = region;
  region->first = block;
  free_.insert(block);

  stats_.region_allocations++;
  stats_.num_regions++;
  stats_.bytes_reserved += size;
  stats_.peak_bytes_reserved = std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  // Geometric growth: the next region is at least twice this one (capped).
  const size_t doubled = size > std::numeric_limits<size_t>::max() / 2
                             ? std::numeric_limits<size_t>::max()
                             : size * 2;
  next_region_bytes_ = std::min(std::max(next_region_bytes_, doubled), options_.max_region_bytes);
  return absl::OkStatus();
}

absl::Status MemoryPool::GrowLocked(size_t rounded) {
  size_t size = std::max(std::min(next_region_bytes_, options_.max_region_bytes),
                         options_.min_region_bytes);
  size = (size + options_.alignment - 1) / options_.alignment * options_.alignment;
  size = std::max(size, rounded);
  // Under a limit, shrink the region to what is left (but not below the
  // request) rather than fail outright.
  if (options_.limit_bytes != 0 && stats_.bytes_reserved <= options_.limit_bytes) {
    uint64_t left = options_.limit_bytes - stats_.bytes_reserved;
    left = left / options_.alignment * options_.alignment;
    if (left < size && left >= rounded) size = static_cast<size_t>(left);
  }
  absl::Status status = AddRegionLocked(size);
  if (status.ok()) return status;
  // Refused: give back what is wholly free and ask for exactly the request.
  ReleaseFreeLocked();
  return AddRegionLocked(rounded);
}

absl::StatusOr<void*> MemoryPool::Allocate(size_t bytes) {
  const size_t alignment = options_.alignment;
  if (bytes > std::numeric_limits<size_t>::max() - alignment) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory: cannot allocate ", bytes,
                                                     " bytes (too large)"));
  }
  const size_t rounded = std::max<size_t>(1, (bytes + alignment - 1) / alignment) * alignment;
  std::lock_guard<std::mutex> lock(mu_);
  Block* block = FindFreeLocked(rounded);
  if (block == nullptr) {
    absl::Status grown = GrowLocked(rounded);
    if (!grown.ok() && grown.code() != absl::StatusCode::kResourceExhausted) {
      // Not a lack of memory (a plugin's fault, say): said as it is.
      return absl::Status(grown.code(), absl::StrCat("asked for ", bytes, " bytes: ", grown.message()));
    }
    if (!grown.ok()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "out of memory: asked for ", bytes, " bytes (", rounded, " rounded); ",
          stats_.bytes_in_use, " bytes in use, ", stats_.bytes_reserved,
          " bytes reserved, largest free block ", LargestFreeLocked(),
          " bytes; the region allocator said: ", grown.message()));
    }
    block = FindFreeLocked(rounded);
    assert(block != nullptr);
  }
  if (block->size - rounded >= alignment) {
    // Split: the tail stays free.
    Block* tail = new Block{block->ptr + rounded, block->size - rounded};
    tail->region = block->region;
    tail->prev = block;
    tail->next = block->next;
    if (block->next != nullptr) block->next->prev = tail;
    block->next = tail;
    block->size = rounded;
    free_.insert(tail);
    stats_.num_splits++;
  }
  block->in_use = true;
  block->requested = bytes;
  in_use_.emplace(block->ptr, block);
  stats_.num_allocations++;
  stats_.bytes_in_use += block->size;
  stats_.bytes_requested_in_use += bytes;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return static_cast<void*>(block->ptr);
}

void MemoryPool::Free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) {
    assert(false && "MemoryPool::Free of a pointer that is not an in-use block");
    return;
  }
  Block* block = it->second;
  in_use_.erase(it);
  stats_.num_frees++;
  stats_.bytes_in_use -= block->size;
  stats_.bytes_requested_in_use -= block->requested;
  block->in_use = false;
  block->requested = 0;
  // Merge with the free neighbours; the list never crosses regions.
  if (Block* next = block->next; next != nullptr && !next->in_use) {
    free_.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
    stats_.num_coalesces++;
  }
  if (Block* prev = block->prev; prev != nullptr && !prev->in_use) {
    free_.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
    stats_.num_coalesces++;
  }
  free_.insert(block);
}

size_t MemoryPool::BlockSize(void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = in_use_.find(ptr);
  return it == in_use_.end() ? 0 : it->second->size;
}

void MemoryPool::ReleaseFree() {
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseFreeLocked();
}

void MemoryPool::ReleaseFreeLocked() {
  for (auto it = regions_.begin(); it != regions_.end();) {
    Block* first = it->first;
    if (first->in_use || first->next != nullptr) {
      ++it;
      continue;
    }
    free_.erase(first);
    delete first;
    allocator_.free_region(it->base, it->size);
    stats_.region_frees++;
    stats_.num_regions--;
    stats_.bytes_reserved -= it->size;
    it = regions_.erase(it);
  }
}

size_t MemoryPool::LargestFreeLocked() const {
  return free_.empty() ? 0 : (*free_.rbegin())->size;
}

MemoryPool::Stats MemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.largest_free_block = LargestFreeLocked();
  s.free_bytes = s.bytes_reserved - s.bytes_in_use;
  return s;
}

}  // namespace plexus
