// Per-op tests of the fused ops the graph optimizer creates (_FusedMatMul,
// _FusedConv2D, _FusedDepthwiseConv2dNative, and the plain
// DepthwiseConv2dNative that shares its cpu kernel): cpu kernels against the reference kernels, exact values,
// the fused cpu kernels against the same ops run as separate nodes, and the
// combinations and arguments the kernels refuse.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph.pb.h"
#include "op_test_util.h"
#include "plexus/graph_import.h"

namespace plexus::testing {
namespace {

using Ints = std::vector<int64_t>;
using Names = std::vector<std::string>;

const Names kActivations = {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};

tf::AttrValue StringList(const Names& names) {
  tf::AttrValue v;
  auto* list = v.mutable_list();  // an empty list too
  for (const std::string& s : names) list->add_s(s);
  return v;
}

Names FusedOps(const std::string& first, const std::string& activation) {
  return activation.empty() ? Names{first} : Names{first, activation};
}

// The products sum up to ~30 terms: float results may differ from the
// double reference by a few 1e-5 where the bias cancels them towards zero.
Tolerance FusedTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-4;
  return tol;
}

// Expects the case to succeed on the reference, then compares the cpu.
void Check(const OpCase& c) {
  auto r = c.Run("REF:0");
  ASSERT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  ExpectCpuMatchesReference(c, FusedTolerance(r->at(0).dtype()));
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = ElementAsDouble(t, i);
  return v;
}

std::vector<double> RunCpu(const OpCase& c) {
  auto r = c.Run("CPU:0");
  EXPECT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  if (!r.ok()) return {};
  return Values((*r)[0]);
}

OpCase FusedMatMul(Tensor a, Tensor b, std::vector<Tensor> args, const Names& ops, bool ta = false,
                   bool tb = false) {
  OpCase c("_FusedMatMul");
  const DataType t = a.dtype();
  c.Input(std::move(a)).Input(std::move(b));
  const int64_t num_args = static_cast<int64_t>(args.size());
  for (Tensor& arg : args) c.Input(std::move(arg));
  c.Attr("T", t)
      .Attr("num_args", num_args)
      .Attr("fused_ops", StringList(ops))
      .Attr("transpose_a", ta)
      .Attr("transpose_b", tb);
  return c;
}

Ints Spatial(const std::string& format, int64_t h, int64_t w) {
  return format == "NCHW" ? Ints{1, 1, h, w} : Ints{1, h, w, 1};
}
Shape ImageShape(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c) {
  return format == "NCHW" ? Shape{n, c, h, w} : Shape{n, h, w, c};
}

OpCase FusedConv(Tensor x, Tensor f, std::vector<Tensor> args, const Names& ops,
                 const std::string& format, const std::string& padding, int64_t sh, int64_t sw,
                 int64_t dh = 1, int64_t dw = 1) {
  OpCase c("_FusedConv2D");
  const DataType t = x.dtype();
  c.Input(std::move(x)).Input(std::move(f));
  const int64_t num_args = static_cast<int64_t>(args.size());
  for (Tensor& arg : args) c.Input(std::move(arg));
  c.Attr("T", t)
      .Attr("num_args", num_args)
      .Attr("fused_ops", StringList(ops))
      .Attr("data_format", format)
      .Attr("padding", padding)
      .Attr("strides", Spatial(format, sh, sw))
      .Attr("dilations", Spatial(format, dh, dw));
  if (padding == "EXPLICIT") {
    // Top 1, bottom 2, left 2, right 0.
    c.Attr("explicit_paddings",
           format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 2, 0} : Ints{0, 0, 1, 2, 2, 0, 0, 0});
  }
  return c;
}

// Random arguments for `ops` over `channels`: the bias, or scale, offset,
// mean and a positive variance.
std::vector<Tensor> Args(DataType t, const Names& ops, int64_t channels, std::mt19937& rng) {
  if (ops[0] == "BiasAdd") return {RandomTensor(t, {channels}, rng)};
  return {RandomTensor(t, {channels}, rng), RandomTensor(t, {channels}, rng),
          RandomTensor(t, {channels}, rng), RandomTensor(t, {channels}, rng, 0.25, 3)};
}

// ---------------------------------------------------------------------------
// _FusedMatMul
// ---------------------------------------------------------------------------

TEST(FusedMatMul, EveryCombinationMatchesReference) {
  std::mt19937 rng(1);
  for (DataType t : FloatTypes()) {
    int variant = 0;
    for (const std::string& act : kActivations) {
      for (bool ta : {false, true}) {
        const bool tb = (variant++ % 3) == 1;
        const int64_t m = 5, k = 7, n = 6;
        Check(FusedMatMul(RandomTensor(t, ta ? Shape{k, m} : Shape{m, k}, rng),
                          RandomTensor(t, tb ? Shape{n, k} : Shape{k, n}, rng),
                          {RandomTensor(t, {n}, rng)}, FusedOps("BiasAdd", act), ta, tb));
      }
    }
  }
}

