// Per-op tests of the nn family: cpu kernels against the reference kernels.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "op_test_util.h"

namespace plexus::testing {
namespace {

// Expects the case to succeed on the reference (ExpectCpuMatchesReference
// alone also accepts both devices failing alike), then compares the cpu.
void Check(const OpCase& c) {
  auto r = c.Run("REF:0");
  ASSERT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  ExpectCpuMatchesReference(c);
}
void Check(const OpCase& c, Tolerance tol) {
  auto r = c.Run("REF:0");
  ASSERT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  ExpectCpuMatchesReference(c, tol);
}

using Ints = std::vector<int64_t>;

// Convolutions sum up to ~50 products: float results may differ from the
// double reference by a few 1e-5 where they cancel towards zero.
Tolerance ConvTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-4;
  return tol;
}

std::vector<double> RunCpu(const OpCase& c, Shape* shape = nullptr, int output = 0) {
  auto r = c.Run("CPU:0");
  EXPECT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  if (!r.ok()) return {};
  const Tensor& t = (*r)[output];
  if (shape) *shape = t.shape();
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = ElementAsDouble(t, i);
  return v;
}

// A 4-D attribute list for the spatial values (h, w) in `format`.
Ints Spatial(const std::string& format, int64_t h, int64_t w) {
  return format == "NCHW" ? Ints{1, 1, h, w} : Ints{1, h, w, 1};
}
Shape ImageShape(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c) {
  return format == "NCHW" ? Shape{n, c, h, w} : Shape{n, h, w, c};
}

TEST(BiasAdd, MatchesReference) {
  std::mt19937 rng(1);
  for (DataType t : RealTypes()) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      for (const Shape& shape :
           std::vector<Shape>{{4, 3}, {2, 3, 5}, {2, 3, 4, 5}, {1, 3, 2, 2, 2}, {0, 3, 2}}) {
        const int64_t channels = format == "NCHW" ? shape[1] : shape.back();
        OpCase c("BiasAdd");
        c.Input(RandomTensor(t, shape, rng))
            .Input(RandomTensor(t, {channels}, rng))
            .Attr("T", t)
            .Attr("data_format", format);
        Check(c);
      }
    }
  }
}

TEST(BiasAdd, ExactValuesAndErrors) {
  OpCase c("BiasAdd");
  c.Input(MakeTensor(DataType::kFloat, {1, 2, 2}, {1, 2, 3, 4}))
      .Input(MakeTensor(DataType::kFloat, {2}, {10, 20}))
      .Attr("T", DataType::kFloat)
      .Attr("data_format", "NCHW");
  EXPECT_EQ(RunCpu(c), (std::vector<double>{11, 12, 23, 24}));
  OpCase bad("BiasAdd");
  bad.Input(MakeTensor(DataType::kFloat, {2, 3}, std::vector<double>(6, 1)))
      .Input(MakeTensor(DataType::kFloat, {2}, {1, 2}))
      .Attr("T", DataType::kFloat);
  ExpectBothFail(bad, absl::StatusCode::kInvalidArgument, "bias");
}

OpCase Conv(const std::string& op, const Tensor& x, const Tensor& f, const std::string& format,
            const std::string& padding, int64_t sh, int64_t sw, int64_t dh = 1, int64_t dw = 1,
            const Ints& explicit_paddings = {}) {
  OpCase c(op);
  c.Input(x).Input(f).Attr("T", x.dtype()).Attr("data_format", format)
      .Attr("padding", padding)
      .Attr("strides", Spatial(format, sh, sw))
      .Attr("dilations", Spatial(format, dh, dw));
  if (padding == "EXPLICIT") c.Attr("explicit_paddings", explicit_paddings);
  return c;
}

struct ConvCase {
  int64_t h, w, kh, kw, sh, sw, dh, dw;
};

const std::vector<ConvCase>& ConvCases() {
  static const std::vector<ConvCase> cases = {
      {6, 7, 3, 3, 1, 1, 1, 1}, {6, 7, 3, 3, 2, 2, 1, 1}, {6, 7, 3, 3, 2, 1, 1, 1},
      {5, 5, 1, 1, 1, 1, 1, 1}, {6, 6, 1, 1, 2, 2, 1, 1}, {7, 8, 2, 3, 1, 2, 1, 1},
      {7, 7, 3, 3, 1, 1, 2, 2}, {8, 6, 2, 2, 3, 1, 2, 1}, {3, 3, 3, 3, 1, 1, 1, 1},
  };
  return cases;
}

