#include "spirv_entry_points.h"

#include <cstdint>
#include <utility>

namespace plexus::xpu {
namespace {

uint32_t LittleEndianWord(const unsigned char* p, bool swap) {
  uint32_t w = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
               static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  if (swap) {
    w = (w >> 24) | ((w >> 8) & 0xff00u) | ((w << 8) & 0xff0000u) | (w << 24);
  }
  return w;
}

}  // namespace

std::vector<std::string> SpirvKernelNames(const unsigned char* data, size_t size) {
  constexpr uint32_t kMagic = 0x07230203u;
  constexpr uint32_t kOpEntryPoint = 15;
  constexpr uint32_t kOpFunction = 54;
  constexpr uint32_t kExecutionModelKernel = 6;
  std::vector<std::string> names;
  if (data == nullptr || size < 20 || size % 4 != 0) return names;
  bool swap = false;
  const uint32_t magic = LittleEndianWord(data, false);
  if (magic != kMagic) {
    if (LittleEndianWord(data, true) != kMagic) return names;
    swap = true;
  }
  const size_t words = size / 4;
  size_t at = 5;  // after the header
  while (at < words) {
    const uint32_t first = LittleEndianWord(data + 4 * at, swap);
    const uint32_t count = first >> 16;
    const uint32_t opcode = first & 0xffffu;
    if (count == 0 || at + count > words) break;  // malformed
    if (opcode == kOpFunction) break;             // entry points come before any function
    if (opcode == kOpEntryPoint && count >= 4 &&
        LittleEndianWord(data + 4 * (at + 1), swap) == kExecutionModelKernel) {
      // The name: a nul-terminated literal string packed from word 3, its
      // bytes in little-endian order within each word.
      std::string name;
      bool ended = false;
      for (size_t w = at + 3; w < at + count && !ended; ++w) {
        const uint32_t word = LittleEndianWord(data + 4 * w, swap);
        for (int b = 0; b < 4; ++b) {
          const char c = static_cast<char>((word >> (8 * b)) & 0xffu);
          if (c == '\0') {
            ended = true;
            break;
          }
          name.push_back(c);
        }
      }
      if (ended && !name.empty()) names.push_back(std::move(name));
    }
    at += count;
  }
  return names;
}

}  // namespace plexus::xpu