TEST(FusedMatMul, EdgeShapesAndAttributes) {
  std::mt19937 rng(2);
  for (DataType t : FloatTypes()) {
    // Zero-size m and n, empty k (the bias and activation of zeros).
    Check(FusedMatMul(RandomTensor(t, {0, 3}, rng), RandomTensor(t, {3, 4}, rng),
                      {RandomTensor(t, {4}, rng)}, {"BiasAdd", "Relu"}));
    Check(FusedMatMul(RandomTensor(t, {3, 4}, rng), RandomTensor(t, {4, 0}, rng),
                      {RandomTensor(t, {0}, rng)}, {"BiasAdd"}));
    Check(FusedMatMul(RandomTensor(t, {3, 0}, rng), RandomTensor(t, {0, 5}, rng),
                      {RandomTensor(t, {5}, rng)}, {"BiasAdd", "Elu"}));
    // Vectors: [1,k] x [k,1].
    Check(FusedMatMul(RandomTensor(t, {1, 9}, rng), RandomTensor(t, {9, 1}, rng),
                      {RandomTensor(t, {1}, rng)}, {"BiasAdd", "Tanh"}));
    // LeakyRelu's alpha.
    OpCase leaky = FusedMatMul(RandomTensor(t, {4, 5}, rng), RandomTensor(t, {5, 6}, rng),
                               {RandomTensor(t, {6}, rng)}, {"BiasAdd", "LeakyRelu"});
    leaky.Attr("leakyrelu_alpha", 0.05f);
    Check(leaky);
  }
}

// Enough rows for several Gemm blocks (256 rows each at n = 300), with and
// without transpose_a (whose rows are copied contiguous first).
TEST(FusedMatMul, SeveralRowBlocks) {
  std::mt19937 rng(3);
  for (DataType t : {DataType::kFloat, DataType::kHalf}) {
    for (bool ta : {false, true}) {
      const int64_t m = 600, k = 8, n = 300;
      Check(FusedMatMul(RandomTensor(t, ta ? Shape{k, m} : Shape{m, k}, rng),
                        RandomTensor(t, {k, n}, rng), {RandomTensor(t, {n}, rng)},
                        {"BiasAdd", "Sigmoid"}, ta, false));
    }
  }
}

TEST(FusedMatMul, ExactValues) {
  // [[1,2],[3,4]] x identity + [-2, -5], then Relu: [[0,0],[1,0]]; Relu6
  // clips 7 - 0 to 6; LeakyRelu scales the negatives by alpha.
  const Tensor a = MakeTensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  const Tensor eye = MakeTensor(DataType::kFloat, {2, 2}, {1, 0, 0, 1});
  const Tensor bias = MakeTensor(DataType::kFloat, {2}, {-2, -5});
  EXPECT_EQ(RunCpu(FusedMatMul(a, eye, {bias}, {"BiasAdd", "Relu"})),
            (std::vector<double>{0, 0, 1, 0}));
  EXPECT_EQ(RunCpu(FusedMatMul(a, eye, {bias}, {"BiasAdd"})),
            (std::vector<double>{-1, -3, 1, -1}));
  const Tensor big = MakeTensor(DataType::kFloat, {2}, {6, 0});
  EXPECT_EQ(RunCpu(FusedMatMul(a, eye, {big}, {"BiasAdd", "Relu6"})),
            (std::vector<double>{6, 2, 6, 4}));
  OpCase leaky = FusedMatMul(a, eye, {bias}, {"BiasAdd", "LeakyRelu"});
  leaky.Attr("leakyrelu_alpha", 0.5f);
  EXPECT_EQ(RunCpu(leaky), (std::vector<double>{-0.5, -1.5, 1, -0.5}));
  // transpose_a: [[1,3],[2,4]] x identity.
  EXPECT_EQ(RunCpu(FusedMatMul(a, eye, {bias}, {"BiasAdd"}, true, false)),
            (std::vector<double>{-1, -2, 0, -1}));
}

// ---------------------------------------------------------------------------
// _FusedConv2D
// ---------------------------------------------------------------------------

TEST(FusedConv2D, EveryCombinationMatchesReference) {
  std::mt19937 rng(4);
  struct Geometry {
    std::string format, padding;
    int64_t n, h, w, kh, kw, sh, sw, dh, dw, out;
  };
  const std::vector<Geometry> geometries = {
      {"NHWC", "VALID", 2, 6, 7, 3, 3, 1, 1, 1, 1, 4},
      {"NCHW", "SAME", 1, 7, 8, 2, 3, 2, 1, 1, 1, 3},
      {"NHWC", "EXPLICIT", 1, 5, 6, 3, 2, 2, 1, 1, 1, 2},
      {"NCHW", "VALID", 1, 7, 7, 3, 3, 1, 1, 2, 2, 2},
      {"NHWC", "SAME", 1, 8, 6, 2, 2, 3, 1, 2, 1, 5},
      {"NHWC", "VALID", 2, 5, 5, 1, 1, 1, 1, 1, 1, 4},  // 1x1: no patches
      {"NCHW", "EXPLICIT", 1, 4, 5, 2, 2, 1, 2, 1, 1, 3},
  };
  for (DataType t : FloatTypes()) {
    size_t next = 0;
    for (const char* first : {"BiasAdd", "FusedBatchNorm"}) {
      for (const std::string& act : kActivations) {
        // Each combination in two geometries.
        for (int rep = 0; rep < 2; ++rep) {
          const Geometry& g = geometries[next++ % geometries.size()];
          const Names ops = FusedOps(first, act);
          const int64_t c_in = 3;
          Check(FusedConv(RandomTensor(t, ImageShape(g.format, g.n, g.h, g.w, c_in), rng, -2, 2),
                          RandomTensor(t, {g.kh, g.kw, c_in, g.out}, rng, -2, 2),
                          Args(t, ops, g.out, rng), ops, g.format, g.padding, g.sh, g.sw, g.dh,
                          g.dw));
        }
      }
    }
  }
}

