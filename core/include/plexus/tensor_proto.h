// Conversion between TensorProto (TensorFlow's serialized tensor) and host
// tensors, following TensorFlow's rules: tensor_content is the raw row-major
// little-endian buffer; a short *_val list repeats its last element; an empty
// one means zeros.
#ifndef PLEXUS_TENSOR_PROTO_H_
#define PLEXUS_TENSOR_PROTO_H_

#include "absl/status/statusor.h"
#include "plexus/shape.h"
#include "plexus/tensor.h"
#include "tensor.pb.h"

namespace plexus {

absl::StatusOr<Tensor> TensorFromProto(const tf::TensorProto& proto);
absl::StatusOr<PartialShape> ShapeFromProto(const tf::TensorShapeProto& proto);

// A host tensor as a TensorProto: numbers as tensor_content, strings as
// string_val. Refuses resource and variant tensors.
absl::StatusOr<tf::TensorProto> TensorToProto(const Tensor& tensor);

}  // namespace plexus

#endif  // PLEXUS_TENSOR_PROTO_H_
