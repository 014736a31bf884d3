// Host kernels of the string and parsing ops (schemas in
// ops/parsing_ops.cc): ParseExample / ParseExampleV2 (tf.Example protos to
// dense tensors and, for VarLenFeatures, sparse ones), StringJoin and
// StaticRegexFullMatch; and host fallbacks for string tensors that the
// plugins' numeric kernels do not take: Const, Pack and Select of strings.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "absl/strings/str_cat.h"
#include "example.pb.h"
#include "devices/host_ops.h"
#include "ops/parsing_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"

namespace plexus {
namespace {

using parsing_util::LayoutOf;
using parsing_util::ParseLayout;
using parsing_util::ShapeListAttr;
using parsing_util::TypeListAttr;

// --- ParseExample / ParseExampleV2 -------------------------------------------

// The keys of V1 (one scalar input each) or V2 (one vector input).
absl::StatusOr<std::vector<std::string>> KeysOf(HostOpContext& ctx, const ParseLayout& l, int first_input,
                                                int count, absl::string_view what) {
  std::vector<std::string> keys;
  if (l.v2) {
    const Tensor& t = ctx.input(first_input);
    if (t.dtype() != DataType::kString || t.num_elements() != count) {
      return ctx.InvalidArgument(absl::StrCat(what, " must hold ", count, " strings, got ", t.DebugString(0)));
    }
    keys = t.strings();
  } else {
    for (int i = 0; i < count; ++i) {
      const Tensor& t = ctx.input(first_input + i);
      if (t.dtype() != DataType::kString || t.dims() != 0) {
        return ctx.InvalidArgument(absl::StrCat(what, " ", i, " must be a string scalar, got ", t.DebugString(0)));
      }
      keys.push_back(t.strings()[0]);
    }
  }
  return keys;
}

const char* KindName(tf::Feature::KindCase kind) {
  switch (kind) {
    case tf::Feature::kBytesList: return "bytes_list (string)";
    case tf::Feature::kFloatList: return "float_list (float)";
    case tf::Feature::kInt64List: return "int64_list (int64)";
    default: return "no list";
  }
}

// One run of ParseExample / ParseExampleV2: the attributes, the inputs and
// the outputs being filled.
struct ExampleParser {
  explicit ExampleParser(HostOpContext& c) : ctx(c) {}

  // The layout, Tdense, dense_shapes, sparse_types and the keys (dense and
  // sparse features; ragged ones are not supported).
  absl::Status ReadAttrs();
  // The serialized records and their names.
  absl::Status ReadRecords();
  // Checks each feature's shape and default and allocates its output.
  absl::Status AllocateOutputs();
  // Parses record `b` into row `b` of each output.
  absl::Status ParseRecord(tf::Example& example, int64_t b);
  // Fills row `b` of output `f` from `feature` (null when missing).
  absl::Status ParseFeature(int f, int64_t b, const tf::Feature* feature);
  // Appends record `b`'s values of sparse feature `s` (none when missing).
  absl::Status ParseSparse(int s, int64_t b, const tf::Feature* feature);
  absl::Status SetOutputs();
  // Example `b`, for messages: by name when the names were given.
  std::string Where(int64_t b) const {
    return have_names ? absl::StrCat("example '", names->strings()[b], "'") : absl::StrCat("example ", b);
  }

