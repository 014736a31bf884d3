// The lookup table resource (lookup_table.h) and the host kernels of
// HashTableV2, MutableHashTableV2, LookupTableImportV2, InitializeTableV2,
// LookupTableFindV2, LookupTableInsertV2, LookupTableRemoveV2,
// LookupTableSizeV2 and LookupTableExportV2 (schemas in ops/lookup_ops.cc).
#include "host_kernels/lookup_table.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/session_state.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {

std::string TableKeyString(const TableKey& key) {
  if (const auto* s = std::get_if<std::string>(&key)) return *s;
  return absl::StrCat(std::get<int64_t>(key));
}

std::string TableValueString(const TableValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* d = std::get_if<double>(&value)) return absl::StrCat(*d);
  return absl::StrCat(std::get<int64_t>(value));
}

std::string LookupTable::DebugString() const {
  return absl::StrCat(mutable_ ? "mutable " : "", "hash table '", name_, "' (", DataTypeName(key_dtype_), " -> ", DataTypeName(value_dtype_),
                      ", ", size(), " entries)");
}

bool LookupTable::initialized() const {
  std::lock_guard<std::mutex> lock(mu_);
  return initialized_ || mutable_;
}

int64_t LookupTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(entries_.size());
}

absl::Status LookupTable::Initialize(const std::vector<TableKey>& keys, const std::vector<TableValue>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  if (initialized_) {
    // TensorFlow compares only the sizes when a table is filled again.
    if (keys.size() == entries_.size()) return absl::OkStatus();
    return absl::FailedPreconditionError("Table was already initialized with different data.");
  }
  absl::flat_hash_map<TableKey, TableValue> entries;
  entries.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    auto [it, inserted] = entries.emplace(keys[i], values[i]);
    if (!inserted && it->second != values[i]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "HashTable has different value for same key. Key ", TableKeyString(keys[i]), " has ",
          TableValueString(it->second), " and trying to add value ", TableValueString(values[i])));
    }
  }
  entries_ = std::move(entries);
  initialized_ = true;
  return absl::OkStatus();
}

void LookupTable::Replace(const std::vector<TableKey>& keys, const std::vector<TableValue>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  for (size_t i = 0; i < keys.size(); ++i) entries_.insert_or_assign(keys[i], values[i]);
}

void LookupTable::Insert(const std::vector<TableKey>& keys, const std::vector<TableValue>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < keys.size(); ++i) entries_.insert_or_assign(keys[i], values[i]);
}

void LookupTable::Remove(const std::vector<TableKey>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const TableKey& key : keys) entries_.erase(key);
}

absl::StatusOr<std::vector<TableValue>> LookupTable::Find(const std::vector<TableKey>& keys,
                                                         const std::vector<TableValue>& default_values) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!initialized_ && !mutable_) return absl::FailedPreconditionError("Table not initialized.");
  std::vector<TableValue> out;
  out.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = entries_.find(keys[i]);
    if (it != entries_.end()) {
      out.push_back(it->second);
    } else {
      out.push_back(default_values.size() == 1 ? default_values[0] : default_values[i]);
    }
  }
  return out;
}

void LookupTable::Export(std::vector<TableKey>* keys, std::vector<TableValue>* values) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, value] : entries_) {
    keys->push_back(key);
    values->push_back(value);
  }
}

bool IsTableKeyType(DataType dtype) {
  return dtype == DataType::kString || dtype == DataType::kInt64 || dtype == DataType::kInt32;
}