TEST(Conv2D, MatchesReference) {
  std::mt19937 rng(2);
  std::vector<DataType> types = FloatTypes();
  types.push_back(DataType::kInt32);
  for (DataType t : types) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      for (const std::string padding : {"VALID", "SAME", "EXPLICIT"}) {
        for (const ConvCase& k : ConvCases()) {
          Tensor x = RandomTensor(t, ImageShape(format, 2, k.h, k.w, 3), rng, -2, 2);
          Tensor f = RandomTensor(t, {k.kh, k.kw, 3, 4}, rng, -2, 2);
          Ints pads = format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 2, 0}
                                       : Ints{0, 0, 1, 2, 2, 0, 0, 0};
          Check(
              Conv("Conv2D", x, f, format, padding, k.sh, k.sw, k.dh, k.dw, pads),
              ConvTolerance(t));
        }
      }
    }
  }
}

// Grouped convolutions (Keras' Conv2D(groups=g): a filter of input depth
// c / g): float through oneDNN's grouped primitive, the other types one
// im2col convolution per group.
TEST(Conv2D, GroupedMatchesReference) {
  std::mt19937 rng(12);
  std::vector<DataType> types = FloatTypes();
  types.push_back(DataType::kInt32);
  for (DataType t : types) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      for (const std::string padding : {"VALID", "SAME", "EXPLICIT"}) {
        for (const ConvCase& k : ConvCases()) {
          Ints pads = format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 2, 0}
                                       : Ints{0, 0, 1, 2, 2, 0, 0, 0};
          // 2 groups of 3 input channels -> 3 outputs; 4 groups of 1 -> 2.
          for (const Ints& gf : {Ints{6, 3, 6}, Ints{4, 1, 8}}) {
            Tensor x = RandomTensor(t, ImageShape(format, 2, k.h, k.w, gf[0]), rng, -2, 2);
            Tensor f = RandomTensor(t, {k.kh, k.kw, gf[1], gf[2]}, rng, -2, 2);
            Check(Conv("Conv2D", x, f, format, padding, k.sh, k.sw, k.dh, k.dw, pads),
                  ConvTolerance(t));
          }
        }
      }
    }
  }
  // 1-D convolutions (which ungrouped go to im2col) and a wider layer.
  Tensor x1 = RandomTensor(DataType::kFloat, {2, 1, 20, 8}, rng, -2, 2);
  Tensor f1 = RandomTensor(DataType::kFloat, {1, 3, 2, 12}, rng, -2, 2);
  Check(Conv("Conv2D", x1, f1, "NHWC", "SAME", 1, 1), ConvTolerance(DataType::kFloat));
  Tensor x2 = RandomTensor(DataType::kFloat, {1, 12, 12, 64}, rng, -1, 1);
  Tensor f2 = RandomTensor(DataType::kFloat, {3, 3, 16, 64}, rng, -1, 1);
  Check(Conv("Conv2D", x2, f2, "NHWC", "SAME", 2, 2), ConvTolerance(DataType::kFloat));
}

TEST(Conv2D, GroupedExactValues) {
  // Two groups of two channels, 1x1: y0 = x0 * 1 + x1 * 100, y1 = x2 * 10 +
  // x3 * 1000 (filter [1, 1, 2, 2] rows are input channels of the group).
  for (DataType t : {DataType::kFloat, DataType::kDouble, DataType::kInt32}) {
    Tensor x = MakeTensor(t, {1, 1, 1, 4}, {1, 2, 3, 4});
    Tensor f = MakeTensor(t, {1, 1, 2, 2}, {1, 10, 100, 1000});
    Shape shape;
    EXPECT_EQ(RunCpu(Conv("Conv2D", x, f, "NHWC", "VALID", 1, 1), &shape),
              (std::vector<double>{201, 4030}));
    EXPECT_EQ(shape, (Shape{1, 1, 1, 2}));
  }
}

// A larger case than the im2col block, and an empty batch.
TEST(Conv2D, LargeAndEmpty) {
  std::mt19937 rng(3);
  Tensor x = RandomTensor(DataType::kFloat, {2, 40, 40, 16}, rng, -1, 1);
  Tensor f = RandomTensor(DataType::kFloat, {3, 3, 16, 8}, rng, -1, 1);
  Check(Conv("Conv2D", x, f, "NHWC", "SAME", 1, 1),
                            ConvTolerance(DataType::kFloat));
  Tensor f1 = RandomTensor(DataType::kFloat, {1, 1, 16, 8}, rng, -1, 1);
  Check(Conv("Conv2D", x, f1, "NHWC", "VALID", 1, 1),
                            ConvTolerance(DataType::kFloat));
  Tensor empty = RandomTensor(DataType::kFloat, {0, 5, 5, 16}, rng);
  Shape shape;
  RunCpu(Conv("Conv2D", empty, f, "NHWC", "SAME", 2, 2), &shape);
  EXPECT_EQ(shape, (Shape{0, 3, 3, 8}));
}

