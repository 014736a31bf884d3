// Reference kernels: the audio family (see reference_kernels.h).
//
// DecodeWav, AudioSpectrogram and Mfcc with TensorFlow's semantics, written
// for clarity: the WAV parser checks every read, the spectrogram is a direct
// DFT in double, and the mel filterbank weights are derived bin by bin from
// their definition.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------
// DecodeWav
// ---------------------------------------------------------------------------

// A cursor over untrusted bytes: every read is checked against the end.
class ByteReader {
 public:
  ByteReader(const unsigned char* data, int64_t size) : data_(data), size_(size) {}

  int64_t offset() const { return offset_; }
  bool at_end() const { return offset_ >= size_; }

  void Need(int64_t n, const char* what) const {
    PX_SDK_CHECK(offset_ <= size_ && n <= size_ - offset_,
                 "WAV data too short: %s needs %lld bytes at offset %lld, but the file has %lld",
                 what, static_cast<long long>(n), static_cast<long long>(offset_),
                 static_cast<long long>(size_));
  }
  std::string Tag(const char* what) {
    Need(4, what);
    std::string s(reinterpret_cast<const char*>(data_ + offset_), 4);
    offset_ += 4;
    return s;
  }
  uint32_t U32(const char* what) {
    Need(4, what);
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | data_[offset_ + i];
    offset_ += 4;
    return v;
  }
  uint16_t U16(const char* what) {
    Need(2, what);
    uint16_t v = static_cast<uint16_t>(data_[offset_] | (data_[offset_ + 1] << 8));
    offset_ += 2;
    return v;
  }
  int16_t S16(const char* what) { return static_cast<int16_t>(U16(what)); }
  void Skip(int64_t n, const char* what) {
    Need(n, what);
    offset_ += n;
  }
  // Moves forward without a bounds check (the caller stops at the end).
  void Advance(int64_t n) { offset_ += n; }

 private:
  const unsigned char* data_;
  int64_t size_;
  int64_t offset_ = 0;
};

// A tag for messages: printable characters kept, others as '?'.
std::string Printable(const std::string& tag) {
  std::string s = tag;
  for (char& c : s) {
    if (c < 32 || c > 126) c = '?';
  }
  return s;
}

struct DecodedWav {
  std::vector<float> samples;  // interleaved, frames * channels
  uint32_t frames = 0;
  uint16_t channels = 0;
  uint32_t sample_rate = 0;
};

