#include "persist/checkpoint/crc32c.h"

#include <climits>

#include <isa-l/crc.h>

namespace plexus {
namespace crc32c {

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  // ISA-L's crc32_iscsi works on the non-inverted register and takes an int
  // length: invert around it and feed large buffers in pieces.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  uint32_t state = ~crc;
  constexpr size_t kChunk = size_t{1} << 30;
  while (n > 0) {
    size_t len = n < kChunk ? n : kChunk;
    state = crc32_iscsi(p, static_cast<int>(len), state);
    p += len;
    n -= len;
  }
  return ~state;
}

}  // namespace crc32c
}  // namespace plexus
