// Eager execution of registered ops on the cpu plugin, the SDK's reference
// plugin or the core's own host kernels, as plexus.ops calls them from
// Python: the input's first byte picks the device, then a random op with
// random attributes (op_spec.h), inputs of random small shapes (at most 4096
// elements each), the dtypes the attributes imply, and small or edge values
// (zero, negatives, NaN, infinities). Kernels must validate what they are
// given; an error is a fine answer, a crash or a sanitizer report is not.
//
// Left out, and why:
// - stateful ops (variables, tables, TensorArrays, random ops with state,
//   Assert/Print side effects, checkpoint I/O): their effects outlive the
//   call and some touch files;
// - ops with a resource or variant input or output (a handle or TensorList
//   cannot be made from bytes) and ops with function attributes;
// - collectives, which wait for peers that never come;
// - the graph's own plumbing (Enter, Exit, Merge, Switch, NextIteration,
//   LoopCond, ControlTrigger, _Arg, _Retval, Placeholder), meaningful only
//   inside a graph;
// - Print and PrintV2 (they write to stderr for every input), file readers
//   and writers (MergeV2Checkpoints, SaveV2, RestoreV2,
//   InitializeTableFromTextFileV2).
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

#include "fuzz_util.h"
#include "op_spec.h"
#include "plexus/eager.h"
#include "plexus/tensor.h"

namespace {

using plexus::DataType;
using plexus::Tensor;

const std::vector<DataType> kAnyTypes = {
    DataType::kFloat, DataType::kDouble, DataType::kInt32, DataType::kInt64, DataType::kBool,
    DataType::kHalf,  DataType::kBFloat16, DataType::kInt8, DataType::kUInt8, DataType::kInt16,
    DataType::kString, DataType::kComplex64};

bool IsHandle(DataType t) { return t == DataType::kResource || t == DataType::kVariant; }

bool Eligible(const plexus::OpDef& def) {
  static const std::set<std::string> kSkipped = {
      "Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", "ControlTrigger", "_Arg",
      "_Retval", "Placeholder", "PlaceholderWithDefault", "Print", "PrintV2", "MergeV2Checkpoints",
      "SaveV2", "RestoreV2", "InitializeTableFromTextFileV2", "Assert"};
  if (def.is_stateful || kSkipped.count(def.name)) return false;
  if (def.name.find("Collective") != std::string::npos) return false;
  for (const auto& args : {def.inputs, def.outputs}) {
    for (const plexus::ArgSpec& arg : args) {
      if (IsHandle(arg.fixed_type) || arg.is_ref) return false;
    }
  }
  for (const plexus::AttrSpec& attr : def.attrs) {
    if (attr.type == "func" || attr.type == "list(func)") return false;
    if (!attr.allowed_types.empty()) {
      bool any_data = false;
      for (DataType t : attr.allowed_types) any_data |= !IsHandle(t);
      if (!any_data) return false;
    }
  }
  return true;
}

plexus::Shape RandomShape(FuzzedDataProvider& p) {
  const int rank = p.ConsumeIntegralInRange<int>(0, 4);
  plexus::Shape shape;
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = p.ConsumeProbability<float>() < 0.9f ? p.ConsumeIntegralInRange<int64_t>(0, 5)
                                                     : p.ConsumeIntegralInRange<int64_t>(6, 64);
    if (n * std::max<int64_t>(d, 1) > 4096) d = 1;
    n *= std::max<int64_t>(d, 1);
    shape.push_back(d);
  }
  return shape;
}