DecodedWav ParseWav(const unsigned char* bytes, int64_t size) {
  ByteReader r(bytes, size);
  DecodedWav wav;
  std::string tag = r.Tag("the RIFF tag");
  PX_SDK_CHECK(tag == "RIFF", "not a WAV file: expected 'RIFF' at byte 0, found '%s'",
               Printable(tag).c_str());
  r.U32("the RIFF size");
  tag = r.Tag("the WAVE tag");
  PX_SDK_CHECK(tag == "WAVE", "not a WAV file: expected 'WAVE' at byte 8, found '%s'",
               Printable(tag).c_str());
  // Metadata chunks that may come before "fmt " are skipped (as TensorFlow).
  static const char* const kSkippable[] = {"JUNK", "bext", "iXML", "qlty",
                                           "mext", "levl", "link", "axml"};
  tag = r.Tag("a chunk tag");
  while (tag != "fmt ") {
    bool skippable = false;
    for (const char* s : kSkippable) skippable = skippable || tag == s;
    PX_SDK_CHECK(skippable, "unexpected WAV chunk '%s' before the 'fmt ' chunk",
                 Printable(tag).c_str());
    uint32_t chunk_size = r.U32("a chunk size");
    r.Skip(chunk_size, "a skipped chunk");
    tag = r.Tag("a chunk tag");
  }
  uint32_t format_size = r.U32("the fmt chunk size");
  PX_SDK_CHECK(format_size == 16 || format_size == 18,
               "bad WAV fmt chunk size: expected 16 or 18, got %u", format_size);
  uint16_t format = r.U16("the audio format");
  PX_SDK_CHECK(format == 1, "unsupported WAV audio format %u: only 1 (PCM) is supported",
               static_cast<unsigned>(format));
  wav.channels = r.U16("the channel count");
  PX_SDK_CHECK(wav.channels >= 1, "bad WAV channel count: expected at least 1, got %u",
               static_cast<unsigned>(wav.channels));
  wav.sample_rate = r.U32("the sample rate");
  uint32_t bytes_per_second = r.U32("the byte rate");
  uint16_t block_align = r.U16("the block alignment");
  uint16_t bits = r.U16("the bits per sample");
  PX_SDK_CHECK(bits == 16, "unsupported WAV sample size: only 16-bit PCM is supported, got %u bits",
               static_cast<unsigned>(bits));
  uint32_t expected_align = (static_cast<uint32_t>(bits) * wav.channels + 7) / 8;
  PX_SDK_CHECK(block_align == expected_align,
               "bad WAV block alignment: expected %u bytes per frame, got %u", expected_align,
               static_cast<unsigned>(block_align));
  // 32-bit arithmetic, as the header field.
  uint32_t expected_rate = static_cast<uint32_t>(block_align) * wav.sample_rate;
  PX_SDK_CHECK(bytes_per_second == expected_rate,
               "bad WAV byte rate: expected %u (sample rate %u x %u bytes per frame), got %u",
               expected_rate, wav.sample_rate, static_cast<unsigned>(block_align),
               bytes_per_second);
  if (format_size == 18) r.Advance(2);  // the unused extension size

  bool found_data = false;
  while (!r.at_end()) {
    tag = r.Tag("a chunk tag");
    uint32_t chunk_size = r.U32("a chunk size");
    PX_SDK_CHECK(chunk_size <= static_cast<uint32_t>(std::numeric_limits<int32_t>::max()),
                 "WAV chunk '%s' is too large: %u bytes", Printable(tag).c_str(), chunk_size);
    if (tag != "data") {
      r.Advance(chunk_size);
      continue;
    }
    PX_SDK_CHECK(!found_data, "more than one data chunk in the WAV file");
    found_data = true;
    wav.frames = chunk_size / block_align;
    int64_t count = static_cast<int64_t>(wav.frames) * wav.channels;
    // Check the whole data is present before allocating for it.
    r.Need(2 * count, "the audio data");
    wav.samples.resize(static_cast<size_t>(count));
    // A trailing partial frame is not consumed (as TensorFlow): parsing
    // continues right after the last whole frame.
    for (int64_t i = 0; i < count; ++i) {
      wav.samples[i] = static_cast<float>(r.S16("a sample")) / 32768.0f;
    }
  }
  PX_SDK_CHECK(found_data, "no data chunk found in the WAV file");
  return wav;
}

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
    DecodedWav wav = ParseWav(reinterpret_cast<const unsigned char*>(contents.data),
                              static_cast<int64_t>(contents.size));

    int64_t out_samples = desired_samples_ == -1 ? wav.frames : desired_samples_;
    int64_t out_channels = desired_channels_ == -1 ? wav.channels : desired_channels_;
    float* audio = call.AllocateOutput<float>(0, {out_samples, out_channels});
    for (int64_t s = 0; s < out_samples; ++s) {
      for (int64_t c = 0; c < out_channels; ++c) {
        float v = 0.0f;  // padding past the end of the file
        if (s < wav.frames) {
          // Missing channels repeat the file's last channel.
          int64_t source = c < wav.channels ? c : wav.channels - 1;
          v = wav.samples[s * wav.channels + source];
        }
        audio[s * out_channels + c] = v;
      }
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
  }

  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(call.input_rank(0) == 2, "input must be 2-D [samples, channels], got %s",
                 sdk::ShapeString(call.input_shape(0)).c_str());
    const float* x = call.input<float>(0);
    const int64_t samples = call.input_shape(0)[0];
    const int64_t channels = call.input_shape(0)[1];
    int64_t fft_length = 1;
    while (fft_length < window_) fft_length *= 2;
    const int64_t bins = fft_length / 2 + 1;
    const int64_t frames = samples < window_ ? 0 : 1 + (samples - window_) / stride_;
    float* out = call.AllocateOutput<float>(0, {channels, frames, bins});

    // Periodic Hann window.
    std::vector<double> hann(window_);
    for (int64_t j = 0; j < window_; ++j) {
      hann[j] = 0.5 - 0.5 * std::cos(2.0 * kPi * static_cast<double>(j) / window_);
    }
    // cos and sin of 2*pi*m/N for every m (the DFT's j*k is taken modulo N).
    std::vector<double> cos_table(fft_length), sin_table(fft_length);
    for (int64_t m = 0; m < fft_length; ++m) {
      cos_table[m] = std::cos(2.0 * kPi * static_cast<double>(m) / fft_length);
      sin_table[m] = std::sin(2.0 * kPi * static_cast<double>(m) / fft_length);
    }
    std::vector<double> frame(window_);
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t j = 0; j < window_; ++j) {
          frame[j] = static_cast<double>(x[(f * stride_ + j) * channels + c]) * hann[j];
        }
        // Direct DFT; the zero padding up to fft_length adds nothing.
        for (int64_t k = 0; k < bins; ++k) {
          double re = 0, im = 0;
          for (int64_t j = 0; j < window_; ++j) {
            int64_t m = (j * k) % fft_length;
            re += frame[j] * cos_table[m];
            im -= frame[j] * sin_table[m];
          }
          float power = static_cast<float>(re * re + im * im);
          out[(c * frames + f) * bins + k] = magnitude_squared_ ? power : std::sqrt(power);
        }
      }
    }
  }

 private:
  int64_t window_ = 0;
  int64_t stride_ = 0;
  bool magnitude_squared_ = false;
};

