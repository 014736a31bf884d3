// Gradients of the neural-network ops (core/src/passes/gradients/nn_grad.cc)
// against finite differences in float64, and a small CNN and MLP
// differentiated end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "gradient_check.h"
#include "plexus/gradients.h"
#include "plexus/graph_builder.h"
#include "plexus/session.h"
#include "test_util.h"

namespace plexus::testing {
namespace {

void SetInts(AttrMap& attrs, const std::string& name, const std::vector<int64_t>& values) {
  auto* list = attrs[name].mutable_list();
  list->clear_i();
  for (int64_t v : values) list->add_i(v);
}

// Random values whose magnitudes lie in [lo, hi] with random signs: bounded
// away from 0, where the piecewise activations have their kinks.
Tensor AwayFromZero(const Shape& shape, double lo = 0.1, double hi = 1.0) {
  Tensor t = RandomDouble(shape, lo, hi);
  Tensor sign = RandomDouble(shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (sign.data<double>()[i] < 0) t.data<double>()[i] = -t.data<double>()[i];
  }
  return t;
}

// A shuffled ramp: all values distinct and at least 2/n apart, so every
// pooling window has a clear maximum.
Tensor Distinct(const Shape& shape, unsigned seed) {
  Tensor t = RandomDouble(shape);
  const int64_t n = t.num_elements();
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n);
  std::mt19937 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t;
}

Endpoint Out(absl::StatusOr<Node*> node) {
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? Endpoint{*node, 0} : Endpoint{};
}

// ---- Activations ------------------------------------------------------------

TEST(NnGradientTest, PiecewiseActivations) {
  ExpectGradientsMatch(GradientCheck{"Relu", {AwayFromZero({3, 4})}});
  ExpectGradientsMatch(GradientCheck{"Elu", {AwayFromZero({3, 4})}});
  ExpectGradientsMatch(GradientCheck{"Selu", {AwayFromZero({3, 4})}});
  for (double alpha : {0.2, 0.01, 1.5}) {
    GradientCheck c{"LeakyRelu", {AwayFromZero({3, 4})}};
    c.attrs["alpha"].set_f(static_cast<float>(alpha));
    ExpectGradientsMatch(c);
  }
  // Relu6: values on the three pieces, away from 0 and 6.
  Tensor x = DoubleTensor({2, 4}, {-1.5, -0.3, 0.2, 2.5, 5.7, 6.4, 9.0, 3.1});
  ExpectGradientsMatch(GradientCheck{"Relu6", {x}});
}

TEST(NnGradientTest, SmoothActivations) {
  ExpectGradientsMatch(GradientCheck{"Softplus", {RandomDouble({3, 4}, -3, 3)}});
  for (bool approximate : {true, false}) {
    GradientCheck c{"Gelu", {RandomDouble({3, 5}, -3, 3)}};
    c.attrs["approximate"].set_b(approximate);
    ExpectGradientsMatch(c);
  }
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    ExpectGradientsMatch(GradientCheck{op, {RandomDouble({3, 5}, -2, 2)}});
    ExpectGradientsMatch(GradientCheck{op, {RandomDouble({2, 2, 4}, -2, 2)}});
    ExpectGradientsMatch(GradientCheck{op, {RandomDouble({6}, -2, 2)}});
  }
}