TEST(Conv2D, ExactValues) {
  // 3x3 input, 2x2 filter of ones: VALID sums each 2x2 window.
  Tensor x = MakeTensor(DataType::kFloat, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor f = MakeTensor(DataType::kFloat, {2, 2, 1, 1}, {1, 1, 1, 1});
  Shape shape;
  EXPECT_EQ(RunCpu(Conv("Conv2D", x, f, "NHWC", "VALID", 1, 1), &shape),
            (std::vector<double>{12, 16, 24, 28}));
  EXPECT_EQ(shape, (Shape{1, 2, 2, 1}));
  // SAME pads after (bottom/right) when the padding is odd.
  EXPECT_EQ(RunCpu(Conv("Conv2D", x, f, "NHWC", "SAME", 1, 1), &shape),
            (std::vector<double>{12, 16, 9, 24, 28, 15, 15, 17, 9}));
  EXPECT_EQ(shape, (Shape{1, 3, 3, 1}));
  EXPECT_EQ(RunCpu(Conv("Conv2D", x, f, "NHWC", "SAME", 2, 2), &shape),
            (std::vector<double>{12, 9, 15, 9}));
}

TEST(Conv2D, Errors) {
  std::mt19937 rng(4);
  Tensor x = RandomTensor(DataType::kFloat, {1, 5, 5, 4}, rng);
  // 2 groups, but 3 output channels.
  Tensor grouped = RandomTensor(DataType::kFloat, {3, 3, 2, 3}, rng);
  ExpectBothFail(Conv("Conv2D", x, grouped, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument, "number of groups");
  Tensor f = RandomTensor(DataType::kFloat, {3, 3, 3, 4}, rng);
  ExpectBothFail(Conv("Conv2D", x, f, "NHWC", "SAME", 1, 1),
                 absl::StatusCode::kInvalidArgument, "input depth");
  Tensor f4 = RandomTensor(DataType::kFloat, {3, 3, 4, 2}, rng);
  OpCase batch_stride = Conv("Conv2D", x, f4, "NHWC", "SAME", 1, 1);
  batch_stride.Attr("strides", Ints{2, 1, 1, 1});
  ExpectBothFail(batch_stride, absl::StatusCode::kInvalidArgument, "strides");
  ExpectBothFail(Conv("Conv2D", x, f4, "NHWC", "FULL", 1, 1), absl::StatusCode::kInvalidArgument,
                 "padding");
  Tensor big = RandomTensor(DataType::kFloat, {7, 7, 4, 2}, rng);
  ExpectBothFail(Conv("Conv2D", x, big, "NHWC", "VALID", 1, 1),
                 absl::StatusCode::kInvalidArgument, "negative");
}

TEST(DepthwiseConv2dNative, MatchesReference) {
  std::mt19937 rng(5);
  for (DataType t : FloatTypes()) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      for (const std::string padding : {"VALID", "SAME", "EXPLICIT"}) {
        for (const ConvCase& k : ConvCases()) {
          for (int64_t multiplier : {1, 2}) {
            Tensor x = RandomTensor(t, ImageShape(format, 2, k.h, k.w, 3), rng, -2, 2);
            Tensor f = RandomTensor(t, {k.kh, k.kw, 3, multiplier}, rng, -2, 2);
            Ints pads = format == "NCHW" ? Ints{0, 0, 0, 0, 2, 1, 0, 1}
                                         : Ints{0, 0, 2, 1, 0, 1, 0, 0};
            Check(Conv("DepthwiseConv2dNative", x, f, format, padding, k.sh,
                                           k.sw, k.dh, k.dw, pads),
                                      ConvTolerance(t));
          }
        }
      }
    }
  }
}