TEST(FusedConv2D, EdgeShapesAndAttributes) {
  std::mt19937 rng(5);
  for (DataType t : FloatTypes()) {
    // Zero-size batch, zero output channels.
    Check(FusedConv(RandomTensor(t, {0, 5, 5, 3}, rng), RandomTensor(t, {3, 3, 3, 2}, rng),
                    Args(t, {"BiasAdd"}, 2, rng), {"BiasAdd", "Relu"}, "NHWC", "SAME", 2, 2));
    Check(FusedConv(RandomTensor(t, {1, 3, 4, 4}, rng), RandomTensor(t, {3, 3, 3, 0}, rng),
                    Args(t, {"FusedBatchNorm"}, 0, rng), {"FusedBatchNorm"}, "NCHW", "VALID", 1,
                    1));
    // epsilon and leakyrelu_alpha.
    OpCase eps = FusedConv(RandomTensor(t, {1, 5, 5, 3}, rng), RandomTensor(t, {2, 2, 3, 4}, rng),
                           Args(t, {"FusedBatchNorm"}, 4, rng), {"FusedBatchNorm", "Elu"}, "NHWC",
                           "SAME", 1, 1);
    eps.Attr("epsilon", 0.5f);
    Check(eps);
    OpCase leaky = FusedConv(RandomTensor(t, {1, 3, 5, 5}, rng),
                             RandomTensor(t, {2, 2, 3, 4}, rng), Args(t, {"BiasAdd"}, 4, rng),
                             {"BiasAdd", "LeakyRelu"}, "NCHW", "VALID", 1, 1);
    leaky.Attr("leakyrelu_alpha", 0.3f);
    Check(leaky);
  }
}

// Grouped convolutions (filter input depth c / groups): float through one
// oneDNN primitive with post-ops, the other types a group at a time and the
// epilogue after.
TEST(FusedConv2D, GroupedMatchesReference) {
  std::mt19937 rng(14);
  struct Geometry {
    std::string format, padding;
    int64_t h, w, kh, kw, sh, sw, dh, dw, f_in;
  };
  const std::vector<Geometry> geometries = {
      {"NHWC", "VALID", 6, 7, 3, 3, 1, 1, 1, 1, 2}, {"NCHW", "SAME", 7, 8, 2, 3, 2, 1, 1, 1, 1},
      {"NHWC", "EXPLICIT", 5, 6, 3, 2, 2, 1, 1, 1, 2}, {"NHWC", "SAME", 7, 7, 3, 3, 1, 1, 2, 2, 1},
      {"NHWC", "VALID", 5, 5, 1, 1, 1, 1, 1, 1, 2},
  };
  for (DataType t : FloatTypes()) {
    size_t next = 0;
    for (const char* first : {"BiasAdd", "FusedBatchNorm"}) {
      for (const std::string& act : kActivations) {
        const Geometry& g = geometries[next++ % geometries.size()];
        const Names ops = FusedOps(first, act);
        const int64_t c_in = 4, out = 8;  // 2 or 4 groups
        Check(FusedConv(RandomTensor(t, ImageShape(g.format, 2, g.h, g.w, c_in), rng, -2, 2),
                        RandomTensor(t, {g.kh, g.kw, g.f_in, out}, rng, -2, 2),
                        Args(t, ops, out, rng), ops, g.format, g.padding, g.sh, g.sw, g.dh,
                        g.dw));
      }
    }
  }
}

// 10000 output rows: more than one block of patches (2^18 / 27 rows each).
TEST(FusedConv2D, SeveralPatchBlocks) {
  std::mt19937 rng(6);
  const DataType t = DataType::kFloat;
  Check(FusedConv(RandomTensor(t, {1, 100, 100, 3}, rng), RandomTensor(t, {3, 3, 3, 4}, rng),
                  Args(t, {"FusedBatchNorm"}, 4, rng), {"FusedBatchNorm", "Relu6"}, "NHWC", "SAME",
                  1, 1));
}

TEST(FusedConv2D, ExactValues) {
  // A 1x1 identity filter over two channels [1, 2]: batch norm with scale
  // [2, 1], offset [0, 1], mean [1, 0], variance [4, 1] and epsilon 0 gives
  // (1 - 1) * 2 / 2 + 0 = 0 and (2 - 0) * 1 / 1 + 1 = 3.
  const DataType t = DataType::kFloat;
  const Tensor x = MakeTensor(t, {1, 1, 1, 2}, {1, 2});
  const Tensor eye = MakeTensor(t, {1, 1, 2, 2}, {1, 0, 0, 1});
  OpCase bn = FusedConv(x, eye,
                        {MakeTensor(t, {2}, {2, 1}), MakeTensor(t, {2}, {0, 1}),
                         MakeTensor(t, {2}, {1, 0}), MakeTensor(t, {2}, {4, 1})},
                        {"FusedBatchNorm"}, "NHWC", "VALID", 1, 1);
  bn.Attr("epsilon", 0.0f);
  EXPECT_EQ(RunCpu(bn), (std::vector<double>{0, 3}));
  // Bias [-3, 1] then Relu: [0, 3].
  EXPECT_EQ(RunCpu(FusedConv(x, eye, {MakeTensor(t, {2}, {-3, 1})}, {"BiasAdd", "Relu"}, "NHWC",
                             "VALID", 1, 1)),
            (std::vector<double>{0, 3}));
}