// The gradient ops the activations use, written out: d relu(x)/dx = 1
// where x > 0, else 0; d leaky_relu/dx = alpha for x < 0.
TEST(NnGradientTest, ReluGradientValues) {
  GraphBuilder b("relu");
  Node* x = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{4}), "x");
  Node* relu = *b.AddNode("Relu", {{x, 0}}, {});
  AttrMap leaky_attrs;
  leaky_attrs["alpha"].set_f(0.25f);
  Node* leaky = *b.AddNode("LeakyRelu", {{x, 0}}, leaky_attrs);
  auto g_relu = AddGradients(b, {{relu, 0}}, {{x, 0}});
  ASSERT_TRUE(g_relu.ok()) << g_relu.status();
  auto g_leaky = AddGradients(b, {{leaky, 0}}, {{x, 0}});
  ASSERT_TRUE(g_leaky.ok()) << g_leaky.status();
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto session = Session::Create(GradientCheckRuntime(), *graph);
  ASSERT_TRUE(session.ok()) << session.status();
  const Endpoint& a = *(*g_relu)[0];
  const Endpoint& l = *(*g_leaky)[0];
  auto out = (*session)->Run({{"x", DoubleTensor({4}, {-2, -0.5, 0.5, 3})}},
                             {absl::StrCat(a.node->name, ":", a.index), absl::StrCat(l.node->name, ":", l.index)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> relu_expected = {0, 0, 1, 1};
  const std::vector<double> leaky_expected = {0.25, 0.25, 1, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ((*out)[0].data<double>()[i], relu_expected[i]) << i;
    EXPECT_DOUBLE_EQ((*out)[1].data<double>()[i], leaky_expected[i]) << i;
  }
}

// ---- Bias, convolutions, pooling ------------------------------------------------

TEST(NnGradientTest, BiasAdd) {
  GradientCheck nhwc{"BiasAdd", {RandomDouble({2, 3, 4}), RandomDouble({4})}};
  ExpectGradientsMatch(nhwc);
  GradientCheck rank2{"BiasAdd", {RandomDouble({3, 5}), RandomDouble({5})}};
  ExpectGradientsMatch(rank2);
  GradientCheck nchw{"BiasAdd", {RandomDouble({2, 4, 3, 3}), RandomDouble({4})}};
  nchw.attrs["data_format"].set_s("NCHW");
  ExpectGradientsMatch(nchw);
}

struct ConvCase {
  std::string padding;
  int stride;
  int dilation;
  std::string format;
};

std::vector<ConvCase> ConvCases() {
  std::vector<ConvCase> cases;
  for (const char* padding : {"SAME", "VALID"}) {
    for (int stride : {1, 2}) {
      for (const char* format : {"NHWC", "NCHW"}) cases.push_back({padding, stride, 1, format});
    }
  }
  cases.push_back({"SAME", 1, 2, "NHWC"});
  cases.push_back({"VALID", 1, 2, "NCHW"});
  cases.push_back({"EXPLICIT", 1, 1, "NHWC"});
  cases.push_back({"EXPLICIT", 2, 1, "NCHW"});
  return cases;
}

// Spatial attributes in the layout of `format` (batch and channel 1).
std::vector<int64_t> Spatial(const std::string& format, int64_t v) {
  return format == "NCHW" ? std::vector<int64_t>{1, 1, v, v} : std::vector<int64_t>{1, v, v, 1};
}
Shape InputShape(const std::string& format, int64_t n, int64_t hw, int64_t c) {
  return format == "NCHW" ? Shape{n, c, hw, hw} : Shape{n, hw, hw, c};
}

void SetConvAttrs(AttrMap& attrs, const ConvCase& cc) {
  attrs["padding"].set_s(cc.padding);
  attrs["data_format"].set_s(cc.format);
  SetInts(attrs, "strides", Spatial(cc.format, cc.stride));
  SetInts(attrs, "dilations", Spatial(cc.format, cc.dilation));
  if (cc.padding == "EXPLICIT") {
    // Pads (before, after) per dimension, in the data layout's order.
    SetInts(attrs, "explicit_paddings",
            cc.format == "NCHW" ? std::vector<int64_t>{0, 0, 0, 0, 1, 2, 2, 0}
                                : std::vector<int64_t>{0, 0, 1, 2, 2, 0, 0, 0});
  }
}

TEST(NnGradientTest, Conv2D) {
  for (const ConvCase& cc : ConvCases()) {
    SCOPED_TRACE(absl::StrCat(cc.padding, " stride ", cc.stride, " dilation ", cc.dilation, " ", cc.format));
    GradientCheck c{"Conv2D", {RandomDouble(InputShape(cc.format, 2, 5, 3)), RandomDouble({3, 3, 3, 4})}};
    SetConvAttrs(c.attrs, cc);
    ExpectGradientsMatch(c);
  }
  // A 1x1 filter and a non-square input.
  GradientCheck c{"Conv2D", {RandomDouble({1, 4, 6, 2}), RandomDouble({1, 1, 2, 3})}};
  c.attrs["padding"].set_s("VALID");
  SetInts(c.attrs, "strides", {1, 1, 2, 1});
  ExpectGradientsMatch(c);
}

TEST(NnGradientTest, DepthwiseConv2dNative) {
  for (const ConvCase& cc : ConvCases()) {
    SCOPED_TRACE(absl::StrCat(cc.padding, " stride ", cc.stride, " dilation ", cc.dilation, " ", cc.format));
    GradientCheck c{"DepthwiseConv2dNative",
                    {RandomDouble(InputShape(cc.format, 2, 5, 3)), RandomDouble({3, 3, 3, 2})}};
    SetConvAttrs(c.attrs, cc);
    ExpectGradientsMatch(c);
  }
}

void PoolChecks(const std::string& op) {
  unsigned seed = 7;
  for (const char* padding : {"SAME", "VALID"}) {
    for (int stride : {1, 2}) {
      for (int k : {2, 3}) {
        for (const char* format : {"NHWC", "NCHW"}) {
          SCOPED_TRACE(absl::StrCat(op, " ", padding, " stride ", stride, " ksize ", k, " ", format));
          GradientCheck c{op, {Distinct(InputShape(format, 2, 5, 3), seed++)}};
          c.attrs["padding"].set_s(padding);
          c.attrs["data_format"].set_s(format);
          SetInts(c.attrs, "ksize", Spatial(format, k));
          SetInts(c.attrs, "strides", Spatial(format, stride));
          ExpectGradientsMatch(c);
        }
      }
    }
  }
}

TEST(NnGradientTest, MaxPool) { PoolChecks("MaxPool"); }
TEST(NnGradientTest, AvgPool) { PoolChecks("AvgPool"); }

// ---- Losses --------------------------------------------------------------------------

// Random probability rows (labels of the dense cross entropy).
Tensor Probabilities(int64_t rows, int64_t classes) {
  Tensor t = RandomDouble({rows, classes}, 0.1, 1.0);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t k = 0; k < classes; ++k) sum += t.data<double>()[r * classes + k];
    for (int64_t k = 0; k < classes; ++k) t.data<double>()[r * classes + k] /= sum;
  }
  return t;
}

