// The per-op test harness: builds a one-node graph, runs it on the cpu
// plugin (CPU:0) and on the reference plugin (REF:0), and compares every
// output. A node that would fall back to another device fails the test, so a
// missing cpu kernel for a dtype is caught rather than silently compared with
// itself.
//
//   std::mt19937 rng(1);
//   OpCase c("AddV2");
//   c.Input(RandomTensor(DataType::kFloat, {2, 3}, rng))
//    .Input(RandomTensor(DataType::kFloat, {3}, rng))
//    .Attr("T", DataType::kFloat);
//   ExpectCpuMatchesReference(c);
#ifndef PLEXUS_TESTS_OPS_OP_TEST_UTIL_H_
#define PLEXUS_TESTS_OPS_OP_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attr_value.pb.h"
#include "gtest/gtest.h"
#include "cases.h"
#include "plexus/plexus.h"

namespace plexus::testing {

// One process-wide runtime with the cpu and reference plugins (a plugin file
// is initialized once per process).
Runtime& OpTestRuntime();

// The dtypes the issue asks for, by group.
std::vector<DataType> FloatTypes();    // float, double, half, bfloat16
std::vector<DataType> IntegerTypes();  // int8/16/32/64, uint8
std::vector<DataType> RealTypes();     // both of the above

class OpCase {
 public:
  explicit OpCase(std::string op) : op_(std::move(op)) {}

  // Inputs in order; each becomes a Placeholder fed with the tensor (a list
  // input such as ConcatV2's values is several Input calls plus its N attr).
  OpCase& Input(Tensor value);
  OpCase& Attr(const std::string& name, DataType value);
  OpCase& Attr(const std::string& name, int64_t value);
  OpCase& Attr(const std::string& name, int value) { return Attr(name, static_cast<int64_t>(value)); }
  OpCase& Attr(const std::string& name, float value);
  OpCase& Attr(const std::string& name, bool value);
  OpCase& Attr(const std::string& name, const std::string& value);
  OpCase& Attr(const std::string& name, const char* value) { return Attr(name, std::string(value)); }
  OpCase& Attr(const std::string& name, const std::vector<int64_t>& value);
  OpCase& Attr(const std::string& name, const std::vector<DataType>& value);
  OpCase& Attr(const std::string& name, const tf::AttrValue& value);

  // Runs on one device ("CPU:0", "REF:0"); fails when the node did not run
  // there. Returns every output of the node.
  absl::StatusOr<std::vector<Tensor>> Run(const std::string& device) const;

  // "AddV2(float [2,3], float [3]) T=float" for failure messages.
  std::string Describe() const;

  const std::string& op() const { return op_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }

 private:
  std::string op_;
  std::vector<Tensor> inputs_;
  std::vector<std::pair<std::string, tf::AttrValue>> attrs_;
};

// Tolerances, comparison and tensor builders are the conformance catalog's
// (sdk/conformance/cases.h), so the tests and plexus-plugin-check agree.
using conformance::CompareTensors;
using conformance::DefaultTolerance;
using conformance::ElementAsDouble;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;

// Runs `c` on CPU:0 and REF:0 and expects equal dtypes and shapes and values
// within `tol` (DefaultTolerance of each output's dtype when absent). When
// the reference fails, the test fails: error cases use ExpectBothFail.
void ExpectCpuMatchesReference(const OpCase& c);
void ExpectCpuMatchesReference(const OpCase& c, Tolerance tol);

// For fuzzing: either both succeed and match (as above), or both fail with
// the same code.
void ExpectCpuAgreesWithReference(const OpCase& c);

// Expects both devices to refuse the case with `code`, and the cpu error to
// contain `text`.
void ExpectBothFail(const OpCase& c, absl::StatusCode code, const std::string& text);

}  // namespace plexus::testing

#endif  // PLEXUS_TESTS_OPS_OP_TEST_UTIL_H_
