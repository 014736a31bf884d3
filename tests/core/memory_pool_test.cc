// Tests of the device memory pool (core/src/devices/memory_pool.h) over real host
// memory, and of a cpu Device's use of it.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../core/src/devices/memory_pool.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;

// Regions of aligned host memory, counted; refuses (RESOURCE_EXHAUSTED) a
// region that would take the bytes held past `budget` (0 = no budget).
class HostRegions {
 public:
  explicit HostRegions(size_t alignment = 256, size_t budget = 0)
      : alignment_(alignment), budget_(budget) {}
  ~HostRegions() { EXPECT_EQ(live_.size(), 0u) << "the pool leaked regions"; }

  MemoryPool::RegionAllocator allocator() {
    MemoryPool::RegionAllocator a;
    a.allocate_region = [this](size_t bytes) -> absl::StatusOr<void*> {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(bytes);
      if (budget_ != 0 && held_ + bytes > budget_) {
        refusals_++;
        return absl::ResourceExhaustedError(absl::StrCat("budget exceeded by ", bytes, " bytes"));
      }
      void* p = std::aligned_alloc(alignment_, bytes);
      if (p == nullptr) return absl::ResourceExhaustedError("host out of memory");
      live_[p] = bytes;
      held_ += bytes;
      return p;
    };
    a.free_region = [this](void* p, size_t bytes) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = live_.find(p);
      ASSERT_NE(it, live_.end()) << "freeing a region that was not allocated";
      EXPECT_EQ(it->second, bytes) << "a region freed with the wrong size";
      held_ -= it->second;
      live_.erase(it);
      std::free(p);
      frees_++;
    };
    return a;
  }

  size_t live() const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.size();
  }
  size_t held() const {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }
  std::vector<size_t> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  int refusals() const { return refusals_; }
  int frees() const { return frees_; }
  // True when [p, p + n) lies inside one live region.
  bool Inside(const void* p, size_t n) const {
    std::lock_guard<std::mutex> lock(mu_);
    const char* c = static_cast<const char*>(p);
    for (const auto& [base, size] : live_) {
      const char* b = static_cast<const char*>(base);
      if (c >= b && c + n <= b + size) return true;
    }
    return false;
  }

 private:
  const size_t alignment_;
  const size_t budget_;
  mutable std::mutex mu_;
  std::map<void*, size_t> live_;
  size_t held_ = 0;
  std::vector<size_t> requests_;
  int refusals_ = 0;
  int frees_ = 0;
};

MemoryPool::Options SmallOptions() {
  MemoryPool::Options o;
  o.alignment = 256;
  o.min_region_bytes = 64 * kKiB;
  o.max_region_bytes = 1 * kMiB;
  return o;
}

char* Alloc(MemoryPool& pool, size_t bytes) {
  absl::StatusOr<void*> p = pool.Allocate(bytes);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? static_cast<char*>(*p) : nullptr;
}

// Stats that must hold at any quiet moment.
void ExpectConsistent(const MemoryPool::Stats& s) {
  EXPECT_EQ(s.free_bytes, s.bytes_reserved - s.bytes_in_use);
  EXPECT_LE(s.bytes_in_use, s.bytes_reserved);
  EXPECT_LE(s.bytes_requested_in_use, s.bytes_in_use);
  EXPECT_LE(s.largest_free_block, s.free_bytes);
  EXPECT_LE(s.bytes_in_use, s.peak_bytes_in_use);
  EXPECT_LE(s.bytes_reserved, s.peak_bytes_reserved);
  EXPECT_EQ(s.num_regions, s.region_allocations - s.region_frees);
  EXPECT_GE(s.num_allocations, s.num_frees);
}

