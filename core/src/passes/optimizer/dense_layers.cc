// Dense layers on inputs of rank 3 and more, rewritten so their product
// and bias fuse (fuse.cc's MatMul + BiasAdd -> _FusedMatMul). Keras and
// tf.einsum export such a layer as a product over the last axis between
// reshapes, with the bias added after the last reshape:
//   - BatchMatMulV2/V3 of x (rank >= 3, shape known) by a 2-D y, adj_x
//     false, becomes Reshape(MatMul(Reshape(x, [rows, k]), y), out_shape):
//     one product over every row instead of a batched one (EinsumDense's
//     "abc,cd->abd" and "abc,cde->abde");
//   - an add of a constant c after Reshape(p, s), where p is a MatMul's
//     [rows, n] output read by nothing else and c has the shape of the
//     trailing dimensions of s whose product is n (a BiasAdd's [n], Keras'
//     EinsumDense bias [heads, size]), becomes Reshape(BiasAdd(p, c
//     flattened), s). Each element gets the same addend: the trailing
//     dimensions of s cover exactly one row of p.
// Both need static shapes, which the importer infers (with feed-shape
// specialization, the session's executors have them).
#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "passes/optimizer/fuse_util.h"
#include "plexus/graph_import.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {
namespace {

struct Rewriter {
  const PassContext& ctx;
  const Graph& graph;
  NodeIndex& index;
  NameSet names;
  std::set<std::string> tainted;

  // The static shape of `input` ("node" or "node:k"), or null when it is
  // unknown or may not hold at run time.
  const PartialShape* ShapeOf(const std::string& input) const {
    const PartialShape* s = InferredShape(graph, tainted, input);
    return s != nullptr && s->fully_defined() ? s : nullptr;
  }