// ---------------------------------------------------------------------------
// Mfcc
// ---------------------------------------------------------------------------

double HzToMel(double hz) { return 1127.0 * std::log1p(hz / 700.0); }

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
    const int64_t channels = shape[0], frames = shape[1], bins = shape[2];
    PX_SDK_CHECK(sample_rate > 0, "sample_rate must be positive, got %d", sample_rate);
    PX_SDK_CHECK(bins >= 2, "the spectrogram needs at least 2 frequency bins, got %lld",
                 static_cast<long long>(bins));
    float* out = call.AllocateOutput<float>(0, {channels, frames, dct_});

    // Mel band centers: bank_ + 1 points evenly spaced in mel above the
    // lower limit; the last one closes the top triangle.
    const double mel_low = HzToMel(lower_);
    const double mel_step = (HzToMel(upper_) - mel_low) / static_cast<double>(bank_ + 1);
    std::vector<double> center(bank_ + 1);
    for (int64_t i = 0; i <= bank_; ++i) center[i] = mel_low + mel_step * (i + 1);
    // Bins run from DC to Nyquist; the used range excludes DC.
    const double hz_per_bin = 0.5 * sample_rate / static_cast<double>(bins - 1);
    const double first = 1.5 + lower_ / hz_per_bin;
    const double last = upper_ / hz_per_bin;
    // Truncation toward zero, clamped so huge values stay in range.
    const int64_t start = first >= bins + 1.0 ? bins + 1 : static_cast<int64_t>(first);
    const int64_t end = last >= bins + 1.0 ? bins + 1 : static_cast<int64_t>(last);
    // TensorFlow's filterbank yields nothing when the upper limit lies past
    // the last bin, and its MFCCs are then all zero: kept for compatibility.
    const bool too_short = bins <= end;

    std::vector<double> bank(bank_), logs(bank_);
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t f = 0; f < frames; ++f) {
        const float* row = spec + (c * frames + f) * bins;
        float* dst = out + (c * frames + f) * dct_;
        if (too_short) {
          for (int64_t k = 0; k < dct_; ++k) dst[k] = 0.0f;
          continue;
        }
        for (double& b : bank) b = 0;
        for (int64_t i = start; i <= end; ++i) {
          const double mel = HzToMel(i * hz_per_bin);
          // The band whose right (falling) side holds this bin: the last
          // center below it (-1 when below the first center).
          int64_t band = -1;
          while (band + 1 < bank_ && center[band + 1] < mel) ++band;
          const double left = band >= 0 ? center[band] : mel_low;
          const double right = center[band + 1];
          const double weight = (right - mel) / (right - left);
          const double magnitude = std::sqrt(static_cast<double>(row[i]));
          if (band >= 0) bank[band] += magnitude * weight;
          if (band + 1 < bank_) bank[band + 1] += magnitude - magnitude * weight;
        }
        for (int64_t b = 0; b < bank_; ++b) logs[b] = std::log(std::max(bank[b], 1e-12));
        // DCT-II with sqrt(2/N) scaling.
        const double norm = std::sqrt(2.0 / static_cast<double>(bank_));
        for (int64_t k = 0; k < dct_; ++k) {
          double sum = 0;
          for (int64_t b = 0; b < bank_; ++b) {
            sum += norm * std::cos(k * (kPi / bank_) * (b + 0.5)) * logs[b];
          }
          dst[k] = static_cast<float>(sum);
        }
      }
    }
  }

 private:
  float upper_ = 4000, lower_ = 20;
  int64_t bank_ = 40, dct_ = 13;
};

}  // namespace

PX_Status* RegisterAudioKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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

}  // namespace plexus::reference