// ---------------------------------------------------------------------------
// _FusedDepthwiseConv2dNative and DepthwiseConv2dNative
// ---------------------------------------------------------------------------

// With no ops, the plain DepthwiseConv2dNative.
OpCase FusedDepthwise(Tensor x, Tensor f, std::vector<Tensor> args, const Names& ops,
                      const std::string& format, const std::string& padding, int64_t sh,
                      int64_t sw, int64_t dh = 1, int64_t dw = 1) {
  OpCase c(ops.empty() ? "DepthwiseConv2dNative" : "_FusedDepthwiseConv2dNative");
  const DataType t = x.dtype();
  c.Input(std::move(x)).Input(std::move(f));
  const int64_t num_args = static_cast<int64_t>(args.size());
  for (Tensor& arg : args) c.Input(std::move(arg));
  c.Attr("T", t)
      .Attr("data_format", format)
      .Attr("padding", padding)
      .Attr("strides", Spatial(format, sh, sw))
      .Attr("dilations", Spatial(format, dh, dw));
  if (!ops.empty()) c.Attr("num_args", num_args).Attr("fused_ops", StringList(ops));
  if (padding == "EXPLICIT") {
    // Top 1, bottom 2, left 2, right 0.
    c.Attr("explicit_paddings",
           format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 2, 0} : Ints{0, 0, 1, 2, 2, 0, 0, 0});
  }
  return c;
}

struct DwGeometry {
  std::string format, padding;
  int64_t n, h, w, c, kh, kw, sh, sw, dh, dw, mult;
};

// The float kernel's cases: channels in whole 16-lane vectors, with a tail
// (40 = 2 * 16 + 8) or fewer than one (3); rows of 1 to 19 output pixels
// (blocks of 8, 4 and 2 plus the rest); padding on every side, strides and
// dilations; the general loops for multiplier 2.
const std::vector<DwGeometry>& DwGeometries() {
  static const std::vector<DwGeometry> kGeometries = {
      {"NHWC", "SAME", 2, 7, 5, 16, 3, 3, 1, 1, 1, 1, 1},
      {"NHWC", "VALID", 1, 6, 19, 40, 3, 3, 1, 1, 1, 1, 1},
      {"NCHW", "SAME", 1, 7, 8, 3, 2, 3, 2, 1, 1, 1, 1},
      {"NHWC", "EXPLICIT", 1, 5, 6, 20, 3, 2, 2, 1, 1, 1, 1},
      {"NHWC", "SAME", 1, 9, 11, 33, 3, 3, 2, 3, 2, 2, 1},
      {"NCHW", "VALID", 1, 7, 7, 5, 3, 3, 1, 1, 2, 2, 2},
      {"NHWC", "SAME", 2, 4, 9, 17, 5, 5, 1, 1, 1, 1, 1},  // taps wider than the image
      {"NHWC", "VALID", 1, 3, 1, 32, 1, 1, 1, 1, 1, 1, 1},  // 1x1, one pixel per row
      {"NHWC", "SAME", 1, 5, 6, 4, 3, 3, 1, 2, 1, 1, 3},
  };
  return kGeometries;
}

TEST(FusedDepthwiseConv2dNative, EveryCombinationMatchesReference) {
  std::mt19937 rng(11);
  for (DataType t : FloatTypes()) {
    size_t next = 0;
    for (const char* first : {"BiasAdd", "FusedBatchNorm"}) {
      for (const std::string& act : kActivations) {
        // Each combination in three geometries.
        for (int rep = 0; rep < 3; ++rep) {
          const DwGeometry& g = DwGeometries()[next++ % DwGeometries().size()];
          const Names ops = FusedOps(first, act);
          Check(FusedDepthwise(RandomTensor(t, ImageShape(g.format, g.n, g.h, g.w, g.c), rng, -2, 2),
                               RandomTensor(t, {g.kh, g.kw, g.c, g.mult}, rng, -2, 2),
                               Args(t, ops, g.c * g.mult, rng), ops, g.format, g.padding, g.sh,
                               g.sw, g.dh, g.dw));
        }
      }
    }
  }
}

// The plain op runs the same kernels without the epilogue.
TEST(FusedDepthwiseConv2dNative, PlainDepthwiseMatchesReferenceInEveryGeometry) {
  std::mt19937 rng(12);
  for (DataType t : FloatTypes()) {
    for (const DwGeometry& g : DwGeometries()) {
      Check(FusedDepthwise(RandomTensor(t, ImageShape(g.format, g.n, g.h, g.w, g.c), rng, -2, 2),
                           RandomTensor(t, {g.kh, g.kw, g.c, g.mult}, rng, -2, 2), {}, {},
                           g.format, g.padding, g.sh, g.sw, g.dh, g.dw));
    }
  }
}