TEST(MemoryPool, RoundsToAlignmentAndCountsRequestedBytes) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  char* a = Alloc(pool, 1);
  char* b = Alloc(pool, 300);
  EXPECT_EQ(pool.BlockSize(a), 256u);
  EXPECT_EQ(pool.BlockSize(b), 512u);
  EXPECT_EQ(pool.BlockSize(a + 1), 0u) << "not a block";
  MemoryPool::Stats s = pool.stats();
  EXPECT_EQ(s.num_allocations, 2u);
  EXPECT_EQ(s.bytes_in_use, 768u);
  EXPECT_EQ(s.bytes_requested_in_use, 301u);
  EXPECT_EQ(s.bytes_reserved, 64 * kKiB);
  EXPECT_EQ(s.num_regions, 1u);
  EXPECT_EQ(s.region_allocations, 1u);
  EXPECT_EQ(s.num_splits, 2u);
  EXPECT_EQ(s.largest_free_block, 64 * kKiB - 768);
  ExpectConsistent(s);
  EXPECT_FALSE(s.ToString().empty());
  EXPECT_NE(s.ToString().find("reserved"), std::string::npos) << s.ToString();
  pool.Free(a);
  pool.Free(b);
  s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.bytes_requested_in_use, 0u);
  EXPECT_EQ(s.num_frees, 2u);
  EXPECT_EQ(s.largest_free_block, 64 * kKiB) << "the region is one free block again";
  pool.Free(nullptr);  // ignored
}

TEST(MemoryPool, EveryPointerIsAligned) {
  for (size_t alignment : {64, 256, 4096}) {
    HostRegions regions(alignment);
    MemoryPool::Options o = SmallOptions();
    o.alignment = alignment;
    MemoryPool pool(regions.allocator(), o);
    std::vector<char*> live;
    std::mt19937 rng(alignment);
    for (int i = 0; i < 200; ++i) {
      char* p = Alloc(pool, rng() % 5000);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << "alignment " << alignment;
      live.push_back(p);
    }
    for (char* p : live) pool.Free(p);
  }
}

TEST(MemoryPool, ZeroBytesGetDistinctValidPointers) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  char* a = Alloc(pool, 0);
  char* b = Alloc(pool, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.BlockSize(a), 256u);
  EXPECT_TRUE(regions.Inside(a, 256));
  std::memset(a, 0x5A, 256);  // the minimum block is really there
  MemoryPool::Stats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 512u);
  EXPECT_EQ(s.bytes_requested_in_use, 0u);
  pool.Free(a);
  pool.Free(b);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
}

TEST(MemoryPool, BestFitTakesTheSmallestFreeBlockThatFits) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  // Free holes of 4 KiB, 1 KiB and 2 KiB, separated by live blocks.
  char* big = Alloc(pool, 4 * kKiB);
  char* sep1 = Alloc(pool, 256);
  char* small = Alloc(pool, 1 * kKiB);
  char* sep2 = Alloc(pool, 256);
  char* mid = Alloc(pool, 2 * kKiB);
  char* sep3 = Alloc(pool, 256);
  pool.Free(big);
  pool.Free(small);
  pool.Free(mid);
  // 1 KiB fits the 1 KiB hole exactly.
  EXPECT_EQ(Alloc(pool, 1 * kKiB), small);
  // 1.5 KiB: the 2 KiB hole, not the 4 KiB one nor the region's tail.
  char* p = Alloc(pool, 1536);
  EXPECT_EQ(p, mid);
  // 3 KiB: only the 4 KiB hole is big enough among the holes.
  EXPECT_EQ(Alloc(pool, 3 * kKiB), big);
  // The rest of the 2 KiB hole (512 bytes) is the best fit for 300 bytes.
  EXPECT_EQ(Alloc(pool, 300), mid + 1536);
  // A 1 KiB block left of the 4 KiB hole.
  EXPECT_EQ(Alloc(pool, 1 * kKiB), big + 3 * kKiB);
  (void)sep1;
  (void)sep2;
  (void)sep3;
}

TEST(MemoryPool, TiesGoToTheLowestAddress) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  std::vector<char*> blocks;
  for (int i = 0; i < 6; ++i) blocks.push_back(Alloc(pool, 1 * kKiB));
  pool.Free(blocks[4]);
  pool.Free(blocks[2]);
  pool.Free(blocks[0]);
  EXPECT_EQ(Alloc(pool, 1 * kKiB), blocks[0]);
  EXPECT_EQ(Alloc(pool, 1 * kKiB), blocks[2]);
  EXPECT_EQ(Alloc(pool, 1 * kKiB), blocks[4]);
}