bool IsTableValueType(DataType dtype) {
  switch (dtype) {
    case DataType::kString: case DataType::kInt64: case DataType::kInt32: case DataType::kFloat:
    case DataType::kDouble: case DataType::kBool:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<std::vector<TableKey>> TableKeysOf(const Tensor& t) {
  const int64_t n = t.num_elements();
  std::vector<TableKey> keys;
  keys.reserve(n);
  switch (t.dtype()) {
    case DataType::kString:
      for (const std::string& s : t.strings()) keys.emplace_back(s);
      break;
    case DataType::kInt64:
      for (int64_t i = 0; i < n; ++i) keys.emplace_back(t.data<int64_t>()[i]);
      break;
    case DataType::kInt32:
      for (int64_t i = 0; i < n; ++i) keys.emplace_back(int64_t{t.data<int32_t>()[i]});
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("lookup tables take int32, int64 or string keys, not ",
                                                     DataTypeName(t.dtype())));
  }
  return keys;
}

absl::StatusOr<std::vector<TableValue>> TableValuesOf(const Tensor& t) {
  const int64_t n = t.num_elements();
  std::vector<TableValue> values;
  values.reserve(n);
  switch (t.dtype()) {
    case DataType::kString:
      for (const std::string& s : t.strings()) values.emplace_back(s);
      break;
    case DataType::kInt64:
      for (int64_t i = 0; i < n; ++i) values.emplace_back(t.data<int64_t>()[i]);
      break;
    case DataType::kInt32:
      for (int64_t i = 0; i < n; ++i) values.emplace_back(int64_t{t.data<int32_t>()[i]});
      break;
    case DataType::kBool:
      for (int64_t i = 0; i < n; ++i) values.emplace_back(int64_t{t.data<bool>()[i] ? 1 : 0});
      break;
    case DataType::kFloat:
      for (int64_t i = 0; i < n; ++i) values.emplace_back(double{t.data<float>()[i]});
      break;
    case DataType::kDouble:
      for (int64_t i = 0; i < n; ++i) values.emplace_back(t.data<double>()[i]);
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("lookup tables do not hold ", DataTypeName(t.dtype()),
                                                     " values"));
  }
  return values;
}

absl::StatusOr<Tensor> TensorOfTableValues(DataType dtype, Shape shape, const std::vector<TableValue>& values) {
  if (dtype == DataType::kString) {
    std::vector<std::string> strings;
    strings.reserve(values.size());
    for (const TableValue& v : values) strings.push_back(std::get<std::string>(v));
    return Tensor::FromStrings(std::move(shape), std::move(strings));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(dtype, std::move(shape)));
  for (size_t i = 0; i < values.size(); ++i) {
    const TableValue& v = values[i];
    switch (dtype) {
      case DataType::kInt64: out.data<int64_t>()[i] = std::get<int64_t>(v); break;
      case DataType::kInt32: out.data<int32_t>()[i] = static_cast<int32_t>(std::get<int64_t>(v)); break;
      case DataType::kBool: out.data<bool>()[i] = std::get<int64_t>(v) != 0; break;
      case DataType::kFloat: out.data<float>()[i] = static_cast<float>(std::get<double>(v)); break;
      case DataType::kDouble: out.data<double>()[i] = std::get<double>(v); break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("lookup tables do not hold ", DataTypeName(dtype), " values"));
    }
  }
  return out;
}

absl::StatusOr<Tensor> TensorOfTableKeys(DataType dtype, Shape shape, const std::vector<TableKey>& keys) {
  std::vector<TableValue> values;
  values.reserve(keys.size());
  for (const TableKey& k : keys) {
    if (const auto* s = std::get_if<std::string>(&k)) values.emplace_back(*s);
    else values.emplace_back(std::get<int64_t>(k));
  }
  return TensorOfTableValues(dtype, std::move(shape), values);
}

absl::StatusOr<LookupTable*> TableOf(HostOpContext& ctx) {
  auto* table = ctx.input(0).resource_as<LookupTable>();
  if (table == nullptr) {
    return ctx.InvalidArgument(absl::StrCat("input 0 is not a lookup table handle (got ",
                                            ctx.input(0).DebugString(0), ")"));
  }
  return table;
}