TEST(NnGradientTest, SoftmaxCrossEntropyWithLogits) {
  // The loss alone (logits and labels), then loss and backprop together
  // (the second-order term), then backprop alone.
  for (std::vector<int> outputs : {std::vector<int>{0}, std::vector<int>{0, 1}, std::vector<int>{1}}) {
    GradientCheck c{"SoftmaxCrossEntropyWithLogits", {RandomDouble({3, 5}, -2, 2), Probabilities(3, 5)}};
    c.outputs = outputs;
    ExpectGradientsMatch(c);
  }
}

TEST(NnGradientTest, SparseSoftmaxCrossEntropyWithLogits) {
  for (std::vector<int> outputs : {std::vector<int>{0}, std::vector<int>{0, 1}, std::vector<int>{1}}) {
    GradientCheck c{"SparseSoftmaxCrossEntropyWithLogits",
                    {RandomDouble({4, 5}, -2, 2), Int64Tensor({4}, {0, 4, 2, 2})}};
    c.outputs = outputs;
    ExpectGradientsMatch(c);
    GradientCheck c32{"SparseSoftmaxCrossEntropyWithLogits",
                      {RandomDouble({3, 2}, -2, 2), IntTensor({3}, {1, 0, 1})}};
    c32.outputs = outputs;
    ExpectGradientsMatch(c32);
  }
}

TEST(NnGradientTest, L2Loss) {
  ExpectGradientsMatch(GradientCheck{"L2Loss", {RandomDouble({3, 4})}});
  ExpectGradientsMatch(GradientCheck{"L2Loss", {RandomDouble({})}});
}

// ---- Batch normalization -------------------------------------------------------
//
// FusedBatchNorm* take float only, so the symbolic gradients (float32) are
// compared with finite differences of a float64 host computation of the
// same loss: loss = sum(y * w), y = (x - mean) / sqrt(variance + eps) *
// scale + offset, with the population statistics (is_training=false) or
// the batch's (is_training=true). The cpu kernels run the forward op in
// inference mode only, so in training mode the run feeds the forward op's
// reserve outputs (the batch mean and variance) that the gradient reads,
// and the forward op itself does not run.

std::vector<double> Values(const Tensor& t) {
  return std::vector<double>(t.data<double>(), t.data<double>() + t.num_elements());
}
Tensor ToFloat(const Shape& shape, const std::vector<double>& v) {
  return Tensor::FromVector<float>(DataType::kFloat, shape, std::vector<float>(v.begin(), v.end()));
}