  tf::NodeDef* AddShapeConst(const std::string& base, const std::vector<int64_t>& dims, const std::string& device) {
    std::vector<int32_t> v(dims.begin(), dims.end());
    if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d > INT32_MAX; })) return nullptr;
    Tensor t = Tensor::FromVector<int32_t>(DataType::kInt32, {static_cast<int64_t>(v.size())}, v);
    auto node = MakeConst(names.Unique(base), t, device);
    if (!node.ok()) return nullptr;
    return index.AddNode(*std::move(node));
  }

  static tf::NodeDef ReshapeNode(const std::string& name, const std::string& x, const std::string& shape,
                                 const std::string& device, DataType t) {
    tf::NodeDef r;
    r.set_name(name);
    r.set_op("Reshape");
    r.set_device(device);
    r.add_input(x);
    r.add_input(shape);
    (*r.mutable_attr())["T"].set_type(static_cast<tf::DataType>(t));
    (*r.mutable_attr())["Tshape"].set_type(tf::DT_INT32);
    return r;
  }

  bool FlattenBatchProduct(tf::NodeDef& bmm) {
    if (bmm.op() != "BatchMatMulV2" && bmm.op() != "BatchMatMulV3") return false;
    if (ctx.fed.count(EndpointKey(bmm.name(), 0)) > 0) return false;
    auto flag = [&](const char* name) {
      auto it = bmm.attr().find(name);
      return it != bmm.attr().end() && it->second.b();
    };
    if (flag("adj_x")) return false;
    const DataType t = TypeAttr(bmm, "T");
    if (t != DataType::kFloat && t != DataType::kDouble) return false;
    if (bmm.op() == "BatchMatMulV3" && (TypeAttr(bmm, "Ta") != t || TypeAttr(bmm, "Tb") != t)) return false;
    const std::vector<std::string> in = DataInputs(bmm);
    if (in.size() != 2) return false;
    const PartialShape* xs = ShapeOf(in[0]);
    const PartialShape* ys = ShapeOf(in[1]);
    if (xs == nullptr || ys == nullptr || xs->rank() < 3 || ys->rank() != 2) return false;
    const bool adj_y = flag("adj_y");
    const int64_t k = xs->dim(xs->rank() - 1);
    if ((adj_y ? ys->dim(1) : ys->dim(0)) != k) return false;
    const int64_t n = adj_y ? ys->dim(0) : ys->dim(1);
    int64_t rows = 1;
    for (int64_t i = 0; i + 1 < xs->rank(); ++i) rows *= xs->dim(i);
    std::vector<int64_t> out_dims = xs->dim_vector();
    out_dims.back() = n;
    tf::NodeDef* rows_shape = AddShapeConst(absl::StrCat(bmm.name(), "/rows_shape"), {rows, k}, bmm.device());
    tf::NodeDef* out_shape = AddShapeConst(absl::StrCat(bmm.name(), "/out_shape"), out_dims, bmm.device());
    if (rows_shape == nullptr || out_shape == nullptr) return false;
    const std::string x_rows = names.Unique(absl::StrCat(bmm.name(), "/rows"));
    index.AddNode(ReshapeNode(x_rows, in[0], rows_shape->name(), bmm.device(), t));
    tf::NodeDef mm;
    mm.set_name(names.Unique(absl::StrCat(bmm.name(), "/matmul")));
    mm.set_op("MatMul");
    mm.set_device(bmm.device());
    mm.add_input(x_rows);
    mm.add_input(in[1]);
    for (const std::string& c : ControlInputs(bmm)) mm.add_input(c);
    (*mm.mutable_attr())["T"].set_type(static_cast<tf::DataType>(t));
    (*mm.mutable_attr())["transpose_a"].set_b(false);
    (*mm.mutable_attr())["transpose_b"].set_b(adj_y);
    const std::string mm_name = mm.name();
    index.AddNode(std::move(mm));
    index.ReplaceNode(bmm, ReshapeNode(bmm.name(), mm_name, out_shape->name(), bmm.device(), t));
    return true;
  }

  bool MoveBiasBeforeReshape(tf::NodeDef& add) {
    const std::string& op = add.op();
    if (op != "BiasAdd" && op != "Add" && op != "AddV2") return false;
    if (ctx.fed.count(EndpointKey(add.name(), 0)) > 0) return false;
    if (op == "BiasAdd") {
      auto f = add.attr().find("data_format");
      if (f != add.attr().end() && f->second.s() != "NHWC") return false;
    }
    const DataType t = TypeAttr(add, "T");
    if (t != DataType::kFloat && t != DataType::kDouble) return false;
    const std::vector<std::string> in = DataInputs(add);
    if (in.size() != 2) return false;
    for (int side = 0; side < 2; ++side) {
      if (op == "BiasAdd" && side == 1) break;
      tf::NodeDef* reshape = index.Find(ParseInput(in[side]).node);
      if (reshape == nullptr || reshape->op() != "Reshape" || ParseInput(in[side]).index != 0) continue;
      tf::NodeDef* consumer = nullptr;
      if (!SoleConsumer(index, ctx, *reshape, &consumer) || consumer != &add || !ControlInputs(*reshape).empty() ||
          ctx.fed.count(EndpointKey(reshape->name(), 0)) > 0) {
        continue;
      }
      std::vector<std::string> reshape_in = DataInputs(*reshape);
      // Through a chain of reshapes read by nothing else (only the last
      // target shape matters).
      for (tf::NodeDef* inner = index.Find(ParseInput(reshape_in[0]).node);
           inner != nullptr && inner->op() == "Reshape" && ParseInput(reshape_in[0]).index == 0 &&
           ControlInputs(*inner).empty() && ctx.fed.count(EndpointKey(inner->name(), 0)) == 0 &&
           SoleConsumer(index, ctx, *inner, &consumer);
           inner = index.Find(ParseInput(reshape_in[0]).node)) {
        reshape_in[0] = DataInputs(*inner)[0];
      }
      tf::NodeDef* product = index.Find(ParseInput(reshape_in[0]).node);
      if (product == nullptr || product->op() != "MatMul" || ParseInput(reshape_in[0]).index != 0 ||
          !SoleConsumer(index, ctx, *product, &consumer) || consumer->op() != "Reshape" ||
          ctx.fed.count(EndpointKey(product->name(), 0)) > 0) {
        continue;
      }
      std::optional<Tensor> c = ConstOf(index, ctx, in[1 - side]);
      const PartialShape* ps = ShapeOf(reshape_in[0]);
      const PartialShape* ss = ShapeOf(in[side]);
      if (!c || c->dtype() != t || ps == nullptr || ss == nullptr || ps->rank() != 2) continue;
      const int64_t n = ps->dim(1);
      const int64_t r = static_cast<int64_t>(c->dims());
      if (r < 1 || r > ss->rank() || c->num_elements() != n) continue;
      // c must be the trailing dimensions of s exactly (no broadcasting
      // inside c), and those must cover one row of the product.
      bool tail = true;
      for (int64_t i = 0; i < r && tail; ++i) tail = c->shape()[i] == ss->dim(ss->rank() - r + i);
      if (!tail) continue;
      Tensor flat = Tensor::AllocateHost(t, {n}).value();
      for (int64_t i = 0; i < n; ++i) Set(flat, i, At(*c, i));
      auto bias_node = MakeConst(names.Unique(absl::StrCat(add.name(), "/flat_bias")), flat, add.device());
      if (!bias_node.ok()) continue;
      tf::NodeDef bias_add;
      bias_add.set_name(names.Unique(absl::StrCat(add.name(), "/bias_add")));
      bias_add.set_op("BiasAdd");
      bias_add.set_device(add.device());
      bias_add.add_input(reshape_in[0]);
      bias_add.add_input(bias_node->name());
      for (const std::string& ctl : ControlInputs(add)) bias_add.add_input(ctl);
      (*bias_add.mutable_attr())["T"].set_type(static_cast<tf::DataType>(t));
      (*bias_add.mutable_attr())["data_format"].set_s("NHWC");
      const std::string bias_name = bias_add.name();
      index.AddNode(*std::move(bias_node));
      index.AddNode(std::move(bias_add));
      tf::NodeDef moved = *reshape;
      moved.set_name(add.name());
      moved.set_device(add.device());
      moved.set_input(0, bias_name);
      index.ReplaceNode(add, std::move(moved));
      return true;
    }
    return false;
  }
};

}  // namespace

absl::StatusOr<bool> RewriteDenseLayers(tf::GraphDef& def, const PassContext& ctx) {
  bool any = false;
  int flattened = 0, moved = 0;
  // Two sweeps: the products first, whose new Reshape + MatMul the bias
  // moves of the second sweep see (with shapes imported again).
  for (int sweep = 0; sweep < 2; ++sweep) {
    auto graph = ImportGraphDef(def, ctx.source);
    if (!graph.ok()) return graph.status();
    NodeIndex index(def);
    Rewriter rw{ctx, **graph, index, NameSet(def), FeedTainted(def, ctx.fed)};
    const int n = def.node_size();
    for (int i = 0; i < n; ++i) {
      tf::NodeDef& node = *def.mutable_node(i);
      if (sweep == 0 && rw.FlattenBatchProduct(node)) ++flattened;
      if (sweep == 1 && rw.MoveBiasBeforeReshape(node)) ++moved;
    }
  }
  any = flattened + moved > 0;
  if (any && ctx.log) {
    ctx.log->push_back(absl::StrCat("dense_layers: ", flattened, " batched products by a matrix made one MatMul, ",
                                    moved, " biases moved before a Reshape to fuse with their MatMul"));
  }
  return any;
}

}  // namespace plexus::opt