// Frees A, B, C (adjacent, followed by the free tail of the region) in
// every order: whatever the order, everything merges into one block.
TEST(MemoryPool, CoalescesNeighboursInEveryOrder) {
  std::vector<int> order = {0, 1, 2};
  do {
    HostRegions regions;
    MemoryPool pool(regions.allocator(), SmallOptions());
    char* blocks[3] = {Alloc(pool, 1 * kKiB), Alloc(pool, 2 * kKiB), Alloc(pool, 3 * kKiB)};
    EXPECT_EQ(blocks[1], blocks[0] + 1 * kKiB);
    EXPECT_EQ(blocks[2], blocks[1] + 2 * kKiB);
    MemoryPool::Stats s = pool.stats();
    EXPECT_EQ(s.num_splits, 3u);
    EXPECT_EQ(s.largest_free_block, 64 * kKiB - 6 * kKiB);
    for (int i : order) pool.Free(blocks[i]);
    s = pool.stats();
    // Four pieces (A, B, C, tail) become one: three merges.
    EXPECT_EQ(s.num_coalesces, 3u) << order[0] << order[1] << order[2];
    EXPECT_EQ(s.largest_free_block, 64 * kKiB);
    EXPECT_EQ(s.free_bytes, 64 * kKiB);
    // The whole region can be handed out as one block again.
    char* all = Alloc(pool, 64 * kKiB);
    EXPECT_EQ(all, blocks[0]);
    EXPECT_EQ(pool.stats().num_regions, 1u);
    pool.Free(all);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(MemoryPool, CoalescesOnlyWithFreeNeighbours) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  char* a = Alloc(pool, 1 * kKiB);
  char* b = Alloc(pool, 1 * kKiB);
  char* c = Alloc(pool, 1 * kKiB);
  char* d = Alloc(pool, 1 * kKiB);
  pool.Free(a);
  pool.Free(c);
  EXPECT_EQ(pool.stats().num_coalesces, 0u) << "b is in use between a and c, d after c";
  pool.Free(b);  // merges a, b, c
  MemoryPool::Stats s = pool.stats();
  EXPECT_EQ(s.num_coalesces, 2u);
  // The largest is still the region's tail; the hole is 3 KiB.
  EXPECT_EQ(s.largest_free_block, 64 * kKiB - 4 * kKiB);
  EXPECT_EQ(Alloc(pool, 3 * kKiB), a) << "the merged 3 KiB hole is an exact fit";
  pool.Free(d);
}

TEST(MemoryPool, NeverCoalescesAcrossRegions) {
  HostRegions regions;
  MemoryPool::Options o = SmallOptions();
  MemoryPool pool(regions.allocator(), o);
  // Fill the first region exactly, then take a second one.
  char* a = Alloc(pool, 64 * kKiB);
  char* b = Alloc(pool, 64 * kKiB);
  MemoryPool::Stats s = pool.stats();
  EXPECT_EQ(s.num_regions, 2u);
  EXPECT_EQ(s.bytes_reserved, 64 * kKiB + 128 * kKiB) << "the second region doubles";
  pool.Free(a);
  pool.Free(b);
  s = pool.stats();
  // Even if the host put the regions side by side, they stay apart: the
  // second region's block merged only with its own tail.
  EXPECT_EQ(s.num_coalesces, 1u);
  EXPECT_EQ(s.largest_free_block, 128 * kKiB);
  EXPECT_EQ(s.free_bytes, 192 * kKiB);
  // 160 KiB fits neither region: a third one.
  char* c = Alloc(pool, 160 * kKiB);
  EXPECT_EQ(pool.stats().num_regions, 3u);
  pool.Free(c);
}

TEST(MemoryPool, RegionsGrowGeometricallyUpToTheCap) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());  // 64 KiB .. 1 MiB
  std::vector<char*> live;
  // Each allocation fills a region, so each needs a new one.
  size_t expected = 64 * kKiB;
  for (int i = 0; i < 7; ++i) {
    live.push_back(Alloc(pool, expected));
    expected = std::min(expected * 2, 1 * kMiB);
  }
  std::vector<size_t> sizes = regions.requests();
  ASSERT_EQ(sizes.size(), 7u);
  EXPECT_EQ(sizes, (std::vector<size_t>{64 * kKiB, 128 * kKiB, 256 * kKiB, 512 * kKiB, 1 * kMiB,
                                        1 * kMiB, 1 * kMiB}));
  // A request above the cap gets a region of its own size.
  live.push_back(Alloc(pool, 3 * kMiB + 100));
  EXPECT_EQ(regions.requests().back(), 3 * kMiB + 256);
  // A small request after that: the cap again, not double the huge one.
  live.push_back(Alloc(pool, 2 * kMiB / 2 + 1));
  EXPECT_EQ(regions.requests().back(), 1 * kMiB + 256);
  live.push_back(Alloc(pool, 100));
  EXPECT_EQ(regions.requests().back(), 1 * kMiB);
  MemoryPool::Stats s = pool.stats();
  EXPECT_EQ(s.num_regions, 10u);
  EXPECT_EQ(s.bytes_reserved, regions.held());
  for (char* p : live) pool.Free(p);
}