TEST(NnGradientTest, FusedBatchNorm) {
  const float epsilon = 0.001f;
  for (const std::string op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      for (bool training : {false, true}) {
        SCOPED_TRACE(absl::StrCat(op, " ", format, training ? " training" : " inference"));
        const int64_t n = 2, hw = 3, channels = 4;
        const Shape x_shape = InputShape(format, n, hw, channels);
        // Values representable in float, so host and device see the same inputs.
        auto as_float = [](std::vector<double> v) {
          for (double& e : v) e = static_cast<float>(e);
          return v;
        };
        std::vector<double> x = as_float(Values(RandomDouble(x_shape, -2, 2)));
        std::vector<double> scale = as_float(Values(RandomDouble({channels}, 0.5, 1.5)));
        std::vector<double> offset = as_float(Values(RandomDouble({channels})));
        std::vector<double> mean = as_float(Values(RandomDouble({channels})));
        std::vector<double> variance = as_float(Values(RandomDouble({channels}, 0.5, 1.5)));
        std::vector<double> w = as_float(Values(RandomDouble(x_shape)));
        auto channel_of = [&](int64_t i) {
          return format == "NCHW" ? (i / (hw * hw)) % channels : i % channels;
        };
        // The batch statistics of x per channel (the variance biased).
        auto batch_stats = [&](const std::vector<double>& xv, std::vector<double>* m, std::vector<double>* v) {
          m->assign(channels, 0.0);
          v->assign(channels, 0.0);
          const double count = static_cast<double>(xv.size() / channels);
          for (size_t i = 0; i < xv.size(); ++i) (*m)[channel_of(static_cast<int64_t>(i))] += xv[i] / count;
          for (size_t i = 0; i < xv.size(); ++i) {
            const int64_t c = channel_of(static_cast<int64_t>(i));
            (*v)[c] += (xv[i] - (*m)[c]) * (xv[i] - (*m)[c]) / count;
          }
        };
        auto host_loss = [&](const std::vector<double>& xv, const std::vector<double>& sv,
                             const std::vector<double>& ov) {
          std::vector<double> m = mean, v = variance;
          if (training) batch_stats(xv, &m, &v);
          double loss = 0;
          for (size_t i = 0; i < xv.size(); ++i) {
            const int64_t c = channel_of(static_cast<int64_t>(i));
            const double y = (xv[i] - m[c]) / std::sqrt(v[c] + static_cast<double>(epsilon)) * sv[c] + ov[c];
            loss += y * w[i];
          }
          return loss;
        };

        GraphBuilder b("batch norm");
        Node* xn = *b.AddPlaceholder(DataType::kFloat, PartialShape(x_shape), "x");
        Node* sn = *b.AddPlaceholder(DataType::kFloat, PartialShape(Shape{channels}), "scale");
        Node* on = *b.AddPlaceholder(DataType::kFloat, PartialShape(Shape{channels}), "offset");
        Endpoint mn = Out(b.AddConst(ToFloat({channels}, mean), "mean"));
        Endpoint vn = Out(b.AddConst(ToFloat({channels}, variance), "variance"));
        AttrMap attrs;
        attrs["is_training"].set_b(training);
        attrs["epsilon"].set_f(epsilon);
        attrs["data_format"].set_s(format);
        Endpoint y = Out(b.AddNode(op, {{xn, 0}, {sn, 0}, {on, 0}, mn, vn}, attrs, "bn"));
        // d loss / dy = w, given directly (so the run needs no value of y).
        Endpoint wn = Out(b.AddConst(ToFloat(x_shape, w), "w"));
        ASSERT_FALSE(::testing::Test::HasFailure());
        auto grads = AddGradients(b, {y}, {{xn, 0}, {sn, 0}, {on, 0}}, {wn});
        ASSERT_TRUE(grads.ok()) << grads.status();
        auto graph = b.Finish();
        ASSERT_TRUE(graph.ok()) << graph.status();
        auto session = Session::Create(GradientCheckRuntime(), *graph);
        ASSERT_TRUE(session.ok()) << session.status();
        std::vector<std::string> fetches;
        for (const auto& g : *grads) {
          ASSERT_TRUE(g.has_value());
          fetches.push_back(absl::StrCat(g->node->name, ":", g->index));
        }
        std::vector<std::pair<std::string, Tensor>> feeds = {
            {"x", ToFloat(x_shape, x)}, {"scale", ToFloat({channels}, scale)}, {"offset", ToFloat({channels}, offset)}};
        if (training) {
          std::vector<double> m, v;
          batch_stats(x, &m, &v);
          feeds.push_back({absl::StrCat(y.node->name, ":3"), ToFloat({channels}, m)});
          feeds.push_back({absl::StrCat(y.node->name, ":4"), ToFloat({channels}, v)});
          if (op == "FusedBatchNormV3") feeds.push_back({absl::StrCat(y.node->name, ":5"), ToFloat({}, {0})});
        }
        auto got = (*session)->Run(feeds, fetches);
        ASSERT_TRUE(got.ok()) << got.status();

        std::vector<std::vector<double>> args = {x, scale, offset};
        const double delta = 1e-6;
        for (size_t j = 0; j < args.size(); ++j) {
          const Tensor& a = (*got)[j];
          ASSERT_EQ(a.dtype(), DataType::kFloat);
          ASSERT_EQ(a.num_elements(), static_cast<int64_t>(args[j].size()));
          for (size_t e = 0; e < args[j].size(); ++e) {
            double at[2];
            for (int side = 0; side < 2; ++side) {
              auto shifted = args;
              shifted[j][e] += side == 0 ? delta : -delta;
              at[side] = host_loss(shifted[0], shifted[1], shifted[2]);
            }
            const double numeric = (at[0] - at[1]) / (2 * delta);
            // float32 results: a float-sized relative tolerance.
            EXPECT_NEAR(a.data<float>()[e], numeric, 1e-4 * (1 + std::abs(numeric)))
                << "input " << j << " element " << e;
          }
        }
      }
    }
  }
}

