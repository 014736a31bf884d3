// CPU kernels: the audio family, written with sdk::OpKernel.
//
// DecodeWav: the chunk structure is validated first, then the PCM16 samples
// are converted straight into the output (no intermediate buffer).
// AudioSpectrogram: a real FFT computed as a half-length iterative radix-2
// complex FFT in double, with the Hann window and twiddles precomputed.
// Mfcc: the mel filterbank is built once per launch (it depends on the
// sample rate input) and the DCT matrix once per kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------
// DecodeWav
// ---------------------------------------------------------------------------

inline uint16_t LoadU16(const unsigned char* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t LoadU32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

std::string Printable(const unsigned char* tag) {
  std::string s(reinterpret_cast<const char*>(tag), 4);
  for (char& c : s) {
    if (c < 32 || c > 126) c = '?';
  }
  return s;
}

// Where the samples are and how to read them; nothing is copied.
struct WavLayout {
  const unsigned char* data = nullptr;  // interleaved little-endian int16
  uint32_t frames = 0;
  uint16_t channels = 0;
  uint32_t sample_rate = 0;
};

class WavParser {
 public:
  WavParser(const unsigned char* bytes, int64_t size) : p_(bytes), size_(size) {}

  WavLayout Parse() {
    WavLayout out;
    const unsigned char* tag = Take(4, "the RIFF tag");
    PX_SDK_CHECK(std::memcmp(tag, "RIFF", 4) == 0,
                 "not a WAV file: expected 'RIFF' at byte 0, found '%s'", Printable(tag).c_str());
    Take(4, "the RIFF size");
    tag = Take(4, "the WAVE tag");
    PX_SDK_CHECK(std::memcmp(tag, "WAVE", 4) == 0,
                 "not a WAV file: expected 'WAVE' at byte 8, found '%s'", Printable(tag).c_str());
    tag = Take(4, "a chunk tag");
    while (std::memcmp(tag, "fmt ", 4) != 0) {
      PX_SDK_CHECK(SkippableBeforeFormat(tag),
                   "unexpected WAV chunk '%s' before the 'fmt ' chunk", Printable(tag).c_str());
      uint32_t chunk_size = LoadU32(Take(4, "a chunk size"));
      Take(chunk_size, "a skipped chunk");
      tag = Take(4, "a chunk tag");
    }
    const uint32_t format_size = LoadU32(Take(4, "the fmt chunk size"));
    PX_SDK_CHECK(format_size == 16 || format_size == 18,
                 "bad WAV fmt chunk size: expected 16 or 18, got %u", format_size);
    const unsigned char* fmt = Take(16, "the fmt chunk");
    const uint16_t format = LoadU16(fmt);
    PX_SDK_CHECK(format == 1, "unsupported WAV audio format %u: only 1 (PCM) is supported",
                 static_cast<unsigned>(format));
    out.channels = LoadU16(fmt + 2);
    PX_SDK_CHECK(out.channels >= 1, "bad WAV channel count: expected at least 1, got %u",
                 static_cast<unsigned>(out.channels));
    out.sample_rate = LoadU32(fmt + 4);
    const uint32_t bytes_per_second = LoadU32(fmt + 8);
    const uint16_t block_align = LoadU16(fmt + 12);
    const uint16_t bits = LoadU16(fmt + 14);
    PX_SDK_CHECK(bits == 16,
                 "unsupported WAV sample size: only 16-bit PCM is supported, got %u bits",
                 static_cast<unsigned>(bits));
    const uint32_t expected_align = 2u * out.channels;
    PX_SDK_CHECK(block_align == expected_align,
                 "bad WAV block alignment: expected %u bytes per frame, got %u", expected_align,
                 static_cast<unsigned>(block_align));
    const uint32_t expected_rate = static_cast<uint32_t>(block_align) * out.sample_rate;
    PX_SDK_CHECK(bytes_per_second == expected_rate,
                 "bad WAV byte rate: expected %u (sample rate %u x %u bytes per frame), got %u",
                 expected_rate, out.sample_rate, static_cast<unsigned>(block_align),
                 bytes_per_second);
    if (format_size == 18) offset_ += 2;  // the unused extension size

    bool found_data = false;
    while (offset_ < size_) {
      tag = Take(4, "a chunk tag");
      const uint32_t chunk_size = LoadU32(Take(4, "a chunk size"));
      PX_SDK_CHECK(chunk_size <= static_cast<uint32_t>(std::numeric_limits<int32_t>::max()),
                   "WAV chunk '%s' is too large: %u bytes", Printable(tag).c_str(), chunk_size);
      if (std::memcmp(tag, "data", 4) != 0) {
        offset_ += chunk_size;  // may run past the end, which ends the scan
        continue;
      }
      PX_SDK_CHECK(!found_data, "more than one data chunk in the WAV file");
      found_data = true;
      out.frames = chunk_size / block_align;
      // Only whole frames are consumed (as TensorFlow): a trailing partial
      // frame is read as the start of the next chunk.
      out.data = Take(static_cast<int64_t>(out.frames) * block_align, "the audio data");
    }
    PX_SDK_CHECK(found_data, "no data chunk found in the WAV file");
    return out;
  }

 private:
  static bool SkippableBeforeFormat(const unsigned char* tag) {
    static const char* const kSkippable[] = {"JUNK", "bext", "iXML", "qlty",
                                             "mext", "levl", "link", "axml"};
    for (const char* s : kSkippable) {
      if (std::memcmp(tag, s, 4) == 0) return true;
    }
    return false;
  }

  // Returns the next n bytes and moves past them; refuses to read past the end.
  const unsigned char* Take(int64_t n, const char* what) {
    PX_SDK_CHECK(offset_ <= size_ && n <= size_ - offset_,
                 "WAV data too short: %s needs %lld bytes at offset %lld, but the file has %lld",
                 what, static_cast<long long>(n), static_cast<long long>(offset_),
                 static_cast<long long>(size_));
    const unsigned char* at = p_ + offset_;
    offset_ += n;
    return at;
  }

  const unsigned char* p_;
  int64_t size_;
  int64_t offset_ = 0;
};

class DecodeWavKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    desired_channels_ = attrs.Int("desired_channels", -1);
    desired_samples_ = attrs.Int("desired_samples", -1);
    PX_SDK_CHECK(desired_channels_ >= -1, "desired_channels must be >= -1, got %lld",
                 static_cast<long long>(desired_channels_));
    PX_SDK_CHECK(desired_samples_ >= -1, "desired_samples must be >= -1, got %lld",
                 static_cast<long long>(desired_samples_));
    PX_SDK_CHECK(desired_channels_ <= std::numeric_limits<int32_t>::max() &&
                     desired_samples_ <= std::numeric_limits<int32_t>::max(),
                 "desired_channels and desired_samples must fit in int32");
  }

  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(call.input_rank(0) == 0, "contents must be a scalar string, got shape %s",
                 sdk::ShapeString(call.input_shape(0)).c_str());
    const PX_StringRef& contents = call.input_strings(0)[0];
    PX_SDK_CHECK(contents.size <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()),
                 "WAV contents are too large: %llu bytes",
                 static_cast<unsigned long long>(contents.size));
    WavParser parser(reinterpret_cast<const unsigned char*>(contents.data),
                     static_cast<int64_t>(contents.size));
    const WavLayout wav = parser.Parse();

    const int64_t in_frames = wav.frames;
    const int64_t in_channels = wav.channels;
    const int64_t out_samples = desired_samples_ == -1 ? in_frames : desired_samples_;
    const int64_t out_channels = desired_channels_ == -1 ? in_channels : desired_channels_;
    float* audio = call.AllocateOutput<float>(0, {out_samples, out_channels});
    const int64_t copy_frames = std::min(in_frames, out_samples);
    constexpr float kScale = 1.0f / 32768.0f;
    const unsigned char* src = wav.data;
    if (out_channels == in_channels) {
      // Same layout: one contiguous conversion.
      const int64_t n = copy_frames * in_channels;
      for (int64_t i = 0; i < n; ++i) {
        audio[i] = static_cast<float>(static_cast<int16_t>(LoadU16(src + 2 * i))) * kScale;
      }
    } else if (out_channels > 0) {
      // Extra output channels repeat the file's last channel; surplus file
      // channels are dropped.
      for (int64_t s = 0; s < copy_frames; ++s) {
        const unsigned char* frame = src + 2 * s * in_channels;
        float* dst = audio + s * out_channels;
        for (int64_t c = 0; c < out_channels; ++c) {
          const int64_t source = std::min(c, in_channels - 1);
          dst[c] = static_cast<float>(static_cast<int16_t>(LoadU16(frame + 2 * source))) * kScale;
        }
      }
    }
    if (out_samples > copy_frames) {
      std::memset(audio + copy_frames * out_channels, 0,
                  sizeof(float) * (out_samples - copy_frames) * out_channels);
    }
    int32_t* rate = call.AllocateOutput<int32_t>(1, {});
    rate[0] = static_cast<int32_t>(wav.sample_rate);
  }

 private:
  int64_t desired_channels_ = -1;
  int64_t desired_samples_ = -1;
};

