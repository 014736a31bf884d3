// Little-endian fixed-width and varint encodings of LevelDB-format tables and
// of TensorFlow's string tensor layout. Decoders never read past `limit`.
#ifndef PLEXUS_CORE_SRC_CHECKPOINT_CODING_H_
#define PLEXUS_CORE_SRC_CHECKPOINT_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>

namespace plexus {
namespace coding {

inline void PutFixed32(std::string* out, uint32_t v) {
  char buf[4];
  for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(buf, 4);
}

inline void PutFixed64(std::string* out, uint64_t v) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(buf, 8);
}

inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

inline void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline void PutVarint32(std::string* out, uint32_t v) { PutVarint64(out, v); }

// Decodes a varint64 from [*p, limit); advances *p. False when the input is
// truncated or the varint is longer than 10 bytes.
inline bool GetVarint64(const char** p, const char* limit, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *p < limit; shift += 7) {
    uint64_t byte = static_cast<unsigned char>(**p);
    ++*p;
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

// As GetVarint64, but the value must fit 32 bits.
inline bool GetVarint32(const char** p, const char* limit, uint32_t* v) {
  uint64_t wide;
  if (!GetVarint64(p, limit, &wide) || wide > 0xffffffffu) return false;
  *v = static_cast<uint32_t>(wide);
  return true;
}

}  // namespace coding
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_CHECKPOINT_CODING_H_