// Training mode reads the batch statistics from the forward op's reserve
// outputs (the values the test above feeds): the gradient op's inputs are
// wired to them.
TEST(NnGradientTest, FusedBatchNormTrainingUsesTheReserveOutputs) {
  GraphBuilder b("batch norm");
  Node* x = *b.AddPlaceholder(DataType::kFloat, PartialShape(Shape{2, 3, 3, 4}), "x");
  Node* scale = *b.AddPlaceholder(DataType::kFloat, PartialShape(Shape{4}), "scale");
  Node* offset = *b.AddPlaceholder(DataType::kFloat, PartialShape(Shape{4}), "offset");
  Endpoint mean = Out(b.AddConst(ToFloat({4}, {0, 0, 0, 0}), "mean"));
  Endpoint variance = Out(b.AddConst(ToFloat({4}, {1, 1, 1, 1}), "variance"));
  AttrMap attrs;
  attrs["is_training"].set_b(true);
  auto bn_or = b.AddNode("FusedBatchNormV3", {{x, 0}, {scale, 0}, {offset, 0}, mean, variance}, attrs);
  ASSERT_TRUE(bn_or.ok()) << bn_or.status();
  Node* bn = *bn_or;
  auto grads = AddGradients(b, {{bn, 0}}, {{x, 0}, {scale, 0}, {offset, 0}});
  ASSERT_TRUE(grads.ok()) << grads.status();
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE((*grads)[k].has_value());
    const Node* g = (*grads)[k]->node;
    EXPECT_EQ(g->op, "FusedBatchNormGradV3");
    EXPECT_EQ((*grads)[k]->index, k);
    ASSERT_EQ(g->inputs.size(), 6u);
    EXPECT_EQ(g->inputs[1].node, x);
    EXPECT_EQ(g->inputs[2].node, scale);
    for (int r = 3; r < 6; ++r) {
      EXPECT_EQ(g->inputs[r].node, bn);
      EXPECT_EQ(g->inputs[r].index, r);
    }
  }
}

// ---- Whole graphs -----------------------------------------------------------------

