// The XPU plugin's data-movement kernels (plugins/xpu/kernels/movement.cl)
// run on PoCL against plain index loops. Movement is exact: every check is
// equality. Why plain loops and not sdk/reference: these tests launch the
// OpenCL kernels on raw buffers, without the runtime that hosts the
// reference plugin's kernels.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "abi.h"
#include "pocl_harness.h"
#include "pocl_xpu_test_util.h"

namespace plexus::xpu::test {
namespace {

template <typename W>
const char* Suffix() {
  return sizeof(W) == 1 ? "u8" : sizeof(W) == 2 ? "u16" : sizeof(W) == 4 ? "u32" : "u64";
}

template <typename W>
std::vector<W> Iota(size_t n, uint64_t start = 1) {
  std::vector<W> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<W>(start + i * 2654435761u);
  return v;
}

// Runs px_strided_copy_* and compares with the loop over the same plan.
template <typename W>
void RunCopy(PoclHarness* h, const std::vector<int64_t>& dims, const std::vector<int64_t>& ss,
             const std::vector<int64_t>& ds, int64_t src_base, int64_t dst_base,
             size_t src_size, size_t dst_size) {
  SCOPED_TRACE(::testing::Message() << Suffix<W>() << " rank " << dims.size());
  const std::vector<W> src = Iota<W>(src_size);
  const std::vector<W> init = Iota<W>(dst_size, 7777);
  ClBuffer dsrc = h->Upload(src), ddst = h->Upload(init);
  px_xpu_copy_plan plan{};
  int64_t n = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    plan.dims[d] = dims[d];
    plan.src[d] = ss[d];
    plan.dst[d] = ds[d];
    n *= dims[d];
  }
  const int32_t rank = static_cast<int32_t>(dims.size());
  const size_t global = static_cast<size_t>(n);
  ASSERT_TRUE(h->Run("movement", std::string("px_strided_copy_") + Suffix<W>(), 1, &global,
                     nullptr,
                     {Mem(dsrc), Mem(ddst), Arg(n), Arg(rank), Arg(plan), Arg(src_base),
                      Arg(dst_base)}));
  std::vector<W> want = init;
  for (int64_t k = 0; k < n; ++k) {
    int64_t r = k, s = src_base, t = dst_base;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = r % dims[d];
      r /= dims[d];
      s += c * ss[d];
      t += c * ds[d];
    }
    want[t] = src[s];
  }
  EXPECT_EQ(h->Download<W>(ddst, dst_size), want);
}

template <typename W>
void CopyCases(PoclHarness* h) {
  // Transpose [3, 5, 7] -> perm (2, 0, 1): out [7, 3, 5].
  RunCopy<W>(h, {7, 3, 5}, {1, 35, 7}, {15, 5, 1}, 0, 0, 105, 105);
  // StridedSlice with negative strides: x[::-2, 1:, ::-1] of [9, 4, 6].
  RunCopy<W>(h, {5, 3, 6}, {-48, 6, -1}, {18, 6, 1}, 8 * 24 + 6 + 5, 0, 216, 90);
  // BroadcastTo: a [1, 4] row repeated 5 times (stride 0).
  RunCopy<W>(h, {5, 4}, {0, 1}, {4, 1}, 0, 0, 4, 20);
  // Concat window: a [3, 2] block into columns 4..5 of a [3, 7] output.
  RunCopy<W>(h, {3, 2}, {2, 1}, {7, 1}, 0, 4, 6, 21);
  // Rank 8, odd sizes.
  RunCopy<W>(h, {2, 3, 1, 2, 3, 2, 1, 3}, {216, 72, 72, 36, 12, 6, 6, 2}, {108, 36, 36, 18, 6, 3, 3, 1},
             1, 0, 432, 216);
  // Zero-size: nothing written.
  RunCopy<W>(h, {3, 0, 2}, {2, 2, 1}, {0, 2, 1}, 0, 0, 6, 4);
}

TEST(PoclMovementTest, StridedCopyEveryWidth) {
  PX_POCL_HARNESS(h);
  CopyCases<uint8_t>(h);
  CopyCases<uint16_t>(h);
  CopyCases<uint32_t>(h);
  CopyCases<uint64_t>(h);
}