  HostOpContext& ctx;
  ParseLayout l;
  std::vector<DataType> tdense;
  std::vector<PartialShape> dense_shapes;
  std::vector<std::string> dense_keys;
  const Tensor* serialized = nullptr;
  const Tensor* names = nullptr;
  bool have_names = false;
  // Per feature: element count, default (empty = required), output.
  std::vector<int64_t> counts;
  std::vector<Tensor> outputs;
  std::vector<Shape> out_shapes;
  std::vector<std::vector<std::string>> string_outputs;
  // Sparse (VarLenFeature) features: per feature the record of each value,
  // its position in the record and the values themselves.
  std::vector<DataType> sparse_types;
  std::vector<std::string> sparse_keys;
  struct SparseValues {
    std::vector<int64_t> record, position;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    int64_t max_length = 0;
  };
  std::vector<SparseValues> sparse;
};

absl::Status ExampleParser::ReadAttrs() {
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(l, LayoutOf(node));
  PX_ASSIGN_OR_RETURN(tdense, TypeListAttr(node, "Tdense"));
  PX_ASSIGN_OR_RETURN(dense_shapes, ShapeListAttr(node, "dense_shapes"));
  if (static_cast<int>(dense_shapes.size()) != l.num_dense) {
    return ctx.InvalidArgument(absl::StrCat("dense_shapes lists ", dense_shapes.size(), " shapes for ",
                                            l.num_dense, " dense features"));
  }
  PX_ASSIGN_OR_RETURN(sparse_types, TypeListAttr(node, "sparse_types"));
  if (l.v2) {
    const Tensor& ragged_keys = ctx.input(l.ragged_keys_input);
    if (ragged_keys.num_elements() > 0 || l.num_ragged > 0) {
      return ctx.Error(absl::StatusCode::kUnimplemented,
                       "ragged features are not supported; dense and sparse (VarLenFeature) features are");
    }
  }
  PX_ASSIGN_OR_RETURN(sparse_keys, KeysOf(ctx, l, l.sparse_keys_input, l.num_sparse, "sparse_keys"));
  sparse.resize(l.num_sparse);
  PX_ASSIGN_OR_RETURN(dense_keys, KeysOf(ctx, l, l.dense_keys_input, l.num_dense, "dense_keys"));
  return absl::OkStatus();
}

absl::Status ExampleParser::ReadRecords() {
  serialized = &ctx.input(0);
  if (serialized->dtype() != DataType::kString) {
    return ctx.InvalidArgument(absl::StrCat("serialized must be strings, got ", serialized->DebugString(0)));
  }
  if (!l.v2 && serialized->dims() != 1) {
    return ctx.InvalidArgument(absl::StrCat("serialized must be a vector, got shape ",
                                            ShapeToString(serialized->shape())));
  }
  names = &ctx.input(1);
  have_names = names->dtype() == DataType::kString && names->num_elements() > 0;
  if (have_names && names->num_elements() != serialized->num_elements()) {
    return ctx.InvalidArgument(absl::StrCat("names has ", names->num_elements(), " entries but serialized has ",
                                            serialized->num_elements()));
  }
  return absl::OkStatus();
}

absl::Status ExampleParser::AllocateOutputs() {
  counts.resize(l.num_dense);
  outputs.resize(l.num_dense);
  out_shapes.resize(l.num_dense);
  string_outputs.resize(l.num_dense);
  for (int f = 0; f < l.num_dense; ++f) {
    if (!dense_shapes[f].fully_defined()) {
      return ctx.Error(absl::StatusCode::kUnimplemented,
                       absl::StrCat("dense feature '", dense_keys[f], "' has shape ", dense_shapes[f].ToString(),
                                    "; variable-length dense features are not supported"));
    }
    auto bytes = CheckedByteSize(DataType::kUInt8, dense_shapes[f].dims());
    if (!bytes.ok()) return ctx.InvalidArgument(bytes.status().message());
    counts[f] = NumElements(dense_shapes[f].dims());
    const Tensor& def = ctx.input(l.dense_defaults_input + f);
    if (def.dtype() != tdense[f]) {
      return ctx.InvalidArgument(absl::StrCat("dense_defaults[", f, "] is ", DataTypeName(def.dtype()),
                                              " but Tdense[", f, "] is ", DataTypeName(tdense[f])));
    }
    if (def.num_elements() != 0 && def.num_elements() != counts[f]) {
      return ctx.InvalidArgument(absl::StrCat("dense_defaults[", f, "] for '", dense_keys[f], "' has ",
                                              def.num_elements(), " values but dense_shapes[", f, "] ",
                                              dense_shapes[f].ToString(), " needs ", counts[f]));
    }
    Shape out_shape = serialized->shape();
    for (int64_t d : dense_shapes[f].dims()) out_shape.push_back(d);
    auto out_bytes = CheckedByteSize(tdense[f] == DataType::kString ? DataType::kUInt8 : tdense[f], out_shape);
    if (!out_bytes.ok()) return ctx.InvalidArgument(out_bytes.status().message());
    out_shapes[f] = out_shape;
    if (tdense[f] == DataType::kString) {
      string_outputs[f].resize(NumElements(out_shape));
    } else {
      PX_ASSIGN_OR_RETURN(outputs[f], Tensor::AllocateHost(tdense[f], out_shape));
    }
  }
  return absl::OkStatus();
}

absl::Status ExampleParser::ParseRecord(tf::Example& example, int64_t b) {
  const std::vector<std::string>& records = serialized->strings();
  example.Clear();
  if (!example.ParseFromString(records[b])) {
    return ctx.InvalidArgument(absl::StrCat("could not parse ", Where(b), " as a tf.Example (",
                                            records[b].size(), " bytes)"));
  }
  const auto& features = example.features().feature();
  for (int f = 0; f < l.num_dense; ++f) {
    auto it = features.find(dense_keys[f]);
    PX_RETURN_IF_ERROR(ParseFeature(f, b, it == features.end() ? nullptr : &it->second));
  }
  for (int s = 0; s < l.num_sparse; ++s) {
    auto it = features.find(sparse_keys[s]);
    PX_RETURN_IF_ERROR(ParseSparse(s, b, it == features.end() ? nullptr : &it->second));
  }
  return absl::OkStatus();
}

absl::Status ExampleParser::ParseSparse(int s, int64_t b, const tf::Feature* feature) {
  if (feature == nullptr || feature->kind_case() == tf::Feature::KIND_NOT_SET) return absl::OkStatus();
  const DataType dtype = sparse_types[s];
  const tf::Feature::KindCase want = dtype == DataType::kFloat   ? tf::Feature::kFloatList
                                     : dtype == DataType::kInt64 ? tf::Feature::kInt64List
                                                                 : tf::Feature::kBytesList;
  if (feature->kind_case() != want) {
    return ctx.InvalidArgument(absl::StrCat(Where(b), ": feature '", sparse_keys[s], "' holds a ",
                                            KindName(feature->kind_case()), " but ", DataTypeName(dtype),
                                            " was requested"));
  }
  SparseValues& v = sparse[s];
  int64_t n = 0;
  if (dtype == DataType::kFloat) {
    const auto& list = feature->float_list().value();
    v.floats.insert(v.floats.end(), list.begin(), list.end());
    n = list.size();
  } else if (dtype == DataType::kInt64) {
    const auto& list = feature->int64_list().value();
    v.ints.insert(v.ints.end(), list.begin(), list.end());
    n = list.size();
  } else {
    const auto& list = feature->bytes_list().value();
    v.strings.insert(v.strings.end(), list.begin(), list.end());
    n = list.size();
  }
  for (int64_t i = 0; i < n; ++i) {
    v.record.push_back(b);
    v.position.push_back(i);
  }
  v.max_length = std::max(v.max_length, n);
  return absl::OkStatus();
}

absl::Status ExampleParser::ParseFeature(int f, int64_t b, const tf::Feature* feature) {
  const int64_t n = counts[f];
  const DataType dtype = tdense[f];
  int64_t present = 0;
  if (feature != nullptr) {
    switch (feature->kind_case()) {
      case tf::Feature::kFloatList: present = feature->float_list().value_size(); break;
      case tf::Feature::kInt64List: present = feature->int64_list().value_size(); break;
      case tf::Feature::kBytesList: present = feature->bytes_list().value_size(); break;
      default: present = 0;
    }
  }
  if (feature == nullptr || feature->kind_case() == tf::Feature::KIND_NOT_SET) {
    const Tensor& def = ctx.input(l.dense_defaults_input + f);
    if (def.num_elements() == 0 && n > 0) {
      return ctx.InvalidArgument(absl::StrCat(Where(b), ": feature '", dense_keys[f], "' (", DataTypeName(dtype),
                                              ") is required but could not be found"));
    }
    if (dtype == DataType::kString) {
      for (int64_t i = 0; i < n; ++i) string_outputs[f][b * n + i] = def.strings()[i];
    } else {
      const size_t width = DataTypeSize(dtype);
      std::memcpy(static_cast<char*>(outputs[f].raw_data()) + b * n * width, def.raw_data(), n * width);
    }
    return absl::OkStatus();
  }
  const tf::Feature::KindCase want = dtype == DataType::kFloat   ? tf::Feature::kFloatList
                                     : dtype == DataType::kInt64 ? tf::Feature::kInt64List
                                                                 : tf::Feature::kBytesList;
  if (feature->kind_case() != want) {
    return ctx.InvalidArgument(absl::StrCat(Where(b), ": feature '", dense_keys[f], "' holds a ",
                                            KindName(feature->kind_case()), " but ", DataTypeName(dtype),
                                            " was requested"));
  }
  if (present != n) {
    return ctx.InvalidArgument(absl::StrCat(Where(b), ": feature '", dense_keys[f], "' has ", present,
                                            " values but dense shape ", dense_shapes[f].ToString(),
                                            " needs ", n));
  }
  if (dtype == DataType::kFloat) {
    std::memcpy(outputs[f].data<float>() + b * n, feature->float_list().value().data(), n * sizeof(float));
  } else if (dtype == DataType::kInt64) {
    const auto& v = feature->int64_list().value();
    for (int64_t i = 0; i < n; ++i) outputs[f].data<int64_t>()[b * n + i] = v.Get(static_cast<int>(i));
  } else {
    for (int64_t i = 0; i < n; ++i) {
      string_outputs[f][b * n + i] = feature->bytes_list().value(static_cast<int>(i));
    }
  }
  return absl::OkStatus();
}

absl::Status ExampleParser::SetOutputs() {
  // Sparse feature s: indices [n, rank + 1] (the record's index in
  // `serialized`, then the value's position), values [n], dense_shape
  // [rank + 1] (serialized's shape, then the longest list).
  const Shape& batch_shape = serialized->shape();
  const int64_t rank = static_cast<int64_t>(batch_shape.size());
  for (int s = 0; s < l.num_sparse; ++s) {
    SparseValues& v = sparse[s];
    const int64_t n = static_cast<int64_t>(v.record.size());
    PX_ASSIGN_OR_RETURN(Tensor indices, Tensor::AllocateHost(DataType::kInt64, Shape{n, rank + 1}));
    int64_t* idx = indices.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = v.record[i];
      for (int64_t d = rank - 1; d >= 0; --d) {
        idx[i * (rank + 1) + d] = rest % batch_shape[d];
        rest /= batch_shape[d];
      }
      idx[i * (rank + 1) + rank] = v.position[i];
    }
    Tensor values;
    if (sparse_types[s] == DataType::kString) {
      values = Tensor::FromStrings(Shape{n}, std::move(v.strings));
    } else {
      PX_ASSIGN_OR_RETURN(values, Tensor::AllocateHost(sparse_types[s], Shape{n}));
      if (sparse_types[s] == DataType::kFloat) {
        if (n > 0) std::memcpy(values.data<float>(), v.floats.data(), n * sizeof(float));
      } else if (n > 0) {
        std::memcpy(values.data<int64_t>(), v.ints.data(), n * sizeof(int64_t));
      }
    }
    PX_ASSIGN_OR_RETURN(Tensor dense_shape, Tensor::AllocateHost(DataType::kInt64, Shape{rank + 1}));
    for (int64_t d = 0; d < rank; ++d) dense_shape.data<int64_t>()[d] = batch_shape[d];
    dense_shape.data<int64_t>()[rank] = v.max_length;
    ctx.set_output(s, std::move(indices));
    ctx.set_output(l.num_sparse + s, std::move(values));
    ctx.set_output(2 * l.num_sparse + s, std::move(dense_shape));
  }
  for (int f = 0; f < l.num_dense; ++f) {
    if (tdense[f] == DataType::kString) {
      outputs[f] = Tensor::FromStrings(out_shapes[f], std::move(string_outputs[f]));
    }
    ctx.set_output(l.dense_output + f, std::move(outputs[f]));
  }
  return absl::OkStatus();
}

absl::Status ParseExampleOp(HostOpContext& ctx) {
  ExampleParser parser(ctx);
  PX_RETURN_IF_ERROR(parser.ReadAttrs());
  PX_RETURN_IF_ERROR(parser.ReadRecords());
  PX_RETURN_IF_ERROR(parser.AllocateOutputs());
  const int64_t batch = parser.serialized->num_elements();
  tf::Example example;
  for (int64_t b = 0; b < batch; ++b) {
    PX_RETURN_IF_ERROR(parser.ParseRecord(example, b));
  }
  return parser.SetOutputs();
}
PX_REGISTER_HOST_OP("ParseExample", ParseExampleOp);
PX_REGISTER_HOST_OP("ParseExampleV2", ParseExampleOp);

// --- StringJoin ----------------------------------------------------------------

absl::Status StringJoin(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string separator, GetAttrString(ctx.node(), "separator"));
  const Shape* shape = nullptr;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DataType::kString) {
      return ctx.InvalidArgument(absl::StrCat("input ", i, " is ", DataTypeName(t.dtype()), ", not string"));
    }
    if (t.dims() == 0) continue;
    if (shape != nullptr && *shape != t.shape()) {
      return ctx.InvalidArgument(absl::StrCat("input shapes ", ShapeToString(*shape), " and ",
                                              ShapeToString(t.shape()), " differ; non-scalar inputs must match"));
    }
    shape = &t.shape();
  }
  Shape out_shape = shape != nullptr ? *shape : Shape{};
  const int64_t n = NumElements(out_shape);
  std::vector<std::string> out(n);
  for (int64_t k = 0; k < n; ++k) {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      if (i > 0) out[k] += separator;
      out[k] += t.strings()[t.dims() == 0 ? 0 : k];
    }
  }
  ctx.set_output(0, Tensor::FromStrings(std::move(out_shape), std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StringJoin", StringJoin);

// --- StaticRegexFullMatch --------------------------------------------------------

absl::Status StaticRegexFullMatch(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string pattern, GetAttrString(ctx.node(), "pattern"));
  RE2::Options options;
  options.set_log_errors(false);
  RE2 re(pattern, options);
  if (!re.ok()) {
    return ctx.InvalidArgument(absl::StrCat("invalid pattern '", pattern, "': ", re.error()));
  }
  const Tensor& in = ctx.input(0);
  if (in.dtype() != DataType::kString) {
    return ctx.InvalidArgument(absl::StrCat("input is ", DataTypeName(in.dtype()), ", not string"));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kBool, in.shape()));
  const auto& values = in.strings();
  bool* result = out.data<bool>();
  for (size_t i = 0; i < values.size(); ++i) result[i] = RE2::FullMatch(values[i], re);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("StaticRegexFullMatch", StaticRegexFullMatch);

// --- Const of strings ------------------------------------------------------------

// Plugins hold numeric constants; string constants (and any other Const no
// plugin takes) are decoded on the host.
absl::Status ConstFallback(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(const tf::TensorProto* proto, GetAttrTensorProto(ctx.node(), "value"));
  auto value = TensorFromProto(*proto);
  if (!value.ok()) return ctx.InvalidArgument(absl::StrCat("attr 'value': ", value.status().message()));
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), "dtype"));
  if (value->dtype() != dtype) {
    return ctx.InvalidArgument(absl::StrCat("attr 'value' holds ", DataTypeName(value->dtype()),
                                            " but attr 'dtype' is ", DataTypeName(dtype)));
  }
  ctx.set_output(0, *std::move(value));
  return absl::OkStatus();
}
PX_REGISTER_HOST_FALLBACK("Const", ConstFallback);

