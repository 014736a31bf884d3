// Rewrites a SPIR-V module so that the blocks of every function appear in
// reverse post-order of the control-flow graph, as SPIR-V requires (a block
// must come after its dominators). llvm-spirv 14 keeps LLVM's block order,
// which the optimizer does not keep dominance-sorted (a rotated loop can put
// a block before its dominator), so spirv-val and strict consumers would
// refuse the module. Only the order changes; the instructions stay as they are.
//
// Usage: px_xpu_spirv_block_order in.spv out.spv
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>
#include <unordered_map>
#include <vector>

namespace {

constexpr uint32_t kOpFunction = 54;
constexpr uint32_t kOpFunctionEnd = 56;
constexpr uint32_t kOpLabel = 248;
constexpr uint32_t kOpBranch = 249;
constexpr uint32_t kOpBranchConditional = 250;
constexpr uint32_t kOpSwitch = 251;

struct Block {
  uint32_t label = 0;
  size_t begin = 0;  // word range in the module, from OpLabel to the terminator
  size_t end = 0;
  std::vector<uint32_t> successors;
};

bool Fail(const char* message) {
  std::fprintf(stderr, "px_xpu_spirv_block_order: %s\n", message);
  return false;
}

// Successors of the block that ends with the instruction at `inst`.
void Successors(const uint32_t* inst, uint32_t count, const std::set<uint32_t>& labels,
                std::vector<uint32_t>* out) {
  const uint32_t opcode = inst[0] & 0xffff;
  if (opcode == kOpBranch && count >= 2) {
    out->push_back(inst[1]);
  } else if (opcode == kOpBranchConditional && count >= 4) {
    out->push_back(inst[2]);
    out->push_back(inst[3]);
  } else if (opcode == kOpSwitch && count >= 3) {
    out->push_back(inst[2]);
    // (literal, label) pairs; a literal is one or two words (the selector's
    // width): take the width under which every target is a label.
    for (uint32_t width = 1; width <= 2; ++width) {
      const uint32_t rest = count - 3;
      if (rest % (width + 1) != 0) continue;
      bool ok = true;
      for (uint32_t i = 3 + width; i < count && ok; i += width + 1) ok = labels.count(inst[i]) != 0;
      if (!ok) continue;
      for (uint32_t i = 3 + width; i < count; i += width + 1) out->push_back(inst[i]);
      return;
    }
  }
}

bool Reorder(const std::vector<uint32_t>& in, std::vector<uint32_t>* out) {
  if (in.size() < 5 || in[0] != 0x07230203u) return Fail("not a SPIR-V module (little-endian)");
  out->assign(in.begin(), in.begin() + 5);
  size_t pos = 5;
  while (pos < in.size()) {
    const uint32_t count = in[pos] >> 16;
    const uint32_t opcode = in[pos] & 0xffff;
    if (count == 0 || pos + count > in.size()) return Fail("truncated instruction");
    if (opcode != kOpFunction) {
      out->insert(out->end(), in.begin() + pos, in.begin() + pos + count);
      pos += count;
      continue;
    }
    // A function: the header (OpFunction, parameters) up to the first
    // label, the blocks, then OpFunctionEnd.
    size_t end = pos;
    std::set<uint32_t> labels;
    while (end < in.size() && (in[end] & 0xffff) != kOpFunctionEnd) {
      if ((in[end] & 0xffff) == kOpLabel) labels.insert(in[end + 1]);
      if ((in[end] >> 16) == 0) return Fail("truncated instruction");
      end += in[end] >> 16;
    }
    if (end >= in.size()) return Fail("function without OpFunctionEnd");
    // The header (OpFunction, its parameters) is copied as it is.
    size_t p = pos;
    while (p < end && (in[p] & 0xffff) != kOpLabel) p += in[p] >> 16;
    out->insert(out->end(), in.begin() + pos, in.begin() + p);
    // The blocks: [begin, end) word ranges, from a label to its terminator.
    std::vector<Block> blocks;
    while (p < end) {
      Block block;
      block.label = in[p + 1];
      block.begin = p;
      size_t last = p;
      do {
        last = p;
        p += in[p] >> 16;
      } while (p < end && (in[p] & 0xffff) != kOpLabel);
      block.end = p;
      Successors(&in[last], in[last] >> 16, labels, &block.successors);
      blocks.push_back(std::move(block));
    }
    std::unordered_map<uint32_t, size_t> index;
    for (size_t b = 0; b < blocks.size(); ++b) index[blocks[b].label] = b;
    // Reverse post-order from the entry block (iterative depth-first search).
    std::vector<size_t> post;
    std::vector<char> seen(blocks.size(), 0);
    if (!blocks.empty()) {
      std::vector<std::pair<size_t, size_t>> stack = {{0, 0}};
      seen[0] = 1;
      while (!stack.empty()) {
        auto& [b, next] = stack.back();
        if (next < blocks[b].successors.size()) {
          auto found = index.find(blocks[b].successors[next++]);
          if (found != index.end() && !seen[found->second]) {
            seen[found->second] = 1;
            stack.emplace_back(found->second, 0);
          }
        } else {
          post.push_back(b);
          stack.pop_back();
        }
      }
    }
    std::vector<size_t> order(post.rbegin(), post.rend());
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (!seen[b]) order.push_back(b);  // unreachable: keep, after the rest
    }
    for (size_t b : order) {
      out->insert(out->end(), in.begin() + blocks[b].begin, in.begin() + blocks[b].end);
    }
    // OpFunctionEnd.
    out->insert(out->end(), in.begin() + end, in.begin() + end + (in[end] >> 16));
    pos = end + (in[end] >> 16);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: px_xpu_spirv_block_order in.spv out.spv\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (!file.is_open()) return Fail("cannot read the input") ? 0 : 1;
  if (bytes.size() % 4 != 0) return Fail("size is not a multiple of 4") ? 0 : 1;
  std::vector<uint32_t> in(bytes.size() / 4);
  std::memcpy(in.data(), bytes.data(), bytes.size());
  std::vector<uint32_t> out;
  if (!Reorder(in, &out)) return 1;
  std::ofstream result(argv[2], std::ios::binary | std::ios::trunc);
  result.write(reinterpret_cast<const char*>(out.data()),
               static_cast<std::streamsize>(out.size() * sizeof(uint32_t)));
  return result.good() ? 0 : Fail("cannot write the output") ? 0 : 1;
}