TEST(DepthwiseConv2dNative, ExactValuesAndErrors) {
  // Two channels, multiplier 1: each channel convolved with its own filter.
  Tensor x = MakeTensor(DataType::kFloat, {1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  Tensor f = MakeTensor(DataType::kFloat, {2, 2, 2, 1}, {1, 0, 1, 0, 1, 0, 1, 1});
  Shape shape;
  EXPECT_EQ(RunCpu(Conv("DepthwiseConv2dNative", x, f, "NHWC", "VALID", 1, 1), &shape),
            (std::vector<double>{10, 40}));
  EXPECT_EQ(shape, (Shape{1, 1, 1, 2}));
  Tensor wrong = MakeTensor(DataType::kFloat, {2, 2, 3, 1}, std::vector<double>(12, 1));
  ExpectBothFail(Conv("DepthwiseConv2dNative", x, wrong, "NHWC", "VALID", 1, 1),
                 absl::StatusCode::kInvalidArgument, "depth");
}

OpCase Pool(const std::string& op, const Tensor& x, const std::string& format,
            const std::string& padding, int64_t kh, int64_t kw, int64_t sh, int64_t sw) {
  OpCase c(op);
  c.Input(x).Attr("T", x.dtype()).Attr("data_format", format).Attr("padding", padding)
      .Attr("ksize", Spatial(format, kh, kw))
      .Attr("strides", Spatial(format, sh, sw));
  return c;
}

TEST(Pool, MatchesReference) {
  std::mt19937 rng(6);
  const std::vector<std::vector<int64_t>> windows = {
      {2, 2, 2, 2}, {3, 3, 1, 1}, {3, 3, 2, 2}, {1, 1, 1, 1}, {2, 3, 1, 2}, {3, 2, 3, 2}};
  for (const char* op : {"MaxPool", "AvgPool"}) {
    const std::vector<DataType> types = std::string(op) == "MaxPool" ? RealTypes() : FloatTypes();
    for (DataType t : types) {
      for (const std::string format : {"NHWC", "NCHW"}) {
        for (const std::string padding : {"VALID", "SAME"}) {
          for (const auto& w : windows) {
            Tensor x = RandomTensor(t, ImageShape(format, 2, 7, 6, 3), rng);
            Check(Pool(op, x, format, padding, w[0], w[1], w[2], w[3]));
          }
        }
      }
    }
  }
}

TEST(Pool, MaxPoolExplicitPadding) {
  std::mt19937 rng(9);
  for (DataType t : {DataType::kFloat, DataType::kInt32, DataType::kHalf}) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      OpCase c = Pool("MaxPool", RandomTensor(t, ImageShape(format, 2, 5, 6, 3), rng), format,
                      "EXPLICIT", 3, 2, 2, 1);
      c.Attr("explicit_paddings", format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 1, 0}
                                                    : Ints{0, 0, 1, 2, 1, 0, 0, 0});
      Check(c);
    }
  }
}