TEST(FusedDepthwiseConv2dNative, EdgeShapesAndAttributes) {
  std::mt19937 rng(13);
  for (DataType t : FloatTypes()) {
    // Zero-size batch, zero channels, a zero channel multiplier.
    Check(FusedDepthwise(RandomTensor(t, {0, 5, 5, 3}, rng), RandomTensor(t, {3, 3, 3, 1}, rng),
                         Args(t, {"BiasAdd"}, 3, rng), {"BiasAdd", "Relu"}, "NHWC", "SAME", 2, 2));
    Check(FusedDepthwise(RandomTensor(t, {1, 4, 4, 0}, rng), RandomTensor(t, {3, 3, 0, 1}, rng),
                         Args(t, {"BiasAdd"}, 0, rng), {"BiasAdd"}, "NHWC", "SAME", 1, 1));
    Check(FusedDepthwise(RandomTensor(t, {1, 3, 4, 4}, rng), RandomTensor(t, {3, 3, 3, 0}, rng),
                         Args(t, {"FusedBatchNorm"}, 0, rng), {"FusedBatchNorm"}, "NCHW", "VALID",
                         1, 1));
    // epsilon and leakyrelu_alpha.
    OpCase eps = FusedDepthwise(RandomTensor(t, {1, 5, 5, 18}, rng),
                                RandomTensor(t, {2, 2, 18, 1}, rng),
                                Args(t, {"FusedBatchNorm"}, 18, rng), {"FusedBatchNorm", "Elu"},
                                "NHWC", "SAME", 1, 1);
    eps.Attr("epsilon", 0.5f);
    Check(eps);
    OpCase leaky = FusedDepthwise(RandomTensor(t, {1, 5, 5, 17}, rng),
                                  RandomTensor(t, {2, 2, 17, 1}, rng), Args(t, {"BiasAdd"}, 17, rng),
                                  {"BiasAdd", "LeakyRelu"}, "NHWC", "VALID", 1, 1);
    leaky.Attr("leakyrelu_alpha", 0.3f);
    Check(leaky);
  }
}

// Enough rows to run on several threads, as in the keyword-spotting graphs.
TEST(FusedDepthwiseConv2dNative, LargeBatchOnSeveralThreads) {
  std::mt19937 rng(14);
  const DataType t = DataType::kFloat;
  Check(FusedDepthwise(RandomTensor(t, {16, 25, 5, 64}, rng), RandomTensor(t, {3, 3, 64, 1}, rng),
                       Args(t, {"FusedBatchNorm"}, 64, rng), {"FusedBatchNorm", "Relu"}, "NHWC",
                       "SAME", 1, 1));
  Check(FusedDepthwise(RandomTensor(t, {16, 25, 5, 64}, rng), RandomTensor(t, {3, 3, 64, 1}, rng),
                       Args(t, {"BiasAdd"}, 64, rng), {"BiasAdd", "Sigmoid"}, "NHWC", "SAME", 1, 1));
}

TEST(FusedDepthwiseConv2dNative, ExactValues) {
  // One 3x1 image of 2 channels, a 2x1 filter: channel 0 sums [1, 2] with
  // taps [1, 1] = 3, [2, 4] = 6; channel 1 [10, 20] with [1, -1] = -10,
  // [20, 40] = -20 (VALID: two output rows).
  const DataType t = DataType::kFloat;
  const Tensor x = MakeTensor(t, {1, 3, 1, 2}, {1, 10, 2, 20, 4, 40});
  const Tensor f = MakeTensor(t, {2, 1, 2, 1}, {1, 1, 1, -1});
  EXPECT_EQ(RunCpu(FusedDepthwise(x, f, {}, {}, "NHWC", "VALID", 1, 1)),
            (std::vector<double>{3, -10, 6, -20}));
  // Bias [-4, 15] then Relu: [0, 5, 2, 0].
  EXPECT_EQ(RunCpu(FusedDepthwise(x, f, {MakeTensor(t, {2}, {-4, 15})}, {"BiasAdd", "Relu"},
                                  "NHWC", "VALID", 1, 1)),
            (std::vector<double>{0, 5, 2, 0}));
  // Batch norm, scale [2, 1], offset [0, 1], mean [3, 0], variance [4, 1],
  // epsilon 0: (v - 3) * 2 / 2 and v + 1; Relu6 clips.
  OpCase bn = FusedDepthwise(x, f,
                             {MakeTensor(t, {2}, {2, 1}), MakeTensor(t, {2}, {0, 1}),
                              MakeTensor(t, {2}, {3, 0}), MakeTensor(t, {2}, {4, 1})},
                             {"FusedBatchNorm", "Relu6"}, "NHWC", "VALID", 1, 1);
  bn.Attr("epsilon", 0.0f);
  EXPECT_EQ(RunCpu(bn), (std::vector<double>{0, 0, 3, 0}));
  // SAME padding, 2 pixels wide: the taps outside the image read zeros.
  const Tensor row = MakeTensor(t, {1, 1, 2, 1}, {1, 2});
  const Tensor taps = MakeTensor(t, {1, 3, 1, 1}, {1, 10, 100});
  EXPECT_EQ(RunCpu(FusedDepthwise(row, taps, {MakeTensor(t, {1}, {0})}, {"BiasAdd"}, "NHWC",
                                  "SAME", 1, 1)),
            (std::vector<double>{210, 21}));
}