// --- Pack and Select of strings ------------------------------------------------

// The save paths of SavedModels pack and select strings (checkpoint file
// names); the plugins' kernels are numeric. These run only when no plugin
// kernel matches, i.e. for strings.
absl::Status PackStrings(HostOpContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.InvalidArgument("Pack needs at least one input");
  const Tensor& first = ctx.input(0);
  if (first.dtype() != DataType::kString) {
    return ctx.Error(absl::StatusCode::kNotFound,
                     absl::StrCat("no kernel for Pack of ", DataTypeName(first.dtype()), " on any device"));
  }
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).dtype() != DataType::kString || ctx.input(i).shape() != first.shape()) {
      return ctx.InvalidArgument(absl::StrCat("input ", i, " has shape ", ShapeToString(ctx.input(i).shape()),
                                              " but input 0 has ", ShapeToString(first.shape())));
    }
  }
  PX_ASSIGN_OR_RETURN(int64_t axis, GetAttrInt(ctx.node(), "axis"));
  const int64_t rank = first.dims();
  if (axis < -(rank + 1) || axis > rank) {
    return ctx.InvalidArgument(absl::StrCat("axis ", axis, " is out of range for rank ", rank, " inputs"));
  }
  if (axis < 0) axis += rank + 1;
  Shape out_shape = first.shape();
  out_shape.insert(out_shape.begin() + axis, ctx.num_inputs());
  // outer: product of dims before axis; inner: elements after it.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first.shape()[d];
  const int64_t inner = outer == 0 ? 0 : first.num_elements() / outer;
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(outer * inner * ctx.num_inputs()));
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const auto& values = ctx.input(i).strings();
      for (int64_t k = 0; k < inner; ++k) out.push_back(values[o * inner + k]);
    }
  }
  ctx.set_output(0, Tensor::FromStrings(std::move(out_shape), std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_FALLBACK("Pack", PackStrings);

absl::Status SelectStrings(HostOpContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& e = ctx.input(2);
  if (t.dtype() != DataType::kString) {
    return ctx.Error(absl::StatusCode::kNotFound,
                     absl::StrCat("no kernel for Select of ", DataTypeName(t.dtype()), " on any device"));
  }
  if (cond.dtype() != DataType::kBool || e.dtype() != DataType::kString || t.shape() != e.shape()) {
    return ctx.InvalidArgument(absl::StrCat("Select needs a bool condition and two string tensors of one shape, got ",
                                            cond.DebugString(0), ", ", t.DebugString(0), ", ", e.DebugString(0)));
  }
  const bool* c = cond.data<bool>();
  const int64_t n = t.num_elements();
  std::vector<std::string> out(static_cast<size_t>(n));
  if (cond.dims() == 0) {
    out = c[0] ? t.strings() : e.strings();
  } else if (cond.shape() == t.shape()) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? t.strings()[i] : e.strings()[i];
  } else if (cond.dims() == 1 && t.dims() >= 1 && cond.shape()[0] == t.shape()[0]) {
    // A vector condition picks whole rows.
    const int64_t rows = t.shape()[0];
    const int64_t row = rows == 0 ? 0 : n / rows;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < row; ++k) out[r * row + k] = c[r] ? t.strings()[r * row + k] : e.strings()[r * row + k];
    }
  } else {
    return ctx.InvalidArgument(absl::StrCat("condition shape ", ShapeToString(cond.shape()),
                                            " does not fit values of shape ", ShapeToString(t.shape())));
  }
  ctx.set_output(0, Tensor::FromStrings(t.shape(), std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_FALLBACK("Select", SelectStrings);

}  // namespace
}  // namespace plexus