// float16 and float32 tensors move bit for bit (including NaN payloads and -0).
TEST(PoclMovementTest, StridedCopyKeepsFloatBits) {
  PX_POCL_HARNESS(h);
  const std::vector<uint16_t> halves = {0x7e01, 0x8000, 0x3c00, 0xfc00, 0x0001, 0x7bff};
  ClBuffer src = h->Upload(halves), dst = h->Alloc(12);
  px_xpu_copy_plan plan{};
  plan.dims[0] = 6;
  plan.src[0] = -1;
  plan.dst[0] = 1;
  const int64_t n = 6, base = 5, zero = 0;
  const int32_t rank = 1;
  const size_t global = 6;
  ASSERT_TRUE(h->Run("movement", "px_strided_copy_u16", 1, &global, nullptr,
                     {Mem(src), Mem(dst), Arg(n), Arg(rank), Arg(plan), Arg(base), Arg(zero)}));
  EXPECT_EQ(h->Download<uint16_t>(dst, 6),
            (std::vector<uint16_t>{0x7bff, 0x0001, 0xfc00, 0x3c00, 0x8000, 0x7e01}));
}

TEST(PoclMovementTest, FillAndFillBits) {
  PX_POCL_HARNESS(h);
  const std::vector<uint32_t> value = {0x3f800000u};
  ClBuffer v = h->Upload(value), dst = h->Alloc(37 * 4);
  const int64_t n = 37;
  const size_t global = 37;
  ASSERT_TRUE(h->Run("movement", "px_fill_u32", 1, &global, nullptr, {Mem(dst), Arg(n), Mem(v)}));
  EXPECT_EQ(h->Download<uint32_t>(dst, 37), std::vector<uint32_t>(37, 0x3f800000u));
  ClBuffer d16 = h->Alloc(37 * 2);
  ASSERT_TRUE(h->Run("movement", "px_fill_bits_u16", 1, &global, nullptr,
                     {Mem(d16), Arg(n), Arg(uint16_t{0x3c00})}));
  EXPECT_EQ(h->Download<uint16_t>(d16, 37), std::vector<uint16_t>(37, 0x3c00));
  ClBuffer d64 = h->Alloc(37 * 8);
  ASSERT_TRUE(h->Run("movement", "px_fill_bits_u64", 1, &global, nullptr,
                     {Mem(d64), Arg(n), Arg(uint64_t{0x0123456789abcdefull})}));
  EXPECT_EQ(h->Download<uint64_t>(d64, 37), std::vector<uint64_t>(37, 0x0123456789abcdefull));
}

// Gather: params [batch 2, outer 3, limit 5, inner 4], indices [2, 6].
TEST(PoclMovementTest, GatherAndIndexCheck) {
  PX_POCL_HARNESS(h);
  const int64_t batch = 2, outer = 3, limit = 5, inner = 4, n = 6;
  const std::vector<uint32_t> params = Iota<uint32_t>(batch * outer * limit * inner);
  const std::vector<int64_t> idx = {4, 0, 2, 2, 1, 3, 0, 0, 4, 1, 3, 2};
  const int64_t total = batch * outer * n * inner;
  ClBuffer dp = h->Upload(params), di = h->Upload(idx), dy = h->Alloc(total * 4);
  const size_t global = static_cast<size_t>(total);
  ASSERT_TRUE(h->Run("movement", "px_gather_u32_i64", 1, &global, nullptr,
                     {Mem(dp), Mem(di), Mem(dy), Arg(outer), Arg(limit), Arg(inner), Arg(n),
                      Arg(total)}));
  std::vector<uint32_t> want;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t e = 0; e < inner; ++e)
          want.push_back(params[((b * outer + o) * limit + idx[b * n + j]) * inner + e]);
  EXPECT_EQ(h->Download<uint32_t>(dy, total), want);

  // The check finds the first bad position (or none).
  auto first_bad = [&](const std::vector<int32_t>& indices, int64_t lim) {
    ClBuffer d = h->Upload(indices), bad = h->Upload(std::vector<int32_t>{0x7fffffff});
    const int64_t count = static_cast<int64_t>(indices.size());
    const size_t g = indices.size();
    EXPECT_TRUE(h->Run("movement", "px_index_check_i32", 1, &g, nullptr,
                       {Mem(d), Arg(count), Arg(lim), Mem(bad)}));
    return h->Download<int32_t>(bad, 1)[0];
  };
  EXPECT_EQ(first_bad({0, 1, 2, 3, 4}, 5), 0x7fffffff);
  EXPECT_EQ(first_bad({0, 1, 5, 3, -1}, 5), 2);
  EXPECT_EQ(first_bad(std::vector<int32_t>(200, 3), 3), 0);
  std::vector<int32_t> late(300, 1);
  late[257] = -7;
  late[290] = 99;
  EXPECT_EQ(first_bad(late, 2), 257);
}