TEST(Pool, ExactValues) {
  Tensor x = MakeTensor(DataType::kFloat, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Shape shape;
  EXPECT_EQ(RunCpu(Pool("MaxPool", x, "NHWC", "VALID", 2, 2, 1, 1), &shape),
            (std::vector<double>{5, 6, 8, 9}));
  EXPECT_EQ(shape, (Shape{1, 2, 2, 1}));
  // SAME with stride 2 over 3x3 pads one row and column after: the edge
  // windows average only their in-bounds elements.
  EXPECT_EQ(RunCpu(Pool("AvgPool", x, "NHWC", "SAME", 2, 2, 2, 2), &shape),
            (std::vector<double>{3, 4.5, 7.5, 9}));
  EXPECT_EQ(shape, (Shape{1, 2, 2, 1}));
  // 3x3 SAME stride 1: the corner averages 4 elements.
  std::vector<double> avg = RunCpu(Pool("AvgPool", x, "NHWC", "SAME", 3, 3, 1, 1));
  ASSERT_EQ(avg.size(), 9u);
  EXPECT_DOUBLE_EQ(avg[0], 3.0);  // (1 + 2 + 4 + 5) / 4
  EXPECT_DOUBLE_EQ(avg[4], 5.0);
}

TEST(Pool, Errors) {
  Tensor x = MakeTensor(DataType::kFloat, {1, 3, 3, 1}, std::vector<double>(9, 1));
  OpCase depth("MaxPool");
  depth.Input(x).Attr("T", DataType::kFloat).Attr("padding", "VALID")
      .Attr("ksize", Ints{1, 2, 2, 2})
      .Attr("strides", Ints{1, 1, 1, 1});
  ExpectBothFail(depth, absl::StatusCode::kInvalidArgument, "depth");
  ExpectBothFail(Pool("AvgPool", x, "NHWC", "VALID", 4, 4, 1, 1),
                 absl::StatusCode::kInvalidArgument, "negative");
  ExpectBothFail(Pool("AvgPool", x, "NHWC", "EXPLICIT", 2, 2, 1, 1),
                 absl::StatusCode::kInvalidArgument, "padding");
}

OpCase BatchNorm(const std::string& op, const Tensor& x, const std::vector<Tensor>& params,
                 const std::string& format, float epsilon, bool training = false) {
  OpCase c(op);
  c.Input(x);
  for (const Tensor& p : params) c.Input(p);
  c.Attr("T", x.dtype()).Attr("epsilon", epsilon).Attr("data_format", format)
      .Attr("is_training", training);
  if (op != "FusedBatchNorm") c.Attr("U", DataType::kFloat);
  return c;
}

std::vector<Tensor> BatchNormParams(int64_t channels, std::mt19937& rng) {
  return {RandomTensor(DataType::kFloat, {channels}, rng, 0.5, 2),
          RandomTensor(DataType::kFloat, {channels}, rng, -1, 1),
          RandomTensor(DataType::kFloat, {channels}, rng, -1, 1),
          RandomTensor(DataType::kFloat, {channels}, rng, 0.1, 3)};
}

TEST(FusedBatchNorm, MatchesReference) {
  std::mt19937 rng(7);
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    const std::vector<DataType> types =
        std::string(op) == "FusedBatchNorm"
            ? std::vector<DataType>{DataType::kFloat}
            : std::vector<DataType>{DataType::kFloat, DataType::kHalf, DataType::kBFloat16};
    for (DataType t : types) {
      for (const std::string format : {"NHWC", "NCHW"}) {
        for (const Shape& nhwc : std::vector<Shape>{{2, 4, 5, 3}, {1, 1, 1, 7}, {0, 2, 2, 3}}) {
          const Shape shape = ImageShape(format, nhwc[0], nhwc[1], nhwc[2], nhwc[3]);
          Check(BatchNorm(op, RandomTensor(t, shape, rng),
                                              BatchNormParams(nhwc[3], rng), format, 1e-3f));
        }
      }
    }
  }
}

TEST(FusedBatchNorm, ExactValuesAndOutputs) {
  Tensor x = MakeTensor(DataType::kFloat, {1, 1, 2, 2}, {1, 2, 3, 4});
  std::vector<Tensor> params = {MakeTensor(DataType::kFloat, {2}, {2, 1}),     // scale
                                MakeTensor(DataType::kFloat, {2}, {0.5, -1}),  // offset
                                MakeTensor(DataType::kFloat, {2}, {1, 2}),     // mean
                                MakeTensor(DataType::kFloat, {2}, {4, 1})};    // variance
  OpCase c = BatchNorm("FusedBatchNormV3", x, params, "NHWC", 0.0f);
  auto r = c.Run("CPU:0");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 6u);
  // Channel 0: (x - 1) / 2 * 2 + 0.5; channel 1: (x - 2) / 1 * 1 - 1.
  const double want[] = {0.5, -1, 2.5, 1};
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(ElementAsDouble((*r)[0], i), want[i]);
  EXPECT_EQ((*r)[1].shape(), (Shape{2}));
  EXPECT_DOUBLE_EQ(ElementAsDouble((*r)[1], 1), 2);  // batch_mean = mean
  EXPECT_DOUBLE_EQ(ElementAsDouble((*r)[2], 0), 4);  // batch_variance = variance
  EXPECT_EQ((*r)[5].shape(), (Shape{}));              // reserve_space_3
}

TEST(FusedBatchNorm, Errors) {
  std::mt19937 rng(8);
  Tensor x = RandomTensor(DataType::kFloat, {1, 2, 2, 3}, rng);
  ExpectBothFail(BatchNorm("FusedBatchNormV3", x, BatchNormParams(3, rng), "NHWC", 1e-3f, true),
                 absl::StatusCode::kUnimplemented, "is_training");
  ExpectBothFail(BatchNorm("FusedBatchNormV3", x, BatchNormParams(2, rng), "NHWC", 1e-3f),
                 absl::StatusCode::kInvalidArgument, "scale");
  Tensor x3 = RandomTensor(DataType::kFloat, {2, 3}, rng);
  ExpectBothFail(BatchNorm("FusedBatchNorm", x3, BatchNormParams(3, rng), "NHWC", 1e-3f),
                 absl::StatusCode::kInvalidArgument, "4-D");
}

}  // namespace
}  // namespace plexus::testing
