// CRC32C (Castagnoli), as TensorFlow checkpoints and LevelDB-format tables
// use it, plus LevelDB's "masked" form stored in files (a CRC of data that
// itself contains CRCs is otherwise weak). Backed by Intel's ISA-L.
#ifndef PLEXUS_CORE_SRC_CHECKPOINT_CRC32C_H_
#define PLEXUS_CORE_SRC_CHECKPOINT_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace plexus {
namespace crc32c {

// The CRC32C of data[0, n) appended to data whose CRC32C is `crc`
// (Extend(0, ...) is the CRC of the data alone).
uint32_t Extend(uint32_t crc, const void* data, size_t n);
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
// Rotate right by 15 bits, add a constant.
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace crc32c
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_CHECKPOINT_CRC32C_H_