// Checks d loss / d x for every placeholder x in `xs` against central
// finite differences of `loss` (a float64 scalar) in float64.
void ExpectGraphGradientsMatch(GraphBuilder& b, const Endpoint& loss, const std::vector<Node*>& xs,
                               const std::vector<Tensor>& values, double tolerance = 1e-6) {
  std::vector<Endpoint> x_endpoints;
  for (Node* x : xs) x_endpoints.push_back({x, 0});
  auto grads = AddGradients(b, {loss}, x_endpoints);
  ASSERT_TRUE(grads.ok()) << grads.status();
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  SessionOptions options;
  options.optimizer.enabled = false;
  auto session = Session::Create(GradientCheckRuntime(), *graph, options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < xs.size(); ++i) feeds.push_back({xs[i]->name, values[i]});
  std::vector<std::string> fetches;
  for (const auto& g : *grads) {
    ASSERT_TRUE(g.has_value()) << "no gradient path";
    fetches.push_back(absl::StrCat(g->node->name, ":", g->index));
  }
  auto analytic = (*session)->Run(feeds, fetches);
  ASSERT_TRUE(analytic.ok()) << analytic.status();
  const std::string loss_name = absl::StrCat(loss.node->name, ":", loss.index);
  const double delta = 1e-6;
  for (size_t j = 0; j < xs.size(); ++j) {
    const Tensor& a = (*analytic)[j];
    ASSERT_EQ(a.shape(), values[j].shape()) << xs[j]->name;
    for (int64_t e = 0; e < a.num_elements(); ++e) {
      double at[2];
      for (int side = 0; side < 2; ++side) {
        auto shifted = feeds;
        Tensor x = Tensor::AllocateHost(DataType::kDouble, values[j].shape()).value();
        std::copy_n(values[j].data<double>(), x.num_elements(), x.data<double>());
        x.data<double>()[e] += side == 0 ? delta : -delta;
        shifted[j].second = x;
        auto l = (*session)->Run(shifted, {loss_name});
        ASSERT_TRUE(l.ok()) << l.status();
        at[side] = (*l)[0].data<double>()[0];
      }
      const double numeric = (at[0] - at[1]) / (2 * delta);
      const double got = a.data<double>()[e];
      EXPECT_LE(std::abs(got - numeric), tolerance * (1 + std::abs(numeric)))
          << "d loss / d " << xs[j]->name << " element " << e << ": symbolic " << got << ", finite differences "
          << numeric;
    }
  }
}

// Inputs whose shapes are known only at run time: the gradients take the
// shapes with Shape ops (Conv2DBackpropInput/Filter, AvgPoolGrad).
TEST(NnGradientTest, RunTimeShapes) {
  GraphBuilder b("dynamic");
  Node* x = *b.AddPlaceholder(DataType::kDouble, PartialShape({-1, -1, -1, 3}), "x");
  Node* filter = *b.AddPlaceholder(DataType::kDouble, PartialShape::Unknown(), "filter");
  Node* bias = *b.AddPlaceholder(DataType::kDouble, PartialShape({-1}), "bias");
  AttrMap conv_attrs;
  conv_attrs["padding"].set_s("SAME");
  SetInts(conv_attrs, "strides", {1, 2, 2, 1});
  Endpoint h = Out(b.AddNode("Conv2D", {{x, 0}, {filter, 0}}, conv_attrs));
  AttrMap pool_attrs;
  pool_attrs["padding"].set_s("SAME");
  SetInts(pool_attrs, "ksize", {1, 2, 2, 1});
  SetInts(pool_attrs, "strides", {1, 1, 1, 1});
  h = Out(b.AddNode("AvgPool", {h}, pool_attrs));
  h = Out(b.AddNode("BiasAdd", {h, {bias, 0}}, {}));
  h = Out(b.AddNode("LogSoftmax", {h}, {}));
  Endpoint w = Out(b.AddConst(RandomDouble({2, 3, 3, 4}), "w"));
  h = Out(b.AddNode("Mul", {h, w}, {}));
  Endpoint axes = Out(b.AddConst(IntTensor({4}, {0, 1, 2, 3}), "axes"));
  Endpoint loss = Out(b.AddNode("Sum", {h, axes}, {}, "loss"));
  ASSERT_FALSE(::testing::Test::HasFailure());
  ExpectGraphGradientsMatch(b, loss, {x, filter, bias},
                            {RandomDouble({2, 5, 5, 3}), RandomDouble({3, 3, 3, 4}), RandomDouble({4})});
}

