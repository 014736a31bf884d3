#include "plexus/tensor_proto.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "plexus/shape.h"

namespace plexus {
namespace {

// Fills `n` elements of `out` from a repeated field, repeating its last
// element (TensorFlow's rule); an empty field leaves zeros.
template <typename Out, typename Field>
absl::Status FillFromValues(const Field& values, int64_t n, Out* out,
                            const char* field_name) {
  if (values.size() > n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorProto has ", values.size(), " values in ", field_name,
        " but its shape holds only ", n));
  }
  if (values.empty()) return absl::OkStatus();
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<Out>(values.Get(i < values.size() ? i : values.size() - 1));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PartialShape> ShapeFromProto(const tf::TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) {
      return absl::InvalidArgumentError("TensorShapeProto has unknown_rank and dimensions");
    }
    return PartialShape::Unknown();
  }
  Shape dims;
  for (const auto& d : proto.dim()) {
    if (d.size() < -1) {
      return absl::InvalidArgumentError(absl::StrCat("invalid dimension size ", d.size()));
    }
    dims.push_back(d.size());
  }
  return PartialShape(std::move(dims));
}

absl::StatusOr<Tensor> TensorFromProto(const tf::TensorProto& proto) {
  int32_t raw_type = static_cast<int32_t>(proto.dtype());
  if (!IsKnownDataType(raw_type)) {
    return absl::InvalidArgumentError(absl::StrCat("TensorProto has unknown dtype ", raw_type));
  }
  DataType dtype = BaseType(raw_type);
  auto partial = ShapeFromProto(proto.tensor_shape());
  if (!partial.ok()) return partial.status();
  if (!partial->fully_defined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorProto shape ", partial->ToString(), " is not fully defined"));
  }
  Shape shape = partial->dims();
  // Sizes come from untrusted files: check before any arithmetic, and cap what
  // a few bytes of *_val fill can expand to.
  auto checked = CheckedByteSize(dtype == DataType::kString ? DataType::kUInt8 : dtype, shape);
  if (!checked.ok()) return checked.status();
  const int64_t n = NumElements(shape);
  constexpr int64_t kMaxDecodedBytes = int64_t{4} << 30;
  const int64_t decoded_bytes =
      dtype == DataType::kString ? n * static_cast<int64_t>(sizeof(std::string)) : static_cast<int64_t>(*checked);
  if (decoded_bytes > kMaxDecodedBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorProto of shape ", ShapeToString(shape), " would take ", decoded_bytes,
        " bytes; constants are limited to ", kMaxDecodedBytes));
  }

  if (dtype == DataType::kString) {
    std::vector<std::string> values(n);
    if (proto.string_val_size() > n) {
      return absl::InvalidArgumentError("TensorProto has more strings than its shape holds");
    }
    for (int64_t i = 0; i < n && proto.string_val_size() > 0; ++i) {
      values[i] = proto.string_val(i < proto.string_val_size() ? i : proto.string_val_size() - 1);
    }
    return Tensor::FromStrings(std::move(shape), std::move(values));
  }

  size_t element_size = DataTypeSize(dtype);
  if (element_size == 0) {
    return absl::UnimplementedError(absl::StrCat(
        "tensors of type ", DataTypeName(dtype), " are not supported yet"));
  }
  auto allocated = Tensor::AllocateHost(dtype, shape);
  if (!allocated.ok()) return allocated.status();
  Tensor tensor = *std::move(allocated);

  if (!proto.tensor_content().empty()) {
    if (proto.tensor_content().size() != tensor.nbytes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorProto tensor_content has ", proto.tensor_content().size(),
          " bytes, but ", DataTypeName(dtype), " ", ShapeToString(shape),
          " needs ", tensor.nbytes()));
    }
    std::memcpy(tensor.raw_data(), proto.tensor_content().data(), tensor.nbytes());
    return tensor;
  }

  absl::Status status;
  switch (dtype) {
    case DataType::kFloat:
      status = FillFromValues(proto.float_val(), n, tensor.data<float>(), "float_val");
      break;
    case DataType::kDouble:
      status = FillFromValues(proto.double_val(), n, tensor.data<double>(), "double_val");
      break;
    case DataType::kInt32:
      status = FillFromValues(proto.int_val(), n, tensor.data<int32_t>(), "int_val");
      break;
    case DataType::kInt16:
      status = FillFromValues(proto.int_val(), n, tensor.data<int16_t>(), "int_val");
      break;
    case DataType::kInt8:
      status = FillFromValues(proto.int_val(), n, tensor.data<int8_t>(), "int_val");
      break;
    case DataType::kUInt8:
      status = FillFromValues(proto.int_val(), n, tensor.data<uint8_t>(), "int_val");
      break;
    case DataType::kUInt16:
      status = FillFromValues(proto.int_val(), n, tensor.data<uint16_t>(), "int_val");
      break;
    case DataType::kInt64:
      status = FillFromValues(proto.int64_val(), n, tensor.data<int64_t>(), "int64_val");
      break;
    case DataType::kUInt32:
      status = FillFromValues(proto.uint32_val(), n, tensor.data<uint32_t>(), "uint32_val");
      break;
    case DataType::kUInt64:
      status = FillFromValues(proto.uint64_val(), n, tensor.data<uint64_t>(), "uint64_val");
      break;
    case DataType::kBool:
      status = FillFromValues(proto.bool_val(), n, tensor.data<uint8_t>(), "bool_val");
      break;
    case DataType::kHalf:
    case DataType::kBFloat16:
      status = FillFromValues(proto.half_val(), n, tensor.data<uint16_t>(), "half_val");
      break;
    case DataType::kComplex64:
      status = FillFromValues(proto.scomplex_val(), 2 * n, tensor.data<float>(), "scomplex_val");
      break;
    case DataType::kComplex128:
      status = FillFromValues(proto.dcomplex_val(), 2 * n, tensor.data<double>(), "dcomplex_val");
      break;
    default:
      status = absl::UnimplementedError(absl::StrCat(
          "TensorProto of type ", DataTypeName(dtype), " is not supported yet"));
  }
  if (!status.ok()) return status;
  return tensor;
}

absl::StatusOr<tf::TensorProto> TensorToProto(const Tensor& tensor) {
  if (!tensor.valid()) return absl::InvalidArgumentError("cannot serialize an empty tensor");
  if (!tensor.host_readable()) {
    return absl::InvalidArgumentError("cannot serialize a tensor that is not in host memory");
  }
  if (tensor.dtype() == DataType::kResource || tensor.dtype() == DataType::kVariant) {
    return absl::InvalidArgumentError(absl::StrCat("cannot serialize a ", DataTypeName(tensor.dtype()),
                                                   " tensor"));
  }
  tf::TensorProto proto;
  proto.set_dtype(static_cast<tf::DataType>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.mutable_tensor_shape()->add_dim()->set_size(d);
  if (tensor.dtype() == DataType::kString) {
    for (const std::string& s : tensor.strings()) proto.add_string_val(s);
  } else if (tensor.nbytes() > 0) {
    proto.set_tensor_content(std::string(static_cast<const char*>(tensor.raw_data()), tensor.nbytes()));
  }
  return proto;
}

}  // namespace plexus