TEST(MemoryPool, SmallRequestsShareARegionAndGrowthStartsAtTheMinimum) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  std::vector<char*> live;
  for (int i = 0; i < 64; ++i) live.push_back(Alloc(pool, 1 * kKiB));
  EXPECT_EQ(pool.stats().region_allocations, 1u);
  live.push_back(Alloc(pool, 1));
  EXPECT_EQ(pool.stats().region_allocations, 2u);
  EXPECT_EQ(regions.requests(), (std::vector<size_t>{64 * kKiB, 128 * kKiB}));
  for (char* p : live) pool.Free(p);
}

TEST(MemoryPool, ReleaseFreeGivesBackOnlyWhollyFreeRegions) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  char* a = Alloc(pool, 64 * kKiB);   // region 1, full
  char* b = Alloc(pool, 1 * kKiB);    // region 2 (128 KiB)
  char* c = Alloc(pool, 200 * kKiB);  // region 3 (256 KiB)
  EXPECT_EQ(regions.live(), 3u);
  pool.Free(a);
  pool.Free(c);
  pool.ReleaseFree();
  MemoryPool::Stats s = pool.stats();
  EXPECT_EQ(regions.live(), 1u) << "region 2 still holds b";
  EXPECT_EQ(s.num_regions, 1u);
  EXPECT_EQ(s.region_frees, 2u);
  EXPECT_EQ(s.bytes_reserved, 128 * kKiB);
  EXPECT_EQ(s.peak_bytes_reserved, (64 + 128 + 256) * kKiB);
  EXPECT_EQ(s.largest_free_block, 127 * kKiB);
  EXPECT_TRUE(regions.Inside(b, 1 * kKiB));
  std::memset(b, 1, 1 * kKiB);
  pool.Free(b);
  pool.ReleaseFree();
  s = pool.stats();
  EXPECT_EQ(regions.live(), 0u);
  EXPECT_EQ(s.bytes_reserved, 0u);
  EXPECT_EQ(s.largest_free_block, 0u);
  // The pool keeps working after giving everything back.
  char* d = Alloc(pool, 10);
  EXPECT_EQ(pool.stats().num_regions, 1u);
  pool.Free(d);
}

TEST(MemoryPool, DestructorFreesEveryRegionEvenWithBlocksInUse) {
  HostRegions regions;
  {
    MemoryPool pool(regions.allocator(), SmallOptions());
    Alloc(pool, 100);
    Alloc(pool, 200 * kKiB);
    EXPECT_EQ(regions.live(), 2u);
  }
  EXPECT_EQ(regions.live(), 0u);
  EXPECT_EQ(regions.frees(), 2);
}

TEST(MemoryPool, LimitCapsWhatIsReserved) {
  HostRegions regions;
  MemoryPool::Options o = SmallOptions();
  o.limit_bytes = 200 * kKiB;
  MemoryPool pool(regions.allocator(), o);
  char* a = Alloc(pool, 64 * kKiB);   // a 64 KiB region, full
  char* b = Alloc(pool, 100 * kKiB);  // a 128 KiB region (192 KiB reserved)
  // 30 KiB fit neither b's 28 KiB tail nor the 8 KiB left under the limit.
  absl::StatusOr<void*> c = pool.Allocate(30 * kKiB);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(c.status().message().find("asked for 30720 bytes"), std::string::npos) << c.status();
  EXPECT_NE(c.status().message().find("limit of 204800 bytes"), std::string::npos) << c.status();
  EXPECT_EQ(pool.stats().bytes_reserved, 192 * kKiB);
  // A block that fits a free one still works at the limit.
  char* d = Alloc(pool, 28 * kKiB);
  EXPECT_EQ(d, b + 100 * kKiB);
  pool.Free(a);
  pool.Free(b);
  pool.Free(d);
  // 150 KiB fit no free block; the free regions are given back to make room.
  char* e = Alloc(pool, 150 * kKiB);
  MemoryPool::Stats s = pool.stats();
  EXPECT_EQ(s.region_frees, 2u);
  EXPECT_EQ(s.bytes_reserved, 150 * kKiB);
  EXPECT_LE(s.peak_bytes_reserved, o.limit_bytes);
  pool.Free(e);
}

