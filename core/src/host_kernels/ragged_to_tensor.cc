// Host kernel of RaggedTensorToTensor (schema in ops/ragged_ops.cc): a
// ragged tensor, given as flat values and one row partition per ragged
// dimension, written into a dense tensor padded with default_value. The
// requested `shape` may cut rows and columns off or pad beyond them; its -1
// entries (or a scalar shape) take the ragged tensor's own bounds.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "devices/host_allocation.h"

namespace plexus {
namespace {

std::vector<int64_t> IndexValues(const Tensor& t) {
  std::vector<int64_t> out(t.num_elements());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = t.dtype() == DataType::kInt64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i];
  }
  return out;
}

// One ragged dimension: for each element of the level, its parent and its
// position inside the parent; and the longest row.
struct Level {
  std::vector<int64_t> parent, position;
  int64_t max_length = 0;
};

absl::StatusOr<Level> LevelFromSplits(HostOpContext& ctx, const std::vector<int64_t>& splits, int64_t parents) {
  if (static_cast<int64_t>(splits.size()) != parents + 1 || splits[0] != 0) {
    return ctx.InvalidArgument(absl::StrCat("row splits must have ", parents + 1, " entries starting at 0, got ",
                                            splits.size(), " entries"));
  }
  Level level;
  for (int64_t p = 0; p < parents; ++p) {
    if (splits[p + 1] < splits[p]) return ctx.InvalidArgument("row splits must be non-decreasing");
    level.max_length = std::max(level.max_length, splits[p + 1] - splits[p]);
    for (int64_t j = splits[p]; j < splits[p + 1]; ++j) {
      level.parent.push_back(p);
      level.position.push_back(j - splits[p]);
    }
  }
  return level;
}

absl::StatusOr<Level> LevelFromRowIds(HostOpContext& ctx, const std::vector<int64_t>& rowids, int64_t parents) {
  Level level;
  int64_t run = 0;
  for (size_t j = 0; j < rowids.size(); ++j) {
    const int64_t p = rowids[j];
    if (p < 0 || p >= parents) {
      return ctx.InvalidArgument(absl::StrCat("Got next_value_rowid=", p, " which is not less than ", parents));
    }
    if (j > 0 && p < rowids[j - 1]) return ctx.InvalidArgument("value_rowids must be non-decreasing");
    run = j > 0 && p == rowids[j - 1] ? run + 1 : 0;
    level.parent.push_back(p);
    level.position.push_back(run);
    level.max_length = std::max(level.max_length, run + 1);
  }
  return level;
}

// The ragged levels from the partition inputs (3 on) and their types.
absl::Status ReadLevels(HostOpContext& ctx, int64_t* rows, std::vector<Level>* levels) {
  const tf::AttrValue* attr = ctx.node().FindAttr("row_partition_types");
  const int n = ctx.num_inputs() - 3;
  if (attr == nullptr || attr->list().s_size() != n || n < 1) {
    return ctx.InvalidArgument("row_partition_types must name one type per row partition tensor");
  }
  for (const std::string& type : attr->list().s()) {
    if (type != "ROW_SPLITS" && type != "VALUE_ROWIDS" && type != "FIRST_DIM_SIZE") {
      return ctx.InvalidArgument(absl::StrCat("Unknown string for partition info type: ", type));
    }
  }
  int first = 0;
  if (attr->list().s(0) == "FIRST_DIM_SIZE") {
    if (n < 2 || attr->list().s(1) != "VALUE_ROWIDS" || ctx.input(3).num_elements() != 1) {
      return ctx.InvalidArgument("FIRST_DIM_SIZE must be a scalar followed by VALUE_ROWIDS");
    }
    *rows = IndexValues(ctx.input(3))[0];
    first = 1;
  } else if (attr->list().s(0) == "ROW_SPLITS") {
    *rows = std::max<int64_t>(0, ctx.input(3).num_elements() - 1);
  } else {
    return ctx.InvalidArgument("the first row partition must be ROW_SPLITS or FIRST_DIM_SIZE");
  }
  int64_t parents = *rows;
  for (int k = first; k < n; ++k) {
    const std::string& type = attr->list().s(k);
    if (type == "FIRST_DIM_SIZE") return ctx.InvalidArgument("FIRST_DIM_SIZE may only come first");
    const std::vector<int64_t> partition = IndexValues(ctx.input(3 + k));
    absl::StatusOr<Level> level = type == "ROW_SPLITS" ? LevelFromSplits(ctx, partition, parents)
                                                       : LevelFromRowIds(ctx, partition, parents);
    if (!level.ok()) return level.status();
    parents = static_cast<int64_t>(level->parent.size());
    levels->push_back(*std::move(level));
  }
  return absl::OkStatus();
}