// ---------------------------------------------------------------------------
// AudioSpectrogram
// ---------------------------------------------------------------------------

// Power spectrum of a real signal of power-of-two length n >= 2: a complex
// FFT of length n/2 over (even, odd) sample pairs, then the split step that
// separates the two interleaved real transforms. The tables are fixed at
// construction; the work buffers belong to each launch.
class RealPowerFft {
 public:
  explicit RealPowerFft(int64_t n) : n_(n), m_(n / 2) {
    int64_t bits = 0;
    while ((int64_t{1} << bits) < m_) ++bits;
    bitrev_.resize(m_);
    for (int64_t i = 0; i < m_; ++i) {
      int64_t r = 0;
      for (int64_t b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
      bitrev_[i] = r;
    }
    // e^{-2 pi i k / m} for the butterflies.
    tw_re_.resize(std::max<int64_t>(m_ / 2, 1));
    tw_im_.resize(tw_re_.size());
    for (int64_t k = 0; k < m_ / 2; ++k) {
      tw_re_[k] = std::cos(2.0 * kPi * k / m_);
      tw_im_[k] = -std::sin(2.0 * kPi * k / m_);
    }
    // e^{-2 pi i k / n} for the split step, k = 0..m.
    split_re_.resize(m_ + 1);
    split_im_.resize(m_ + 1);
    for (int64_t k = 0; k <= m_; ++k) {
      split_re_[k] = std::cos(2.0 * kPi * k / n_);
      split_im_[k] = -std::sin(2.0 * kPi * k / n_);
    }
  }

  int64_t length() const { return n_; }

  // x: n real samples (already windowed and zero-padded). power: n/2 + 1
  // values, |X_k|^2 for k = 0..n/2. re, im: work buffers of n/2 each.
  void Power(const double* x, double* power, double* re, double* im) const {
    for (int64_t i = 0; i < m_; ++i) {
      re[bitrev_[i]] = x[2 * i];
      im[bitrev_[i]] = x[2 * i + 1];
    }
    for (int64_t size = 2; size <= m_; size *= 2) {
      const int64_t half = size / 2;
      const int64_t step = m_ / size;
      for (int64_t start = 0; start < m_; start += size) {
        for (int64_t j = 0; j < half; ++j) {
          const double wr = tw_re_[j * step], wi = tw_im_[j * step];
          const int64_t a = start + j, b = a + half;
          const double tr = wr * re[b] - wi * im[b];
          const double ti = wr * im[b] + wi * re[b];
          re[b] = re[a] - tr;
          im[b] = im[a] - ti;
          re[a] += tr;
          im[a] += ti;
        }
      }
    }
    // Z = FFT(z), z_j = x_2j + i x_2j+1. With Zc = conj(Z_{m-k}):
    // E = (Z_k + Zc) / 2 (transform of the even samples),
    // O = (Z_k - Zc) / 2i (of the odd samples), X_k = E + w^k O.
    for (int64_t k = 0; k <= m_; ++k) {
      const int64_t a = k % m_, b = (m_ - k) % m_;
      const double zr = re[a], zi = im[a];
      const double cr = re[b], ci = -im[b];
      const double er = 0.5 * (zr + cr), ei = 0.5 * (zi + ci);
      const double or_ = 0.5 * (zi - ci), oi = -0.5 * (zr - cr);
      const double xr = er + split_re_[k] * or_ - split_im_[k] * oi;
      const double xi = ei + split_re_[k] * oi + split_im_[k] * or_;
      power[k] = xr * xr + xi * xi;
    }
  }

 private:
  int64_t n_, m_;
  std::vector<int64_t> bitrev_;
  std::vector<double> tw_re_, tw_im_, split_re_, split_im_;
};

class AudioSpectrogramKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    window_ = attrs.Int("window_size");
    stride_ = attrs.Int("stride");
    magnitude_squared_ = attrs.Bool("magnitude_squared", false);
    PX_SDK_CHECK(window_ > 1, "window_size must be > 1, got %lld", static_cast<long long>(window_));
    PX_SDK_CHECK(window_ <= (int64_t{1} << 30), "window_size %lld is too large",
                 static_cast<long long>(window_));
    PX_SDK_CHECK(stride_ > 0, "stride must be > 0, got %lld", static_cast<long long>(stride_));
    int64_t fft_length = 1;
    while (fft_length < window_) fft_length *= 2;
    fft_ = std::make_unique<RealPowerFft>(fft_length);
    hann_.resize(window_);
    for (int64_t j = 0; j < window_; ++j) {
      hann_[j] = 0.5 - 0.5 * std::cos(2.0 * kPi * static_cast<double>(j) / window_);
    }
  }

  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(call.input_rank(0) == 2, "input must be 2-D [samples, channels], got %s",
                 sdk::ShapeString(call.input_shape(0)).c_str());
    const float* x = call.input<float>(0);
    const int64_t samples = call.input_shape(0)[0];
    const int64_t channels = call.input_shape(0)[1];
    const int64_t fft_length = fft_->length();
    const int64_t bins = fft_length / 2 + 1;
    const int64_t frames = samples < window_ ? 0 : 1 + (samples - window_) / stride_;
    float* out = call.AllocateOutput<float>(0, {channels, frames, bins});
    if (frames == 0 || channels == 0) return;

    // Work buffers per launch: launches may run concurrently.
    const size_t n = static_cast<size_t>(fft_length);
    std::vector<double> frame(n, 0.0);  // the padding stays zero
    std::vector<double> power(n / 2 + 1), re(n / 2), im(n / 2);
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t f = 0; f < frames; ++f) {
        const float* src = x + f * stride_ * channels + c;
        if (channels == 1) {
          for (int64_t j = 0; j < window_; ++j) frame[j] = src[j] * hann_[j];
        } else {
          for (int64_t j = 0; j < window_; ++j) frame[j] = src[j * channels] * hann_[j];
        }
        fft_->Power(frame.data(), power.data(), re.data(), im.data());
        float* dst = out + (c * frames + f) * bins;
        if (magnitude_squared_) {
          for (int64_t k = 0; k < bins; ++k) dst[k] = static_cast<float>(power[k]);
        } else {
          for (int64_t k = 0; k < bins; ++k) dst[k] = std::sqrt(static_cast<float>(power[k]));
        }
      }
    }
  }

 private:
  int64_t window_ = 0, stride_ = 0;
  bool magnitude_squared_ = false;
  std::unique_ptr<RealPowerFft> fft_;  // plan for the window's fft length
  std::vector<double> hann_;
};