TEST(MemoryPool, LimitShrinksTheLastRegionToWhatIsLeft) {
  HostRegions regions;
  MemoryPool::Options o = SmallOptions();
  o.limit_bytes = 100 * kKiB;
  MemoryPool pool(regions.allocator(), o);
  char* a = Alloc(pool, 64 * kKiB);
  char* b = Alloc(pool, 10 * kKiB);  // would be 128 KiB; 36 KiB are left
  EXPECT_EQ(regions.requests(), (std::vector<size_t>{64 * kKiB, 36 * kKiB}));
  EXPECT_EQ(pool.stats().bytes_reserved, 100 * kKiB);
  pool.Free(a);
  pool.Free(b);
}

TEST(MemoryPool, RefusedRegionReleasesFreeRegionsAndRetriesTheExactSize) {
  // The host has 400 KiB for this pool.
  HostRegions regions(256, 400 * kKiB);
  MemoryPool pool(regions.allocator(), SmallOptions());
  char* a = Alloc(pool, 64 * kKiB);   // region of 64 KiB
  char* b = Alloc(pool, 128 * kKiB);  // region of 128 KiB
  pool.Free(a);                       // region 1 wholly free, but kept
  EXPECT_EQ(pool.stats().num_regions, 2u);
  // 250 KiB: the pool asks for a 256 KiB region (refused: 192 + 256 > 400),
  // gives back region 1 and asks for exactly 250 KiB (128 + 250 <= 400).
  char* c = Alloc(pool, 250 * kKiB);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(regions.refusals(), 1);
  std::vector<size_t> requests = regions.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2], 256 * kKiB);
  EXPECT_EQ(requests[3], 250 * kKiB);
  MemoryPool::Stats s = pool.stats();
  EXPECT_EQ(s.num_regions, 2u);
  EXPECT_EQ(s.region_frees, 1u);
  EXPECT_EQ(s.bytes_reserved, 378 * kKiB);
  EXPECT_TRUE(regions.Inside(c, 250 * kKiB));
  std::memset(c, 7, 250 * kKiB);

  // Now nothing fits: RESOURCE_EXHAUSTED with the numbers, and no region
  // in use is given back.
  absl::StatusOr<void*> d = pool.Allocate(100 * kKiB);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string message(d.status().message());
  EXPECT_NE(message.find("out of memory"), std::string::npos) << message;
  EXPECT_NE(message.find("asked for 102400 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find(absl::StrCat(250 * kKiB + 128 * kKiB, " bytes in use")), std::string::npos)
      << message;
  EXPECT_NE(message.find(absl::StrCat(378 * kKiB, " bytes reserved")), std::string::npos) << message;
  EXPECT_NE(message.find("largest free block 0 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("budget exceeded"), std::string::npos) << "the allocator's reason: " << message;
  EXPECT_EQ(regions.live(), 2u);

  // The pool keeps working: after a free the memory is reused.
  pool.Free(b);
  char* e = Alloc(pool, 100 * kKiB);
  EXPECT_EQ(e, b);
  pool.Free(c);
  pool.Free(e);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
}

// An allocator's own error that is not a lack of memory (a device lost, a
// plugin returning no pointer) keeps its code and is not called "out of
// memory"; a lack of memory is RESOURCE_EXHAUSTED with the pool's numbers.
TEST(MemoryPool, AllocatorErrorsKeepTheirCode) {
  MemoryPool::RegionAllocator failing;
  int calls = 0;
  failing.allocate_region = [&calls](size_t) -> absl::StatusOr<void*> {
    ++calls;
    return absl::InternalError("device lost");
  };
  failing.free_region = [](void*, size_t) { ADD_FAILURE() << "nothing to free"; };
  MemoryPool pool(std::move(failing), SmallOptions());
  absl::StatusOr<void*> p = pool.Allocate(10);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(p.status().message().find("device lost"), std::string::npos) << p.status();
  EXPECT_EQ(p.status().message().find("out of memory"), std::string::npos) << p.status();
  EXPECT_EQ(calls, 2) << "the geometric size, then the exact size";
  absl::StatusOr<void*> huge = pool.Allocate(~size_t{0} - 10);
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
}

// Thousands of random allocations and frees: no two live blocks overlap,
// every block lies in a region, the stats add up, and everything returns
// to zero at the end.
TEST(MemoryPool, RandomizedAllocFreeKeepsBlocksApartAndStatsConsistent) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  std::mt19937_64 rng(12345);
  struct Live {
    char* p;
    size_t bytes;
    uint8_t fill;
  };
  std::vector<Live> live;
  uint64_t requested = 0, in_use = 0;
  for (int step = 0; step < 20000; ++step) {
    const bool allocate = live.empty() || (rng() % 100) < (live.size() < 200 ? 60 : 40);
    if (allocate) {
      size_t bytes;
      switch (rng() % 4) {
        case 0: bytes = rng() % 256; break;
        case 1: bytes = rng() % (4 * kKiB); break;
        case 2: bytes = rng() % (64 * kKiB); break;
        default: bytes = rng() % (700 * kKiB); break;
      }
      char* p = Alloc(pool, bytes);
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
      const size_t block = pool.BlockSize(p);
      ASSERT_GE(block, std::max<size_t>(bytes, 1));
      ASSERT_TRUE(regions.Inside(p, block));
      const uint8_t fill = static_cast<uint8_t>(rng());
      if (bytes > 0) {
        std::memset(p, fill, std::min<size_t>(bytes, 64));
        p[bytes - 1] = static_cast<char>(fill);
      }
      live.push_back({p, bytes, fill});
      requested += bytes;
      in_use += block;
    } else {
      size_t i = rng() % live.size();
      Live l = live[i];
      live[i] = live.back();
      live.pop_back();
      // Nobody wrote over this block while it was live.
      if (l.bytes > 0) {
        for (size_t k = 0; k < std::min<size_t>(l.bytes, 64); ++k) {
          ASSERT_EQ(static_cast<uint8_t>(l.p[k]), l.fill);
        }
        ASSERT_EQ(static_cast<uint8_t>(l.p[l.bytes - 1]), l.fill);
      }
      in_use -= pool.BlockSize(l.p);
      requested -= l.bytes;
      pool.Free(l.p);
    }
    if (step % 500 == 0) {
      MemoryPool::Stats s = pool.stats();
      ExpectConsistent(s);
      ASSERT_EQ(s.bytes_in_use, in_use);
      ASSERT_EQ(s.bytes_requested_in_use, requested);
      ASSERT_EQ(s.bytes_reserved, regions.held());
      // Live blocks never overlap.
      std::vector<std::pair<char*, size_t>> spans;
      for (const Live& l : live) spans.push_back({l.p, pool.BlockSize(l.p)});
      std::sort(spans.begin(), spans.end());
      for (size_t k = 1; k < spans.size(); ++k) {
        ASSERT_LE(spans[k - 1].first + spans[k - 1].second, spans[k].first) << "overlap at step " << step;
      }
    }
    if (step == 10000) pool.ReleaseFree();
  }
  for (const Live& l : live) pool.Free(l.p);
  MemoryPool::Stats s = pool.stats();
  ExpectConsistent(s);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.bytes_requested_in_use, 0u);
  EXPECT_EQ(s.num_allocations, s.num_frees);
  EXPECT_EQ(s.free_bytes, s.bytes_reserved);
  EXPECT_GT(s.num_coalesces, 0u);
  // Every region merged back into one free block each.
  pool.ReleaseFree();
  EXPECT_EQ(regions.live(), 0u) << pool.stats().ToString();
  EXPECT_EQ(pool.stats().bytes_reserved, 0u);
}

TEST(MemoryPool, ConcurrentAllocateAndFreeFromEightThreads) {
  HostRegions regions;
  MemoryPool pool(regions.allocator(), SmallOptions());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool, &failures, t] {
      std::mt19937 rng(t);
      std::vector<std::pair<char*, size_t>> mine;
      for (int i = 0; i < 3000; ++i) {
        if (mine.empty() || rng() % 2 == 0) {
          size_t bytes = 1 + rng() % (16 * kKiB);
          absl::StatusOr<void*> p = pool.Allocate(bytes);
          if (!p.ok()) {
            failures++;
            continue;
          }
          char* c = static_cast<char*>(*p);
          std::memset(c, t, bytes);  // a race would show as a wrong byte below
          mine.push_back({c, bytes});
        } else {
          size_t k = rng() % mine.size();
          auto [c, bytes] = mine[k];
          for (size_t j = 0; j < bytes; j += 97) {
            if (c[j] != static_cast<char>(t)) failures++;
          }
          mine[k] = mine.back();
          mine.pop_back();
          pool.Free(c);
        }
      }
      for (auto& [c, bytes] : mine) pool.Free(c);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  MemoryPool::Stats s = pool.stats();
  ExpectConsistent(s);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.num_allocations, s.num_frees);
  EXPECT_EQ(s.bytes_reserved, regions.held());
}