// ---------------------------------------------------------------------------
// Fused kernels against the separate nodes, both on the cpu plugin
// ---------------------------------------------------------------------------

tf::NodeDef* AddNode(tf::GraphDef* def, const std::string& name, const std::string& op,
                     const std::vector<std::string>& inputs, DataType t) {
  tf::NodeDef* node = def->add_node();
  node->set_name(name);
  node->set_op(op);
  for (const std::string& in : inputs) node->add_input(in);
  (*node->mutable_attr())[op == "Placeholder" ? "dtype" : "T"].set_type(
      static_cast<tf::DataType>(t));
  return node;
}

// Runs `def` on CPU:0 without the graph optimizer (which would fuse the
// separate nodes) and returns `fetch`.
Tensor RunGraphOnCpu(const tf::GraphDef& def,
                     const std::vector<std::pair<std::string, Tensor>>& feeds,
                     const std::string& fetch) {
  auto graph = ImportGraphDef(def, "<fused test>");
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return Tensor();
  SessionOptions options;
  options.device = "CPU:0";
  options.optimizer.enabled = false;
  auto session = Session::Create(&OpTestRuntime(), std::shared_ptr<const Graph>(std::move(*graph)),
                                 options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return Tensor();
  auto result = (*session)->Run(feeds, {fetch});
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE((*session)->placement_notes().empty());
  if (!result.ok()) return Tensor();
  return (*result)[0];
}

TEST(FusedMatMul, EqualsMatMulBiasAddReluAsSeparateNodes) {
  std::mt19937 rng(7);
  const DataType t = DataType::kFloat;
  const Tensor a = RandomTensor(t, {64, 96}, rng);
  const Tensor b = RandomTensor(t, {96, 80}, rng);
  const Tensor bias = RandomTensor(t, {80}, rng);
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"a:0", a}, {"b:0", b}, {"bias:0", bias}};

  tf::GraphDef separate;
  AddNode(&separate, "a", "Placeholder", {}, t);
  AddNode(&separate, "b", "Placeholder", {}, t);
  AddNode(&separate, "bias", "Placeholder", {}, t);
  AddNode(&separate, "mm", "MatMul", {"a", "b"}, t);
  AddNode(&separate, "ba", "BiasAdd", {"mm", "bias"}, t);
  AddNode(&separate, "relu", "Relu", {"ba"}, t);
  const Tensor want = RunGraphOnCpu(separate, feeds, "relu:0");

  tf::GraphDef fused;
  AddNode(&fused, "a", "Placeholder", {}, t);
  AddNode(&fused, "b", "Placeholder", {}, t);
  AddNode(&fused, "bias", "Placeholder", {}, t);
  tf::NodeDef* node = AddNode(&fused, "fused", "_FusedMatMul", {"a", "b", "bias"}, t);
  (*node->mutable_attr())["num_args"].set_i(1);
  (*node->mutable_attr())["fused_ops"] = StringList({"BiasAdd", "Relu"});
  const Tensor got = RunGraphOnCpu(fused, feeds, "fused:0");

  ASSERT_EQ(got.shape(), (Shape{64, 80}));
  // The same Gemm computes both products: only the order of the bias and
  // the activation could differ, and it does not.
  EXPECT_TRUE(CompareTensors(got, want, {1e-6, 1e-6}).ok())
      << CompareTensors(got, want, {1e-6, 1e-6});
  int positive = 0;
  for (double v : Values(got)) positive += v > 0;
  EXPECT_GT(positive, 0);
  EXPECT_LT(positive, 64 * 80);
}

TEST(FusedConv2D, EqualsConvBatchNormReluAsSeparateNodes) {
  std::mt19937 rng(8);
  const DataType t = DataType::kFloat;
  const Tensor x = RandomTensor(t, {2, 9, 8, 3}, rng);
  const Tensor f = RandomTensor(t, {3, 3, 3, 5}, rng);
  const Tensor scale = RandomTensor(t, {5}, rng);
  const Tensor offset = RandomTensor(t, {5}, rng);
  const Tensor mean = RandomTensor(t, {5}, rng);
  const Tensor variance = RandomTensor(t, {5}, rng, 0.25, 3);
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"x:0", x},         {"f:0", f},       {"scale:0", scale},
      {"offset:0", offset}, {"mean:0", mean}, {"variance:0", variance}};
  auto inputs = [](tf::GraphDef* def, DataType t) {
    for (const char* name : {"x", "f", "scale", "offset", "mean", "variance"}) {
      AddNode(def, name, "Placeholder", {}, t);
    }
  };
  auto conv_attrs = [](tf::NodeDef* node) {
    auto& attrs = *node->mutable_attr();
    attrs["padding"].set_s("SAME");
    for (int64_t s : {1, 2, 2, 1}) attrs["strides"].mutable_list()->add_i(s);
  };

  tf::GraphDef separate;
  inputs(&separate, t);
  conv_attrs(AddNode(&separate, "conv", "Conv2D", {"x", "f"}, t));
  tf::NodeDef* bn = AddNode(&separate, "bn", "FusedBatchNormV3",
                            {"conv", "scale", "offset", "mean", "variance"}, t);
  (*bn->mutable_attr())["U"].set_type(tf::DT_FLOAT);
  (*bn->mutable_attr())["is_training"].set_b(false);
  (*bn->mutable_attr())["epsilon"].set_f(0.001f);
  AddNode(&separate, "relu", "Relu", {"bn"}, t);
  const Tensor want = RunGraphOnCpu(separate, feeds, "relu:0");

  tf::GraphDef fused;
  inputs(&fused, t);
  tf::NodeDef* node = AddNode(&fused, "fused", "_FusedConv2D",
                              {"x", "f", "scale", "offset", "mean", "variance"}, t);
  conv_attrs(node);
  (*node->mutable_attr())["num_args"].set_i(4);
  (*node->mutable_attr())["fused_ops"] = StringList({"FusedBatchNorm", "Relu"});
  (*node->mutable_attr())["epsilon"].set_f(0.001f);
  const Tensor got = RunGraphOnCpu(fused, feeds, "fused:0");

  ASSERT_EQ(got.shape(), (Shape{2, 5, 4, 5}));
  // Batch norm folds scale / sqrt(variance + epsilon) into one factor here:
  // a few float roundings apart.
  EXPECT_TRUE(CompareTensors(got, want, {1e-5, 1e-5}).ok())
      << CompareTensors(got, want, {1e-5, 1e-5});
}