TEST(NnGradientTest, ASmallCnnAndAnMlpDifferentiateEndToEnd) {
  // x [2,6,6,2] -> Conv2D 3x3x2x3 SAME -> BiasAdd -> Relu -> MaxPool 2x2/2
  // -> Reshape [2, 27] -> MatMul [27, 4] -> BiasAdd
  // -> SparseSoftmaxCrossEntropyWithLogits -> Mean.
  GraphBuilder b("cnn");
  Node* x = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{2, 6, 6, 2}), "x");
  Node* filter = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{3, 3, 2, 3}), "filter");
  Node* conv_bias = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{3}), "conv_bias");
  Node* weights = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{27, 4}), "weights");
  Node* bias = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{4}), "bias");
  AttrMap conv_attrs;
  conv_attrs["padding"].set_s("SAME");
  SetInts(conv_attrs, "strides", {1, 1, 1, 1});
  Endpoint h = Out(b.AddNode("Conv2D", {{x, 0}, {filter, 0}}, conv_attrs));
  h = Out(b.AddNode("BiasAdd", {h, {conv_bias, 0}}, {}));
  h = Out(b.AddNode("Relu", {h}, {}));
  AttrMap pool_attrs;
  pool_attrs["padding"].set_s("VALID");
  SetInts(pool_attrs, "ksize", {1, 2, 2, 1});
  SetInts(pool_attrs, "strides", {1, 2, 2, 1});
  h = Out(b.AddNode("MaxPool", {h}, pool_attrs));
  Endpoint shape = Out(b.AddConst(IntTensor({2}, {2, 27}), "shape"));
  h = Out(b.AddNode("Reshape", {h, shape}, {}));
  h = Out(b.AddNode("MatMul", {h, {weights, 0}}, {}));
  h = Out(b.AddNode("BiasAdd", {h, {bias, 0}}, {}));
  Endpoint labels = Out(b.AddConst(Int64Tensor({2}, {3, 1}), "labels"));
  Endpoint xent = Out(b.AddNode("SparseSoftmaxCrossEntropyWithLogits", {h, labels}, {}));
  Endpoint axis = Out(b.AddConst(IntTensor({1}, {0}), "axis"));
  Endpoint loss = Out(b.AddNode("Mean", {xent, axis}, {}, "loss"));
  ASSERT_FALSE(::testing::Test::HasFailure());
  // Conv2D and MaxPool see distinct, well separated values: the relu and
  // pooling kinks stay more than a step away at these inputs (checked by
  // the finite differences agreeing).
  ExpectGraphGradientsMatch(b, loss, {x, filter, conv_bias, weights, bias},
                            {RandomDouble({2, 6, 6, 2}), RandomDouble({3, 3, 2, 3}), RandomDouble({3}, -0.1, 0.1),
                             RandomDouble({27, 4}), RandomDouble({4})});
}

TEST(NnGradientTest, AnMlpWithSoftmaxCrossEntropyDifferentiatesEndToEnd) {
  // x [3,4] -> MatMul [4,5] -> BiasAdd -> Elu -> MatMul [5,3] -> BiasAdd
  // -> SoftmaxCrossEntropyWithLogits -> Mean, plus an L2Loss penalty.
  GraphBuilder b("mlp");
  Node* x = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{3, 4}), "x");
  Node* w1 = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{4, 5}), "w1");
  Node* b1 = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{5}), "b1");
  Node* w2 = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{5, 3}), "w2");
  Node* b2 = *b.AddPlaceholder(DataType::kDouble, PartialShape(Shape{3}), "b2");
  Endpoint h = Out(b.AddNode("MatMul", {{x, 0}, {w1, 0}}, {}));
  h = Out(b.AddNode("BiasAdd", {h, {b1, 0}}, {}));
  h = Out(b.AddNode("Gelu", {h}, {}));
  h = Out(b.AddNode("MatMul", {h, {w2, 0}}, {}));
  h = Out(b.AddNode("BiasAdd", {h, {b2, 0}}, {}));
  Endpoint labels = Out(b.AddConst(Probabilities(3, 3), "labels"));
  Endpoint xent = Out(b.AddNode("SoftmaxCrossEntropyWithLogits", {h, labels}, {}));
  Endpoint axis = Out(b.AddConst(IntTensor({1}, {0}), "axis"));
  Endpoint mean = Out(b.AddNode("Mean", {xent, axis}, {}));
  Endpoint penalty = Out(b.AddNode("L2Loss", {{w1, 0}}, {}));
  Endpoint loss = Out(b.AddNode("AddV2", {mean, penalty}, {}, "loss"));
  ASSERT_FALSE(::testing::Test::HasFailure());
  ExpectGraphGradientsMatch(b, loss, {x, w1, b1, w2, b2},
                            {RandomDouble({3, 4}), RandomDouble({4, 5}), RandomDouble({5}), RandomDouble({5, 3}),
                             RandomDouble({3})});
}

}  // namespace
}  // namespace plexus::testing