// The cpu device allocates through its pool: a second round of the same
// tensors reuses the regions of the first.
TEST(DeviceMemoryPool, CpuDeviceReusesMemory) {
  auto runtime = ::plexus::testing::CpuRuntime();
  std::shared_ptr<Device> device = runtime->devices().front();
  if (!device->pool_enabled()) GTEST_SKIP() << "PLEXUS_DEVICE_POOL=off";
  auto round = [&device] {
    std::vector<Tensor> tensors;
    for (int64_t n : {1, 100, 1000, 100000, 1000000, 0}) {
      absl::StatusOr<Tensor> t = device->AllocateTensor(DataType::kFloat, Shape{n});
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % 256, 0u);
      tensors.push_back(*std::move(t));
    }
  };
  round();
  Device::MemoryStats first = device->memory_stats();
  EXPECT_GE(first.region_allocations, 1u);
  EXPECT_EQ(first.bytes_in_use, 0u);
  EXPECT_EQ(first.num_allocations, first.num_frees);
  round();
  Device::MemoryStats second = device->memory_stats();
  EXPECT_EQ(second.region_allocations, first.region_allocations) << second.ToString();
  EXPECT_EQ(second.num_allocations, first.num_allocations + 6);
  EXPECT_EQ(second.bytes_in_use, 0u);
  EXPECT_GE(second.peak_bytes_in_use, 4u * 1101101);
  // ReleaseCache gives the (now wholly free) regions back to the plugin.
  device->ReleaseCache();
  Device::MemoryStats released = device->memory_stats();
  EXPECT_EQ(released.bytes_reserved, 0u);
  EXPECT_EQ(released.num_regions, 0u);
  EXPECT_EQ(released.region_frees, released.region_allocations);
}