TEST(PoclMovementTest, GatherNdAndCheck) {
  PX_POCL_HARNESS(h);
  // params [4, 3, 2] (words of 2 bytes), index depth 2: slices of 2.
  const std::vector<uint16_t> params = Iota<uint16_t>(24);
  const std::vector<int32_t> idx = {3, 2, 0, 0, 1, 1, 3, 0};
  px_xpu_gather_nd_plan plan{};
  plan.dims[0] = 4;
  plan.dims[1] = 3;
  plan.strides[0] = 6;
  plan.strides[1] = 2;
  const int32_t depth = 2;
  const int64_t slice = 2, count = 4, total = 8;
  ClBuffer dp = h->Upload(params), di = h->Upload(idx), dy = h->Alloc(16);
  const size_t global = 8;
  ASSERT_TRUE(h->Run("movement", "px_gather_nd_u16_i32", 1, &global, nullptr,
                     {Mem(dp), Mem(di), Mem(dy), Arg(depth), Arg(plan), Arg(slice), Arg(total)}));
  std::vector<uint16_t> want;
  for (int j = 0; j < 4; ++j)
    for (int e = 0; e < 2; ++e) want.push_back(params[idx[2 * j] * 6 + idx[2 * j + 1] * 2 + e]);
  EXPECT_EQ(h->Download<uint16_t>(dy, 8), want);
  const std::vector<int32_t> bad_idx = {3, 2, 0, 3, 4, 0, 1, 1};
  ClBuffer db = h->Upload(bad_idx), bad = h->Upload(std::vector<int32_t>{0x7fffffff});
  const size_t g = 4;
  ASSERT_TRUE(h->Run("movement", "px_index_check_nd_i32", 1, &g, nullptr,
                     {Mem(db), Arg(count), Arg(depth), Arg(plan), Mem(bad)}));
  EXPECT_EQ(h->Download<int32_t>(bad, 1)[0], 1);
}

TEST(PoclMovementTest, OneHot) {
  PX_POCL_HARNESS(h);
  // indices [2, 3] int64, depth 4, axis 1: out [2, 4, 3].
  const std::vector<int64_t> idx = {0, 3, -1, 2, 5, 1};
  const std::vector<uint32_t> on = {0x3f800000u}, off = {0u};
  const int64_t depth = 4, suffix = 3, n = 24;
  ClBuffer di = h->Upload(idx), don = h->Upload(on), doff = h->Upload(off), dy = h->Alloc(96);
  const size_t global = 24;
  ASSERT_TRUE(h->Run("movement", "px_one_hot_u32_i64", 1, &global, nullptr,
                     {Mem(di), Mem(don), Mem(doff), Mem(dy), Arg(depth), Arg(suffix), Arg(n)}));
  std::vector<uint32_t> want(24, 0);
  for (int p = 0; p < 2; ++p)
    for (int d = 0; d < 4; ++d)
      for (int s = 0; s < 3; ++s)
        if (idx[p * 3 + s] == d) want[(p * 4 + d) * 3 + s] = 0x3f800000u;
  EXPECT_EQ(h->Download<uint32_t>(dy, 24), want);
}

TEST(PoclMovementTest, Range) {
  PX_POCL_HARNESS(h);
  const int64_t n = 50;
  const size_t global = 50;
  const float start = -3.25f, delta = 0.37f;
  for (FloatType t : AllFloatTypes()) {
    ClBuffer dy = h->Alloc(n * ElementSize(t));
    ASSERT_TRUE(h->Run("movement", std::string("px_range_") + Suffix(t), 1, &global, nullptr,
                       {Mem(dy), Arg(n), Arg(start), Arg(delta)}));
    const std::vector<float> got = DownloadAs(h, t, dy, n);
    for (int64_t i = 0; i < n; ++i) {
      // The cpu plugin's formula in float, then rounded to the dtype.
      const float want = RoundTo(t, start + static_cast<float>(i) * delta);
      EXPECT_EQ(got[i], want) << Name(t) << " i " << i;
    }
  }
  ClBuffer d8 = h->Alloc(n);
  const int64_t istart = 100, idelta = -7;
  ASSERT_TRUE(h->Run("movement", "px_range_i8", 1, &global, nullptr,
                     {Mem(d8), Arg(n), Arg(istart), Arg(idelta)}));
  const std::vector<int8_t> got8 = h->Download<int8_t>(d8, n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got8[i], static_cast<int8_t>(istart + i * idelta));
}