// ---------------------------------------------------------------------------
// Mfcc
// ---------------------------------------------------------------------------

double HzToMel(double hz) { return 1127.0 * std::log1p(hz / 700.0); }

// TensorFlow's mel filterbank over the bins [start, end]: bin i adds
// weight[i] of its magnitude to band[i] (the falling side of that band's
// triangle) and the rest to band[i] + 1 (the rising side of the next one).
struct MelFilterbank {
  int64_t start = 0, end = -1;
  bool empty_output = false;  // TensorFlow's "input too short" case
  std::vector<int32_t> band;
  std::vector<double> weight;

  MelFilterbank(int64_t bins, double sample_rate, int64_t channels, double lower, double upper) {
    const double mel_low = HzToMel(lower);
    const double mel_step = (HzToMel(upper) - mel_low) / static_cast<double>(channels + 1);
    std::vector<double> center(channels + 1);
    for (int64_t i = 0; i <= channels; ++i) center[i] = mel_low + mel_step * (i + 1);
    // DC is always excluded (as HTK).
    const double hz_per_bin = 0.5 * sample_rate / static_cast<double>(bins - 1);
    const double first = 1.5 + lower / hz_per_bin;
    const double last = upper / hz_per_bin;
    start = first >= bins + 1.0 ? bins + 1 : static_cast<int64_t>(first);
    end = last >= bins + 1.0 ? bins + 1 : static_cast<int64_t>(last);
    // An upper limit past the last bin gives TensorFlow no filterbank output
    // and all-zero MFCCs: kept for compatibility.
    empty_output = bins <= end;
    if (empty_output || start > end) return;
    band.resize(end - start + 1);
    weight.resize(end - start + 1);
    int64_t ch = 0;
    for (int64_t i = start; i <= end; ++i) {
      const double mel = HzToMel(i * hz_per_bin);
      while (ch < channels && center[ch] < mel) ++ch;
      const int64_t b = ch - 1;
      band[i - start] = static_cast<int32_t>(b);
      weight[i - start] = b >= 0 ? (center[b + 1] - mel) / (center[b + 1] - center[b])
                                 : (center[0] - mel) / (center[0] - mel_low);
    }
  }
};

class MfccKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    upper_ = attrs.Float("upper_frequency_limit", 4000.0f);
    lower_ = attrs.Float("lower_frequency_limit", 20.0f);
    bank_ = attrs.Int("filterbank_channel_count", 40);
    dct_ = attrs.Int("dct_coefficient_count", 13);
    PX_SDK_CHECK(bank_ >= 1 && bank_ <= (1 << 20),
                 "filterbank_channel_count must be in [1, 2^20], got %lld",
                 static_cast<long long>(bank_));
    PX_SDK_CHECK(dct_ >= 1 && dct_ <= bank_,
                 "dct_coefficient_count must be in [1, filterbank_channel_count=%lld], got %lld",
                 static_cast<long long>(bank_), static_cast<long long>(dct_));
    PX_SDK_CHECK(lower_ >= 0, "lower_frequency_limit must be >= 0, got %g", lower_);
    PX_SDK_CHECK(upper_ > lower_,
                 "upper_frequency_limit (%g) must be greater than lower_frequency_limit (%g)",
                 upper_, lower_);
    // DCT-II rows with sqrt(2/N) scaling.
    cosines_.resize(dct_ * bank_);
    const double norm = std::sqrt(2.0 / static_cast<double>(bank_));
    const double arg = kPi / static_cast<double>(bank_);
    for (int64_t k = 0; k < dct_; ++k) {
      for (int64_t b = 0; b < bank_; ++b) {
        cosines_[k * bank_ + b] = norm * std::cos(k * arg * (b + 0.5));
      }
    }
  }

  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(call.input_rank(0) == 3,
                 "spectrogram must be 3-D [channels, frames, bins], got %s",
                 sdk::ShapeString(call.input_shape(0)).c_str());
    PX_SDK_CHECK(call.input_rank(1) == 0, "sample_rate must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(1)).c_str());
    const float* spec = call.input<float>(0);
    const int32_t sample_rate = call.input<int32_t>(1)[0];
    const sdk::Shape shape = call.input_shape(0);
    const int64_t rows = shape[0] * shape[1], bins = shape[2];
    PX_SDK_CHECK(sample_rate > 0, "sample_rate must be positive, got %d", sample_rate);
    PX_SDK_CHECK(bins >= 2, "the spectrogram needs at least 2 frequency bins, got %lld",
                 static_cast<long long>(bins));
    float* out = call.AllocateOutput<float>(0, {shape[0], shape[1], dct_});
    if (rows == 0) return;

    const MelFilterbank fb(bins, sample_rate, bank_, lower_, upper_);
    if (fb.empty_output) {
      std::memset(out, 0, sizeof(float) * rows * dct_);
      return;
    }
    // Band indices are shifted by one in acc: index 0 takes what TensorFlow
    // drops for band -1, and index bank_ + 1 what lies past the last band.
    std::vector<double> acc(bank_ + 2);
    std::vector<double> logs(bank_);
    const int64_t used = fb.end - fb.start + 1;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = spec + r * bins;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t i = 0; i < used; ++i) {
        const double magnitude = std::sqrt(static_cast<double>(row[fb.start + i]));
        const double weighted = magnitude * fb.weight[i];
        const int64_t b = fb.band[i] + 1;  // the falling side, shifted
        acc[b] += weighted;
        acc[b + 1] += magnitude - weighted;
      }
      for (int64_t b = 0; b < bank_; ++b) {
        const double v = acc[b + 1];
        logs[b] = std::log(v < 1e-12 ? 1e-12 : v);
      }
      float* dst = out + r * dct_;
      for (int64_t k = 0; k < dct_; ++k) {
        const double* c = cosines_.data() + k * bank_;
        double sum = 0;
        for (int64_t b = 0; b < bank_; ++b) sum += c[b] * logs[b];
        dst[k] = static_cast<float>(sum);
      }
    }
  }

 private:
  float upper_ = 4000, lower_ = 20;
  int64_t bank_ = 40, dct_ = 13;
  std::vector<double> cosines_;
};

}  // namespace

PX_Status* RegisterAudioFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  // DecodeWav has no type attribute: its string input needs no constraint.
  // The string contents and Mfcc's sample rate are read on the host.
  if (PX_Status* s = sdk::RegisterKernel<DecodeWavKernel>(info, registrar, sdk::sig::kDecodeWav)) {
    return s;
  }
  if (PX_Status* s = sdk::RegisterKernel<AudioSpectrogramKernel>(info, registrar,
                                                                 sdk::sig::kAudioSpectrogram)) {
    return s;
  }
  return sdk::RegisterKernel<MfccKernel>(info, registrar, sdk::sig::kMfcc);
}

}  // namespace plexus::cpu