// PLEXUS_DEVICE_POOL=off: every buffer is its own plugin allocation, and the
// stats count each one as a region.
TEST(DeviceMemoryPool, PoolOffAllocatesPerBuffer) {
  const char* old = std::getenv("PLEXUS_DEVICE_POOL");
  std::string saved = old == nullptr ? "" : old;
  setenv("PLEXUS_DEVICE_POOL", "off", 1);
  auto runtime = ::plexus::testing::CpuRuntime();
  if (old == nullptr) {
    unsetenv("PLEXUS_DEVICE_POOL");
  } else {
    setenv("PLEXUS_DEVICE_POOL", saved.c_str(), 1);
  }
  std::shared_ptr<Device> device = runtime->devices().front();
  ASSERT_FALSE(device->pool_enabled());
  {
    absl::StatusOr<Tensor> a = device->AllocateTensor(DataType::kFloat, Shape{1000});
    absl::StatusOr<Tensor> b = device->AllocateTensor(DataType::kFloat, Shape{0});
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a->raw_data(), b->raw_data());
    Device::MemoryStats s = device->memory_stats();
    EXPECT_EQ(s.num_allocations, 2u);
    EXPECT_EQ(s.region_allocations, 2u);
    EXPECT_EQ(s.num_regions, 2u);
    EXPECT_EQ(s.bytes_in_use, 4096u + 256u);
    EXPECT_EQ(s.bytes_requested_in_use, 4000u);
    EXPECT_EQ(s.bytes_reserved, s.bytes_in_use);
  }
  Device::MemoryStats s = device->memory_stats();
  EXPECT_EQ(s.num_frees, 2u);
  EXPECT_EQ(s.region_frees, 2u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.bytes_reserved, 0u);
  EXPECT_EQ(s.peak_bytes_in_use, 4096u + 256u);
}

}  // namespace
}  // namespace plexus