TEST(PoclMovementTest, MirrorPad) {
  PX_POCL_HARNESS(h);
  // [3, 4] padded by rows (2, 1), columns (3, 2): REFLECT and SYMMETRIC.
  const std::vector<uint64_t> x = Iota<uint64_t>(12);
  const int64_t in[2] = {3, 4}, before[2] = {2, 3}, after[2] = {1, 2};
  for (int symmetric : {0, 1}) {
    if (!symmetric) {
      // REFLECT allows padding up to size - 1 (rows: 2, columns: 3).
    }
    px_xpu_mirror_plan plan{};
    int64_t n = 1;
    for (int d = 0; d < 2; ++d) {
      plan.in_dims[d] = in[d];
      plan.out_dims[d] = in[d] + before[d] + after[d];
      plan.before[d] = before[d];
      n *= plan.out_dims[d];
    }
    plan.in_strides[0] = 4;
    plan.in_strides[1] = 1;
    ClBuffer dx = h->Upload(x), dy = h->Alloc(n * 8);
    const int32_t rank = 2;
    const size_t global = static_cast<size_t>(n);
    ASSERT_TRUE(h->Run("movement", "px_mirror_pad_u64", 1, &global, nullptr,
                       {Mem(dx), Mem(dy), Arg(n), Arg(rank), Arg(plan), Arg(symmetric)}));
    std::vector<uint64_t> want;
    auto map = [&](int64_t c, int64_t m) {
      if (c < 0) return symmetric ? -c - 1 : -c;
      if (c >= m) return symmetric ? 2 * m - 1 - c : 2 * m - 2 - c;
      return c;
    };
    for (int64_t i = 0; i < plan.out_dims[0]; ++i)
      for (int64_t j = 0; j < plan.out_dims[1]; ++j)
        want.push_back(x[map(i - 2, 3) * 4 + map(j - 3, 4)]);
    EXPECT_EQ(h->Download<uint64_t>(dy, n), want) << "symmetric " << symmetric;
  }
}

TEST(PoclMovementTest, SpaceToBatchAndBack) {
  PX_POCL_HARNESS(h);
  // Space side [2, 5, 4, 3] (batch, h, w, rest), block [2, 2], paddings
  // h (1, 0), w (1, 1): grid [3, 3]; batch side [8, 3, 3, 3].
  const int64_t batch = 2, sh = 5, sw = 4, rest = 3, bh = 2, bw = 2, ph = 1, pw = 1;
  const int64_t gh = (sh + 1 + 0) / bh, gw = (sw + 1 + 1) / bw;
  const std::vector<uint8_t> x = Iota<uint8_t>(batch * sh * sw * rest);
  px_xpu_space_batch_plan plan{};
  plan.block[0] = bh;
  plan.block[1] = bw;
  plan.space[0] = sh;
  plan.space[1] = sw;
  plan.grid[0] = gh;
  plan.grid[1] = gw;
  plan.pad[0] = ph;
  plan.pad[1] = pw;
  const int64_t n = bh * bw * batch * gh * gw * rest;
  const int32_t m = 2;
  ClBuffer dx = h->Upload(x), dy = h->Alloc(n);
  const size_t global = static_cast<size_t>(n);
  ASSERT_TRUE(h->Run("movement", "px_space_batch_u8", 1, &global, nullptr,
                     {Mem(dx), Mem(dy), Arg(n), Arg(m), Arg(plan), Arg(batch), Arg(rest),
                      Arg(int32_t{1})}));
  std::vector<uint8_t> want;
  for (int64_t oy = 0; oy < bh; ++oy)
    for (int64_t ox = 0; ox < bw; ++ox)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t gy = 0; gy < gh; ++gy)
          for (int64_t gx = 0; gx < gw; ++gx)
            for (int64_t e = 0; e < rest; ++e) {
              const int64_t y = gy * bh + oy - ph, xx = gx * bw + ox - pw;
              want.push_back(y < 0 || y >= sh || xx < 0 || xx >= sw
                                 ? 0
                                 : x[((b * sh + y) * sw + xx) * rest + e]);
            }
  const std::vector<uint8_t> batched = h->Download<uint8_t>(dy, n);
  EXPECT_EQ(batched, want);
  // BatchToSpaceND with the same crops gives the input back.
  px_xpu_space_batch_plan back = plan;
  const int64_t back_n = batch * sh * sw * rest;
  ClBuffer dz = h->Alloc(back_n);
  const size_t back_global = static_cast<size_t>(back_n);
  ASSERT_TRUE(h->Run("movement", "px_space_batch_u8", 1, &back_global, nullptr,
                     {Mem(dy), Mem(dz), Arg(back_n), Arg(m), Arg(back), Arg(batch), Arg(rest),
                      Arg(int32_t{0})}));
  EXPECT_EQ(h->Download<uint8_t>(dz, back_n), x);
}

}  // namespace
}  // namespace plexus::xpu::test