// The output shape: `shape`'s entries where they are not negative.
absl::StatusOr<Shape> OutputShape(HostOpContext& ctx, int64_t rows, const std::vector<Level>& levels) {
  const Tensor& values = ctx.input(1);
  Shape natural{rows};
  for (const Level& l : levels) natural.push_back(l.max_length);
  natural.insert(natural.end(), values.shape().begin() + 1, values.shape().end());
  const Tensor& shape = ctx.input(0);
  if (shape.dims() == 0) return natural;
  const std::vector<int64_t> entries = IndexValues(shape);
  const Shape requested(entries.begin(), entries.end());
  if (requested.size() != natural.size()) {
    return ctx.InvalidArgument(absl::StrCat("rt_input.shape and shape=", ShapeToString(requested),
                                            " are incompatible: rt_input.rank = ", natural.size(),
                                            " but shape.rank = ", requested.size()));
  }
  for (size_t d = 0; d < natural.size(); ++d) {
    if (requested[d] < 0) continue;
    if (d > levels.size() && requested[d] != natural[d]) {
      return ctx.InvalidArgument(absl::StrCat("shape ", ShapeToString(requested), " changes the uniform dimension ",
                                              d, " of the values (", natural[d], ")"));
    }
    natural[d] = requested[d];
  }
  return natural;
}

absl::Status RaggedTensorToTensor(HostOpContext& ctx) {
  const Tensor& values = ctx.input(1);
  const Tensor& default_value = ctx.input(2);
  if (values.dims() < 1) return ctx.InvalidArgument("values must have rank 1 or more");
  int64_t rows = 0;
  std::vector<Level> levels;
  PX_RETURN_IF_ERROR(ReadLevels(ctx, &rows, &levels));
  if (static_cast<int64_t>(levels.back().parent.size()) != values.shape()[0]) {
    return ctx.InvalidArgument(absl::StrCat("the row partitions give ", levels.back().parent.size(),
                                            " values, values has ", values.shape()[0]));
  }
  PX_ASSIGN_OR_RETURN(Shape shape, OutputShape(ctx, rows, levels));
  const Shape inner(values.shape().begin() + 1, values.shape().end());
  const int64_t block = NumElements(inner);
  if (default_value.num_elements() != 1 && default_value.shape() != inner) {
    return ctx.InvalidArgument(absl::StrCat("default_value of shape ", ShapeToString(default_value.shape()),
                                            " does not broadcast to the values' inner shape ", ShapeToString(inner)));
  }
  // Each element's place in the output (in blocks), or -1 when cut off.
  std::vector<int64_t> place(rows);
  for (int64_t r = 0; r < rows; ++r) place[r] = r < shape[0] ? r : -1;
  for (size_t l = 0; l < levels.size(); ++l) {
    const int64_t width = shape[l + 1];
    std::vector<int64_t> next(levels[l].parent.size());
    for (size_t j = 0; j < next.size(); ++j) {
      const int64_t parent = place[levels[l].parent[j]];
      next[j] = parent < 0 || levels[l].position[j] >= width ? -1 : parent * width + levels[l].position[j];
    }
    place = std::move(next);
  }
  const int64_t total = NumElements(shape);
  // The shape comes from values: its buffers are checked like any host one.
  PX_RETURN_IF_ERROR(CheckHostAllocation(total, sizeof(int64_t) + sizeof(std::string)));
  // Source element of each output element: a value (>= 0) or the default (-1 - k).
  std::vector<int64_t> source(total);
  for (int64_t i = 0; i < total; ++i) source[i] = -1 - (default_value.num_elements() == 1 ? 0 : i % block);
  for (size_t j = 0; j < place.size(); ++j) {
    if (place[j] < 0) continue;
    for (int64_t k = 0; k < block; ++k) source[place[j] * block + k] = static_cast<int64_t>(j) * block + k;
  }
  if (values.dtype() == DataType::kString) {
    std::vector<std::string> out(total);
    for (int64_t i = 0; i < total; ++i) {
      out[i] = source[i] >= 0 ? values.strings()[source[i]] : default_value.strings()[-1 - source[i]];
    }
    ctx.set_output(0, Tensor::FromStrings(std::move(shape), std::move(out)));
    return absl::OkStatus();
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(values.dtype(), shape));
  const size_t size = DataTypeSize(values.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  const char* src = static_cast<const char*>(values.raw_data());
  const char* dflt = static_cast<const char*>(default_value.raw_data());
  for (int64_t i = 0; i < total; ++i) {
    const char* from = source[i] >= 0 ? src + source[i] * size : dflt + (-1 - source[i]) * size;
    std::memcpy(dst + i * size, from, size);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("RaggedTensorToTensor", RaggedTensorToTensor);

}  // namespace
}  // namespace plexus
