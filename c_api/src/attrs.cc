// The C API: attribute sets (px_attrs), for building operations and for
// eager execution. Each setter checks its name and value and stores a
// TensorFlow AttrValue.
#include "handles.h"
#include "plexus/tensor_proto.h"

namespace {

// Runs `fill` on the attribute `name` (replaced), after the common checks.
template <typename Fill>
px_code SetAttr(const char* fn, px_attrs* attrs, const char* name, px_status* status, Fill&& fill) {
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(attrs);
    PX_REQUIRE_ARG(name);
    if (*name == '\0') {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT, absl::StrCat(fn, ": the attribute name is empty"));
    }
    plexus::tf::AttrValue value;
    px_code code = fill(value);
    if (code != PX_STATUS_OK) return code;
    attrs->map[name] = std::move(value);
    return Ok(status);
  });
}

px_code CheckType(const char* fn, const char* name, px_dtype dtype, px_status* status) {
  auto v = static_cast<int32_t>(dtype);
  if (v <= 0 || !plexus::IsKnownDataType(v)) {
    return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                     absl::StrCat(fn, ": attribute '", name, "': ", v, " is not a data type"));
  }
  return PX_STATUS_OK;
}

px_code FillShape(const char* fn, const char* name, const int64_t* dims, int ndim,
                  plexus::tf::TensorShapeProto* shape, px_status* status) {
  if (ndim < 0) {
    if (ndim != -1) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": attribute '", name, "': ndim is ", ndim,
                                    "; use -1 for an unknown rank, else 0 or more"));
    }
    shape->set_unknown_rank(true);
    return PX_STATUS_OK;
  }
  if (ndim > 0 && dims == nullptr) return NullArgument(fn, "dims", status);
  for (int i = 0; i < ndim; ++i) {
    if (dims[i] < -1) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": attribute '", name, "': dimension ", i, " is ", dims[i],
                                    "; use -1 for an unknown size"));
    }
    shape->add_dim()->set_size(dims[i]);
  }
  return PX_STATUS_OK;
}

}  // namespace

extern "C" {

px_code px_attrs_create(px_attrs** out_attrs, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_attrs);
    *out_attrs = new px_attrs();
    return Ok(status);
  });
}

void px_attrs_destroy(px_attrs* attrs) { delete attrs; }

void px_attrs_clear(px_attrs* attrs) {
  if (attrs != nullptr) attrs->map.clear();
}

size_t px_attrs_size(const px_attrs* attrs) { return attrs == nullptr ? 0 : attrs->map.size(); }

px_code px_attrs_set_int(px_attrs* attrs, const char* name, int64_t value, px_status* status) {
  return SetAttr(__func__, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    v.set_i(value);
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_float(px_attrs* attrs, const char* name, float value, px_status* status) {
  return SetAttr(__func__, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    v.set_f(value);
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_bool(px_attrs* attrs, const char* name, int value, px_status* status) {
  return SetAttr(__func__, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    v.set_b(value != 0);
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_type(px_attrs* attrs, const char* name, px_dtype value, px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    px_code code = CheckType(fn, name, value, status);
    if (code == PX_STATUS_OK) v.set_type(static_cast<plexus::tf::DataType>(value));
    return code;
  });
}

px_code px_attrs_set_string(px_attrs* attrs, const char* name, const void* value, size_t length,
                            px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (length > 0 && value == nullptr) return NullArgument(fn, "value", status);
    v.set_s(std::string(static_cast<const char*>(value), length));
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_shape(px_attrs* attrs, const char* name, const int64_t* dims, int ndim,
                           px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    return FillShape(fn, name, dims, ndim, v.mutable_shape(), status);
  });
}

px_code px_attrs_set_tensor(px_attrs* attrs, const char* name, const px_tensor* value, px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (value == nullptr) return NullArgument(fn, "value", status);
    auto host = plexus::CopyTensorTo(value->tensor, nullptr);
    if (!host.ok()) return FromAbsl(host.status(), status);
    auto proto = plexus::TensorToProto(*host);
    if (!proto.ok()) return FromAbsl(proto.status(), status);
    *v.mutable_tensor() = *std::move(proto);
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_func(px_attrs* attrs, const char* name, const char* function_name, px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (function_name == nullptr) return NullArgument(fn, "function_name", status);
    v.mutable_func()->set_name(function_name);
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_int_list(px_attrs* attrs, const char* name, const int64_t* values, size_t count,
                              px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (count > 0 && values == nullptr) return NullArgument(fn, "values", status);
    auto* list = v.mutable_list();
    for (size_t i = 0; i < count; ++i) list->add_i(values[i]);
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_float_list(px_attrs* attrs, const char* name, const float* values, size_t count,
                                px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (count > 0 && values == nullptr) return NullArgument(fn, "values", status);
    auto* list = v.mutable_list();
    for (size_t i = 0; i < count; ++i) list->add_f(values[i]);
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_bool_list(px_attrs* attrs, const char* name, const int* values, size_t count,
                               px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (count > 0 && values == nullptr) return NullArgument(fn, "values", status);
    auto* list = v.mutable_list();
    for (size_t i = 0; i < count; ++i) list->add_b(values[i] != 0);
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_type_list(px_attrs* attrs, const char* name, const px_dtype* values, size_t count,
                               px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (count > 0 && values == nullptr) return NullArgument(fn, "values", status);
    auto* list = v.mutable_list();
    for (size_t i = 0; i < count; ++i) {
      px_code code = CheckType(fn, name, values[i], status);
      if (code != PX_STATUS_OK) return code;
      list->add_type(static_cast<plexus::tf::DataType>(values[i]));
    }
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_string_list(px_attrs* attrs, const char* name, const char* const* values,
                                 const size_t* lengths, size_t count, px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (count > 0 && values == nullptr) return NullArgument(fn, "values", status);
    if (count > 0 && lengths == nullptr) return NullArgument(fn, "lengths", status);
    auto* list = v.mutable_list();
    for (size_t i = 0; i < count; ++i) {
      if (values[i] == nullptr && lengths[i] > 0) return NullArgument(fn, "values[i]", status);
      list->add_s(std::string(values[i] == nullptr ? "" : values[i], lengths[i]));
    }
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_shape_list(px_attrs* attrs, const char* name, const int64_t* const* dims, const int* ndims,
                                size_t count, px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (count > 0 && dims == nullptr) return NullArgument(fn, "dims", status);
    if (count > 0 && ndims == nullptr) return NullArgument(fn, "ndims", status);
    auto* list = v.mutable_list();
    for (size_t i = 0; i < count; ++i) {
      px_code code = FillShape(fn, name, dims[i], ndims[i], list->add_shape(), status);
      if (code != PX_STATUS_OK) return code;
    }
    return PX_STATUS_OK;
  });
}

px_code px_attrs_set_attr_value_proto(px_attrs* attrs, const char* name, const void* proto, size_t size,
                                      px_status* status) {
  const char* const fn = __func__;
  return SetAttr(fn, attrs, name, status, [&](plexus::tf::AttrValue& v) {
    if (size > 0 && proto == nullptr) return NullArgument(fn, "proto", status);
    if (size > static_cast<size_t>(INT_MAX) || !v.ParseFromArray(proto, static_cast<int>(size))) {
      return SetStatus(status, PX_STATUS_DATA_LOSS,
                       absl::StrCat(fn, ": attribute '", name, "': the bytes are not an AttrValue"));
    }
    return PX_STATUS_OK;
  });
}

}  // extern "C"
