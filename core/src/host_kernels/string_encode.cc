// Host kernels of EncodeBase64, DecodeBase64 (web-safe alphabet, as
// TensorFlow: '-' and '_' for '+' and '/', padding optional on input) and
// DecodeRaw (schemas in ops/encode_ops.cc).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/dtype.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status CheckString(HostOpContext& ctx) {
  if (ctx.input(0).dtype() == DataType::kString) return absl::OkStatus();
  return ctx.InvalidArgument(absl::StrCat("input is ", DataTypeName(ctx.input(0).dtype()), ", not string"));
}

absl::Status EncodeBase64(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx));
  PX_ASSIGN_OR_RETURN(bool pad, GetAttrBool(ctx.node(), "pad"));
  std::vector<std::string> out;
  for (const std::string& s : ctx.input(0).strings()) {
    std::string encoded = absl::WebSafeBase64Escape(s);
    if (pad) encoded.append((4 - encoded.size() % 4) % 4, '=');
    out.push_back(std::move(encoded));
  }
  ctx.set_output(0, Tensor::FromStrings(ctx.input(0).shape(), std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("EncodeBase64", EncodeBase64);

absl::Status DecodeBase64(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx));
  std::vector<std::string> out;
  const auto& in = ctx.input(0).strings();
  for (size_t i = 0; i < in.size(); ++i) {
    std::string decoded;
    if (!absl::WebSafeBase64Unescape(in[i], &decoded)) {
      return ctx.InvalidArgument(absl::StrCat("Invalid character found in base64 (element ", i, ")"));
    }
    out.push_back(std::move(decoded));
  }
  ctx.set_output(0, Tensor::FromStrings(ctx.input(0).shape(), std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("DecodeBase64", DecodeBase64);

absl::Status DecodeRaw(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(CheckString(ctx));
  PX_ASSIGN_OR_RETURN(DataType type, GetAttrType(ctx.node(), "out_type"));
  PX_ASSIGN_OR_RETURN(bool little_endian, GetAttrBool(ctx.node(), "little_endian"));
  const int64_t size = static_cast<int64_t>(DataTypeSize(type));
  const auto& in = ctx.input(0).strings();
  const int64_t length = in.empty() ? 0 : static_cast<int64_t>(in[0].size());
  if (length % size != 0) {
    return ctx.InvalidArgument(absl::StrCat("Input to DecodeRaw has length ", length,
                                            " that is not a multiple of ", size, ", the size of ",
                                            DataTypeName(type)));
  }
  for (size_t i = 1; i < in.size(); ++i) {
    if (static_cast<int64_t>(in[i].size()) != length) {
      return ctx.InvalidArgument(absl::StrCat("DecodeRaw requires input strings to all be the same size, but element ",
                                              i, " has size ", in[i].size(), " != ", length));
    }
  }
  Shape shape = ctx.input(0).shape();
  shape.push_back(length / size);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(type, shape));
  auto* dst = static_cast<char*>(out.raw_data());
  for (size_t i = 0; i < in.size(); ++i) std::memcpy(dst + i * length, in[i].data(), static_cast<size_t>(length));
  // Big-endian input: reverse the bytes of each number (each part of a
  // complex number on its own).
  const int64_t word = type == DataType::kComplex64 || type == DataType::kComplex128 ? size / 2 : size;
  if (!little_endian && word > 1) {
    const int64_t total = static_cast<int64_t>(in.size()) * length;
    for (int64_t at = 0; at < total; at += word) std::reverse(dst + at, dst + at + word);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("DecodeRaw", DecodeRaw);

}  // namespace
}  // namespace plexus