// Small integers, most from -2 to 6 (indices, axes, sizes, counts), a few
// edges.
int64_t SmallInt(FuzzedDataProvider& p) {
  if (p.ConsumeProbability<float>() < 0.95f) return p.ConsumeIntegralInRange<int64_t>(-2, 6);
  return p.PickValueInArray({-(int64_t{1} << 31), (int64_t{1} << 31) - 1, int64_t{1} << 40,
                             std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
}

double SmallReal(FuzzedDataProvider& p) {
  static constexpr double kValues[] = {0, 1, -1, 0.5, 2, -3, 6, 1e-6, 1e6, -0.0,
                                       std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN()};
  return p.PickValueInArray(kValues);
}

uint16_t HalfBits(double v) {  // the values SmallReal makes, as IEEE half
  if (std::isnan(v)) return 0x7E00;
  if (std::isinf(v)) return v > 0 ? 0x7C00 : 0xFC00;
  if (v == 1e6) return 0x7BFF;   // half's largest finite value
  if (v == 1e-6) return 0x0011;  // a subnormal
  float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if (f == 0) return sign;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (exponent << 10) | ((bits >> 13) & 0x3ff));
}

uint16_t BFloat16Bits(double v) {
  float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

template <typename T>
void FillInts(FuzzedDataProvider& p, Tensor& t) {
  T* out = t.data<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out[i] = static_cast<T>(std::clamp<int64_t>(SmallInt(p), std::numeric_limits<T>::min(),
                                                 std::numeric_limits<T>::max()));
  }
}

Tensor RandomTensor(FuzzedDataProvider& p, DataType type) {
  plexus::Shape shape = RandomShape(p);
  if (type == DataType::kString) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<std::string> values(n);
    for (auto& v : values) v = p.ConsumeRandomLengthString(16);
    return Tensor::FromStrings(shape, std::move(values));
  }
  auto allocated = Tensor::AllocateHost(type, shape);
  if (!allocated.ok()) return Tensor::FromVector(DataType::kFloat, {}, std::vector<float>{0});
  Tensor t = *std::move(allocated);
  const int64_t n = t.num_elements();
  switch (type) {
    case DataType::kFloat: for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(SmallReal(p)); break;
    case DataType::kDouble: for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = SmallReal(p); break;
    case DataType::kComplex64: for (int64_t i = 0; i < 2 * n; ++i) t.data<float>()[i] = static_cast<float>(SmallReal(p)); break;
    case DataType::kHalf: for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = HalfBits(SmallReal(p)); break;
    case DataType::kBFloat16: for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = BFloat16Bits(SmallReal(p)); break;
    case DataType::kBool: for (int64_t i = 0; i < n; ++i) t.data<bool>()[i] = p.ConsumeBool(); break;
    case DataType::kInt8: FillInts<int8_t>(p, t); break;
    case DataType::kUInt8: FillInts<uint8_t>(p, t); break;
    case DataType::kInt16: FillInts<int16_t>(p, t); break;
    case DataType::kUInt16: FillInts<uint16_t>(p, t); break;
    case DataType::kInt32: FillInts<int32_t>(p, t); break;
    case DataType::kInt64: FillInts<int64_t>(p, t); break;
    case DataType::kUInt32: FillInts<uint32_t>(p, t); break;
    case DataType::kUInt64: FillInts<uint64_t>(p, t); break;
    default: std::memset(t.raw_data(), 0, n * plexus::DataTypeSize(type)); break;
  }
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  plexus::fuzz::FuzzRuntime();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<const plexus::OpDef*> ops = plexus::fuzz::ListOps(Eligible);
  static plexus::EagerContext* eager = new plexus::EagerContext(plexus::fuzz::FuzzRuntime());
  // CPU:0, REF:0, or none: the context's own choice (the host device).
  static const std::vector<std::shared_ptr<plexus::Device>> devices = plexus::fuzz::FuzzRuntime()->devices();
  FuzzedDataProvider p(data, size);
  const size_t pick = p.ConsumeIntegralInRange<size_t>(0, devices.size());
  plexus::Device* device = pick < devices.size() ? devices[pick].get() : nullptr;
  plexus::fuzz::OpCall call;
  plexus::fuzz::MakeOpCall(p, ops, kAnyTypes, &call);
  std::vector<Tensor> inputs;
  for (DataType type : call.input_types) {
    if (IsHandle(type)) return 0;
    inputs.push_back(RandomTensor(p, type));
  }
  // PX_FUZZ_VERBOSE=1 names each call, to tell what an input from a crash runs.
  static const bool verbose = std::getenv("PX_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    std::fprintf(stderr, "eager_ops: %s on %s with %zu input(s)\n", call.def->name.c_str(),
                 device ? device->name().c_str() : "the host", inputs.size());
  }
  auto result = eager->Execute(call.def->name, inputs, call.attrs, device);
  plexus::fuzz::AbortOnValidationBreach(result.status());
  // Prepared ops are cached by op, attributes and dtypes: keep the cache
  // from growing with every distinct attribute value.
  if (eager->cache_size() > 256) eager->ClearCache();
  return 0;
}
