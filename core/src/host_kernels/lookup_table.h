// The lookup table resource of the tf.lookup ops (schemas in
// ops/lookup_ops.cc): a hash table from int32, int64 or string keys to
// scalar values; either made by HashTableV2 and filled once by an
// initializer, or mutable (MutableHashTableV2: inserted into, removed from,
// replaced by an import) (host_kernels/lookup_table.cc,
// lookup_table_text_file.cc). Internal to the core.
#ifndef PLEXUS_CORE_SRC_HOST_KERNELS_LOOKUP_TABLE_H_
#define PLEXUS_CORE_SRC_HOST_KERNELS_LOOKUP_TABLE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "devices/host_ops.h"
#include "plexus/tensor.h"

namespace plexus {

// A key (integers widened to int64) and a value (integers and bool as
// int64, floating point as double; both convert back exactly).
using TableKey = std::variant<int64_t, std::string>;
using TableValue = std::variant<int64_t, double, std::string>;

std::string TableKeyString(const TableKey& key);
std::string TableValueString(const TableValue& value);

class LookupTable : public ResourceBase {
 public:
  LookupTable(std::string name, DataType key_dtype, DataType value_dtype, bool is_mutable)
      : name_(std::move(name)), key_dtype_(key_dtype), value_dtype_(value_dtype), mutable_(is_mutable) {}
  std::string DebugString() const override;

  DataType key_dtype() const { return key_dtype_; }
  DataType value_dtype() const { return value_dtype_; }
  bool is_mutable() const { return mutable_; }
  // A mutable table counts as initialized from the start.
  bool initialized() const;
  int64_t size() const;

  // Fills the table, as TensorFlow's initializable tables do: the first
  // call inserts keys[i] -> values[i] (a key given twice with two values is
  // FAILED_PRECONDITION, and leaves the table empty); later calls change
  // nothing and succeed when they bring as many entries as the table
  // holds, else fail with FAILED_PRECONDITION.
  absl::Status Initialize(const std::vector<TableKey>& keys, const std::vector<TableValue>& values);
  // Mutable tables: Replace empties the table first (LookupTableImportV2);
  // Insert adds or overwrites; Remove drops the keys it finds.
  void Replace(const std::vector<TableKey>& keys, const std::vector<TableValue>& values);
  void Insert(const std::vector<TableKey>& keys, const std::vector<TableValue>& values);
  void Remove(const std::vector<TableKey>& keys);
  // The value of each key, or default_values[i] (one default for all when
  // it holds one); FAILED_PRECONDITION before the table is initialized.
  absl::StatusOr<std::vector<TableValue>> Find(const std::vector<TableKey>& keys,
                                              const std::vector<TableValue>& default_values) const;
  // Every entry, in no particular order.
  void Export(std::vector<TableKey>* keys, std::vector<TableValue>* values) const;

 private:
  std::string name_;
  DataType key_dtype_, value_dtype_;
  bool mutable_;
  mutable std::mutex mu_;
  bool initialized_ = false;
  absl::flat_hash_map<TableKey, TableValue> entries_;
};

// Whether a table may have keys or values of `dtype`.
bool IsTableKeyType(DataType dtype);
bool IsTableValueType(DataType dtype);

// The elements of a host tensor as keys or values; errors for other dtypes.
absl::StatusOr<std::vector<TableKey>> TableKeysOf(const Tensor& t);
absl::StatusOr<std::vector<TableValue>> TableValuesOf(const Tensor& t);
// A host tensor of `dtype` and `shape` holding `values`.
absl::StatusOr<Tensor> TensorOfTableValues(DataType dtype, Shape shape, const std::vector<TableValue>& values);
absl::StatusOr<Tensor> TensorOfTableKeys(DataType dtype, Shape shape, const std::vector<TableKey>& keys);

// The table that input 0 of the op refers to.
absl::StatusOr<LookupTable*> TableOf(HostOpContext& ctx);

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_HOST_KERNELS_LOOKUP_TABLE_H_