// Depthwise + BiasAdd + Relu as separate nodes, against the fused kernel;
// with the optimizer on (constant filter and bias), the pass fuses them.
TEST(FusedDepthwiseConv2dNative, EqualsDepthwiseBiasAddReluAndTheOptimizerFusesThem) {
  std::mt19937 rng(15);
  const DataType t = DataType::kFloat;
  const Tensor x = RandomTensor(t, {4, 9, 7, 24}, rng);
  const Tensor f = RandomTensor(t, {3, 3, 24, 1}, rng);
  const Tensor bias = RandomTensor(t, {24}, rng);
  auto conv_attrs = [](tf::NodeDef* node) {
    auto& attrs = *node->mutable_attr();
    attrs["padding"].set_s("SAME");
    for (int64_t s : {1, 1, 1, 1}) attrs["strides"].mutable_list()->add_i(s);
  };
  auto add_const = [](tf::GraphDef* def, const std::string& name, const Tensor& value) {
    tf::NodeDef* node = def->add_node();
    node->set_name(name);
    node->set_op("Const");
    auto& attrs = *node->mutable_attr();
    attrs["dtype"].set_type(tf::DT_FLOAT);
    tf::TensorProto* proto = attrs["value"].mutable_tensor();
    proto->set_dtype(tf::DT_FLOAT);
    for (int64_t d : value.shape()) proto->mutable_tensor_shape()->add_dim()->set_size(d);
    for (int64_t i = 0; i < value.num_elements(); ++i) proto->add_float_val(value.data<float>()[i]);
  };

  tf::GraphDef separate;
  AddNode(&separate, "x", "Placeholder", {}, t);
  add_const(&separate, "f", f);
  add_const(&separate, "bias", bias);
  conv_attrs(AddNode(&separate, "dw", "DepthwiseConv2dNative", {"x", "f"}, t));
  AddNode(&separate, "ba", "BiasAdd", {"dw", "bias"}, t);
  AddNode(&separate, "relu", "Relu", {"ba"}, t);
  const Tensor want = RunGraphOnCpu(separate, {{"x:0", x}}, "relu:0");

  tf::GraphDef fused;
  AddNode(&fused, "x", "Placeholder", {}, t);
  add_const(&fused, "f", f);
  add_const(&fused, "bias", bias);
  tf::NodeDef* node = AddNode(&fused, "fused", "_FusedDepthwiseConv2dNative", {"x", "f", "bias"}, t);
  conv_attrs(node);
  (*node->mutable_attr())["num_args"].set_i(1);
  (*node->mutable_attr())["fused_ops"] = StringList({"BiasAdd", "Relu"});
  const Tensor got = RunGraphOnCpu(fused, {{"x:0", x}}, "fused:0");
  ASSERT_EQ(got.shape(), (Shape{4, 9, 7, 24}));
  // The same products in the same order; the bias and Relu in registers.
  EXPECT_TRUE(CompareTensors(got, want, {1e-6, 1e-6}).ok())
      << CompareTensors(got, want, {1e-6, 1e-6});

  // The optimizer rewrites the separate nodes into the fused op.
  auto graph = ImportGraphDef(separate, "<fused test>");
  ASSERT_TRUE(graph.ok()) << graph.status();
  SessionOptions options;
  options.device = "CPU:0";
  auto session = Session::Create(&OpTestRuntime(), std::shared_ptr<const Graph>(std::move(*graph)),
                                 options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto result = (*session)->Run({{"x:0", x}}, {"relu:0"});
  ASSERT_TRUE(result.ok()) << result.status();
  const Node* relu = (*session)->last_run_graph()->FindNode("relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->op, "_FusedDepthwiseConv2dNative");
  EXPECT_EQ((*session)->last_run_graph()->FindNode("dw"), nullptr);
  EXPECT_TRUE(CompareTensors((*result)[0], want, {1e-6, 1e-6}).ok())
      << CompareTensors((*result)[0], want, {1e-6, 1e-6});
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

TEST(FusedMatMul, Errors) {
  std::mt19937 rng(9);
  const DataType t = DataType::kFloat;
  const Tensor a = RandomTensor(t, {2, 3}, rng), b = RandomTensor(t, {3, 4}, rng);
  const Tensor bias = RandomTensor(t, {4}, rng);
  ExpectBothFail(FusedMatMul(a, b, {bias}, {"BiasAdd", "Gelu"}),
                 absl::StatusCode::kUnimplemented, "fusion is not implemented: [BiasAdd,Gelu]");
  ExpectBothFail(FusedMatMul(a, b, {bias}, {"Relu"}), absl::StatusCode::kUnimplemented,
                 "fusion is not implemented: [Relu]");
  ExpectBothFail(FusedMatMul(a, b, {bias}, {}), absl::StatusCode::kUnimplemented,
                 "fusion is not implemented: []");
  ExpectBothFail(FusedMatMul(a, b, {bias, bias, bias, bias}, {"FusedBatchNorm"}),
                 absl::StatusCode::kUnimplemented, "fusion is not implemented: [FusedBatchNorm]");
  ExpectBothFail(FusedMatMul(a, b, {bias, bias}, {"BiasAdd", "Relu"}),
                 absl::StatusCode::kInvalidArgument, "needs num_args = 1 (the bias), got 2");
  ExpectBothFail(FusedMatMul(a, b, {RandomTensor(t, {3}, rng)}, {"BiasAdd"}),
                 absl::StatusCode::kInvalidArgument, "must have the product's 4 columns");
  ExpectBothFail(FusedMatMul(a, RandomTensor(t, {2, 4}, rng), {bias}, {"BiasAdd"}),
                 absl::StatusCode::kInvalidArgument, "Matrix size-incompatible");
}

TEST(FusedConv2D, Errors) {
  std::mt19937 rng(10);
  const DataType t = DataType::kFloat;
  const Tensor x = RandomTensor(t, {1, 5, 5, 3}, rng), f = RandomTensor(t, {3, 3, 3, 2}, rng);
  const std::vector<Tensor> bias = Args(t, {"BiasAdd"}, 2, rng);
  const std::vector<Tensor> bn = Args(t, {"FusedBatchNorm"}, 2, rng);
  ExpectBothFail(FusedConv(x, f, bias, {"BiasAdd", "Gelu"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kUnimplemented, "fusion is not implemented: [BiasAdd,Gelu]");
  ExpectBothFail(FusedConv(x, f, bn, {"FusedBatchNorm", "BiasAdd"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kUnimplemented,
                 "fusion is not implemented: [FusedBatchNorm,BiasAdd]");
  ExpectBothFail(FusedConv(x, f, bias, {"FusedBatchNorm", "Relu"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument,
                 "needs num_args = 4 (scale, offset, mean and variance), got 1");
  ExpectBothFail(FusedConv(x, f, bn, {"BiasAdd"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument, "needs num_args = 1 (the bias), got 4");
  ExpectBothFail(FusedConv(x, f, {RandomTensor(t, {3}, rng)}, {"BiasAdd"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument, "must have the convolution's 2 output");
  OpCase oihw = FusedConv(x, f, bias, {"BiasAdd"}, "NHWC", "SAME", 1, 1);
  oihw.Attr("filter_format", "OIHW");
  ExpectBothFail(oihw, absl::StatusCode::kUnimplemented, "filter_format HWIO only");
}

TEST(FusedDepthwiseConv2dNative, Errors) {
  std::mt19937 rng(16);
  const DataType t = DataType::kFloat;
  const Tensor x = RandomTensor(t, {1, 5, 5, 3}, rng), f = RandomTensor(t, {3, 3, 3, 2}, rng);
  const std::vector<Tensor> bias = Args(t, {"BiasAdd"}, 6, rng);
  const std::vector<Tensor> bn = Args(t, {"FusedBatchNorm"}, 6, rng);
  ExpectBothFail(FusedDepthwise(x, f, bias, {"BiasAdd", "Gelu"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kUnimplemented, "fusion is not implemented: [BiasAdd,Gelu]");
  ExpectBothFail(FusedDepthwise(x, f, bn, {"FusedBatchNorm", "BiasAdd"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kUnimplemented,
                 "fusion is not implemented: [FusedBatchNorm,BiasAdd]");
  ExpectBothFail(FusedDepthwise(x, f, bias, {"FusedBatchNorm", "Relu"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument,
                 "needs num_args = 4 (scale, offset, mean and variance), got 1");
  ExpectBothFail(FusedDepthwise(x, f, bn, {"BiasAdd"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument, "needs num_args = 1 (the bias), got 4");
  // The bias has the output depth, 3 channels * multiplier 2.
  ExpectBothFail(FusedDepthwise(x, f, {RandomTensor(t, {3}, rng)}, {"BiasAdd"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument, "must have the convolution's 6 output");
  ExpectBothFail(FusedDepthwise(x, RandomTensor(t, {3, 3, 4, 1}, rng), Args(t, {"BiasAdd"}, 4, rng),
                                {"BiasAdd"}, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument, "must equal");
}

}  // namespace
}  // namespace plexus::testing