namespace {

absl::Status HashTable(HostOpContext& ctx) {
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(DataType key_dtype, GetAttrType(node, "key_dtype"));
  PX_ASSIGN_OR_RETURN(DataType value_dtype, GetAttrType(node, "value_dtype"));
  if (!IsTableKeyType(key_dtype) || !IsTableValueType(value_dtype)) {
    return ctx.Error(absl::StatusCode::kUnimplemented,
                     absl::StrCat("hash tables from ", DataTypeName(key_dtype), " to ", DataTypeName(value_dtype),
                                  " are not supported (keys: int32, int64, string; values: those, float, double, "
                                  "bool)"));
  }
  std::string container, shared_name;
  if (auto c = GetAttrString(node, "container"); c.ok()) container = *c;
  if (auto s = GetAttrString(node, "shared_name"); s.ok()) shared_name = *s;
  const bool is_mutable = node.op == "MutableHashTableV2";
  // No shared name: a table of this node's own (TensorFlow's kernel-private
  // table, which lives as long as the session).
  if (shared_name.empty()) shared_name = absl::StrCat("node:", node.name);
  const std::string key = absl::StrCat("lookup_table/", container, "/", shared_name);
  PX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> resource,
                      ctx.state()->LookupOrCreate(key, [&]() -> absl::StatusOr<std::shared_ptr<ResourceBase>> {
                        return std::make_shared<LookupTable>(shared_name, key_dtype, value_dtype, is_mutable);
                      }));
  auto* table = dynamic_cast<LookupTable*>(resource.get());
  if (table == nullptr || table->key_dtype() != key_dtype || table->value_dtype() != value_dtype ||
      table->is_mutable() != is_mutable) {
    return ctx.InvalidArgument(absl::StrCat("resource '", key, "' already exists as ", resource->DebugString()));
  }
  ctx.set_output(0, Tensor::FromResource(resource));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("HashTableV2", HashTable);
PX_REGISTER_HOST_OP("MutableHashTableV2", HashTable);

// The table's key or value dtype against an input's.
absl::Status CheckDtype(HostOpContext& ctx, const LookupTable& table, int input, bool key) {
  const DataType want = key ? table.key_dtype() : table.value_dtype();
  const DataType got = ctx.input(input).dtype();
  if (got == want) return absl::OkStatus();
  return ctx.InvalidArgument(absl::StrCat(key ? "keys" : "values", " are ", DataTypeName(got), " but ",
                                          table.DebugString(), " holds ", DataTypeName(want),
                                          key ? " keys" : " values"));
}

// The keys and values of an import, initializer or insert: one size
// (InitializeTableV2 also asks for vectors).
absl::Status ReadEntries(HostOpContext& ctx, const LookupTable& table, std::vector<TableKey>* keys,
                         std::vector<TableValue>* values) {
  PX_RETURN_IF_ERROR(CheckDtype(ctx, table, 1, true));
  PX_RETURN_IF_ERROR(CheckDtype(ctx, table, 2, false));
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  if (ctx.node().op == "InitializeTableV2" && k.dims() != 1) {
    return ctx.InvalidArgument(absl::StrCat("Keys must be a vector, but received shape ", ShapeToString(k.shape())));
  }
  if (k.num_elements() != v.num_elements()) {
    return ctx.InvalidArgument(absl::StrCat("Keys and values must have the same size ", k.num_elements(), " vs ",
                                            v.num_elements()));
  }
  PX_ASSIGN_OR_RETURN(*keys, TableKeysOf(k));
  PX_ASSIGN_OR_RETURN(*values, TableValuesOf(v));
  return absl::OkStatus();
}

absl::Status Fill(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(LookupTable * table, TableOf(ctx));
  std::vector<TableKey> keys;
  std::vector<TableValue> values;
  PX_RETURN_IF_ERROR(ReadEntries(ctx, *table, &keys, &values));
  const std::string& op = ctx.node().op;
  if (table->is_mutable()) {
    if (op == "InitializeTableV2") {
      return ctx.InvalidArgument(absl::StrCat(table->DebugString(), " takes no initializer"));
    }
    if (op == "LookupTableImportV2") table->Replace(keys, values);
    else table->Insert(keys, values);
    return absl::OkStatus();
  }
  if (op == "LookupTableInsertV2") {
    return ctx.Error(absl::StatusCode::kUnimplemented, absl::StrCat(table->DebugString(), " is not mutable"));
  }
  absl::Status s = table->Initialize(keys, values);
  if (!s.ok()) return ctx.Error(s.code(), s.message());
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("LookupTableImportV2", Fill);
PX_REGISTER_HOST_OP("InitializeTableV2", Fill);
PX_REGISTER_HOST_OP("LookupTableInsertV2", Fill);

absl::Status Remove(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(LookupTable * table, TableOf(ctx));
  PX_RETURN_IF_ERROR(CheckDtype(ctx, *table, 1, true));
  if (!table->is_mutable()) {
    return ctx.Error(absl::StatusCode::kUnimplemented, absl::StrCat(table->DebugString(), " is not mutable"));
  }
  PX_ASSIGN_OR_RETURN(std::vector<TableKey> keys, TableKeysOf(ctx.input(1)));
  table->Remove(keys);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("LookupTableRemoveV2", Remove);

absl::Status Find(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(LookupTable * table, TableOf(ctx));
  PX_RETURN_IF_ERROR(CheckDtype(ctx, *table, 1, true));
  PX_RETURN_IF_ERROR(CheckDtype(ctx, *table, 2, false));
  const Tensor& keys = ctx.input(1);
  const Tensor& default_value = ctx.input(2);
  if (default_value.dims() != 0 && default_value.shape() != keys.shape()) {
    return ctx.InvalidArgument(absl::StrCat("Expected shape [] or ", ShapeToString(keys.shape()),
                                            " for default value, got ", ShapeToString(default_value.shape())));
  }
  PX_ASSIGN_OR_RETURN(std::vector<TableKey> k, TableKeysOf(keys));
  PX_ASSIGN_OR_RETURN(std::vector<TableValue> defaults, TableValuesOf(default_value));
  auto found = table->Find(k, defaults);
  if (!found.ok()) return ctx.Error(found.status().code(), found.status().message());
  PX_ASSIGN_OR_RETURN(Tensor out, TensorOfTableValues(table->value_dtype(), keys.shape(), *found));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("LookupTableFindV2", Find);

absl::Status Size(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(LookupTable * table, TableOf(ctx));
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kInt64, {}));
  out.data<int64_t>()[0] = table->size();
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("LookupTableSizeV2", Size);

absl::Status Export(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(LookupTable * table, TableOf(ctx));
  PX_ASSIGN_OR_RETURN(DataType key_dtype, GetAttrType(ctx.node(), "Tkeys"));
  PX_ASSIGN_OR_RETURN(DataType value_dtype, GetAttrType(ctx.node(), "Tvalues"));
  if (key_dtype != table->key_dtype() || value_dtype != table->value_dtype()) {
    return ctx.InvalidArgument(absl::StrCat("exports ", DataTypeName(key_dtype), " -> ", DataTypeName(value_dtype),
                                            " from ", table->DebugString()));
  }
  std::vector<TableKey> keys;
  std::vector<TableValue> values;
  table->Export(&keys, &values);
  const int64_t n = static_cast<int64_t>(keys.size());
  PX_ASSIGN_OR_RETURN(Tensor k, TensorOfTableKeys(key_dtype, {n}, keys));
  PX_ASSIGN_OR_RETURN(Tensor v, TensorOfTableValues(value_dtype, {n}, values));
  ctx.set_output(0, std::move(k));
  ctx.set_output(1, std::move(v));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("LookupTableExportV2", Export);

}  // namespace
}  // namespace plexus
