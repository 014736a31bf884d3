// The conformance case catalog: for each op that a plugin may implement, a
// generator of test cases (inputs and attributes) for one element dtype.
// plexus-plugin-check runs every case on the plugin under test and on the
// reference kernels and compares the outputs.
//
// A generator is registered once per op (several ops may share one function):
//
//   PX_CONFORMANCE_CASES("Relu", "Relu6", "Elu")(const CaseContext& ctx) {
//     std::vector<Case> cases;
//     cases.push_back(Case(ctx.op, "random [3,4]")
//                         .Input(RandomTensor(ctx.dtype, {3, 4}, ctx.rng))
//                         .Attr("T", ctx.dtype));
//     return cases;
//   }
//
// ctx.dtype is the value of the op's element type attribute ("T", "dtype",
// "SrcT" or else its first type attribute; the same rule as docs/ops.md), or
// DataType::kInvalid for an op without a type attribute. A generator sets every
// type attribute itself: other type attributes (Tidx, Tindices, DstT...) take a
// value the reference supports; a kernel that does not accept a case's other
// attributes has the case skipped with that reason.
//
// Cases should cover random inputs of a few shapes, edge shapes (zero-size,
// rank 0, size-1 dimensions, broadcasting corners where the op broadcasts),
// special values where they matter (zeros, negatives, infinities, NaN for
// float types), and error cases (Case::ExpectError: the reference must refuse
// them too, and the plugin must return an error with the same code, not
// crash). Keep each case small (at most a few thousand elements): the tool
// runs every case for every dtype a plugin claims.
#ifndef PLEXUS_SDK_CONFORMANCE_CASES_H_
#define PLEXUS_SDK_CONFORMANCE_CASES_H_

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "attr_value.pb.h"
#include "plexus/dtype.h"
#include "plexus/shape.h"
#include "plexus/tensor.h"

namespace plexus::conformance {

// |got - want| <= atol + rtol * |want| elementwise; NaNs must match NaNs and
// infinities must match exactly.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};
// float 1e-6/1e-5, double 1e-12/1e-12, half 2e-3/1e-3, bfloat16 1.6e-2/1e-2,
// integers and bool exact.
Tolerance DefaultTolerance(DataType dtype);

class Case {
 public:
  // `label` says what the case is about: "random [2,3] x [3]", "zero-size",
  // "NaN and infinities", "error: rank mismatch".
  Case(std::string op, std::string label) : op_(std::move(op)), label_(std::move(label)) {}

  // Inputs in order (a list input such as ConcatV2's values is several Input
  // calls plus its N attribute). Host tensors.
  Case& Input(Tensor value);
  Case& Attr(const std::string& name, DataType value);
  Case& Attr(const std::string& name, int64_t value);
  Case& Attr(const std::string& name, int value) { return Attr(name, static_cast<int64_t>(value)); }
  Case& Attr(const std::string& name, float value);
  Case& Attr(const std::string& name, bool value);
  Case& Attr(const std::string& name, const std::string& value);
  Case& Attr(const std::string& name, const char* value) { return Attr(name, std::string(value)); }
  Case& Attr(const std::string& name, const std::vector<int64_t>& value);
  Case& Attr(const std::string& name, const std::vector<DataType>& value);
  Case& Attr(const std::string& name, const tf::AttrValue& value);
  // Overrides DefaultTolerance of each output's dtype.
  Case& WithTolerance(Tolerance tol);
  // The reference refuses this case with `code`; the plugin must too.
  Case& ExpectError(absl::StatusCode code);

  const std::string& op() const { return op_; }
  const std::string& label() const { return label_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  const std::vector<std::pair<std::string, tf::AttrValue>>& attrs() const { return attrs_; }
  const std::optional<Tolerance>& tolerance() const { return tolerance_; }
  const std::optional<absl::StatusCode>& expected_error() const { return expected_error_; }
  // "AddV2 random [2,3] x [3]: AddV2(float [2,3], float [3]) T=float".
  std::string Describe() const;

 private:
  std::string op_;
  std::string label_;
  std::vector<Tensor> inputs_;
  std::vector<std::pair<std::string, tf::AttrValue>> attrs_;
  std::optional<Tolerance> tolerance_;
  std::optional<absl::StatusCode> expected_error_;
};

struct CaseContext {
  std::string op;
  DataType dtype;     // the element type; kInvalid for an op without one
  std::mt19937& rng;  // seeded per op and dtype, so runs are repeatable
};

using CaseGenerator = std::function<std::vector<Case>(const CaseContext&)>;

// The generator for `op`, or null when the catalog has none.
const CaseGenerator* FindCaseGenerator(const std::string& op);
// Every op with a generator, sorted.
std::vector<std::string> CatalogOps();
// Registers `fn` for each op in `ops`; used by PX_CONFORMANCE_CASES.
bool RegisterCaseGenerator(std::vector<std::string> ops, CaseGenerator fn);

// Random host tensors. Floats are uniform in [lo, hi]; integers uniform in
// [lo, hi] clamped to the type's range; bool is a fair coin.
Tensor RandomTensor(DataType dtype, const Shape& shape, std::mt19937& rng, double lo = -3,
                    double hi = 3);
// A host tensor from doubles (converted to the dtype; bool is x != 0).
Tensor MakeTensor(DataType dtype, const Shape& shape, const std::vector<double>& values);
// A host tensor of int32 or int64 values (shapes, axes, indices).
Tensor IntTensor(DataType dtype, const Shape& shape, const std::vector<int64_t>& values);
// Element i of a host tensor of any numeric or bool dtype, as a double.
double ElementAsDouble(const Tensor& t, int64_t i);

// Dtype groups.
bool IsFloatType(DataType t);    // float, double, half, bfloat16
bool IsIntegerType(DataType t);  // int8/16/32/64, uint8/16/32/64
bool IsUnsignedType(DataType t);

// Compares dtype, shape and values within `tol`. Returns an error naming the
// first mismatching element.
absl::Status CompareTensors(const Tensor& got, const Tensor& want, Tolerance tol);

}  // namespace plexus::conformance

#define PX_CONFORMANCE_CONCAT_INNER(a, b) a##b
#define PX_CONFORMANCE_CONCAT(a, b) PX_CONFORMANCE_CONCAT_INNER(a, b)
// PX_CONFORMANCE_CASES("OpA", "OpB")(const CaseContext& ctx) { ... } defines
// and registers one generator for the listed ops.
#define PX_CONFORMANCE_CASES(...)                                                        \
  static std::vector<::plexus::conformance::Case> PX_CONFORMANCE_CONCAT(                 \
      px_conformance_cases_, __LINE__)(const ::plexus::conformance::CaseContext&);       \
  static const bool PX_CONFORMANCE_CONCAT(px_conformance_registered_, __LINE__) =        \
      ::plexus::conformance::RegisterCaseGenerator(                                      \
          {__VA_ARGS__}, PX_CONFORMANCE_CONCAT(px_conformance_cases_, __LINE__));        \
  static std::vector<::plexus::conformance::Case> PX_CONFORMANCE_CONCAT(                 \
      px_conformance_cases_, __LINE__)

#endif  // PLEXUS_SDK_CONFORMANCE_CASES_H_
