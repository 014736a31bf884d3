// Cases for the audio family: DecodeWav, AudioSpectrogram and Mfcc (the
// keyword-spotting front end). None has a type attribute: each generator runs
// once, with ctx.dtype == DataType::kInvalid. The source is
// tests/ops/audio_test.cc.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------
// DecodeWav
// ---------------------------------------------------------------------------

// WAV building blocks (little-endian fields).
std::string U16(uint32_t v) {
  return std::string{static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff)};
}
std::string U32(uint32_t v) { return U16(v & 0xffff) + U16(v >> 16); }
std::string Chunk(const std::string& tag, const std::string& payload) {
  return tag + U32(static_cast<uint32_t>(payload.size())) + payload;
}
std::string Fmt(uint16_t channels, uint32_t rate, uint16_t bits = 16, uint16_t format = 1,
                bool extended = false) {
  const uint32_t align = (bits * channels + 7) / 8;
  std::string body =
      U16(format) + U16(channels) + U32(rate) + U32(align * rate) + U16(align) + U16(bits);
  if (extended) body += U16(0);  // the extension size field of an 18-byte fmt chunk
  return Chunk("fmt ", body);
}
std::string Pcm(const std::vector<int16_t>& samples) {
  std::string s;
  for (int16_t v : samples) s += U16(static_cast<uint16_t>(v));
  return s;
}
std::string Riff(const std::string& body) {
  return "RIFF" + U32(static_cast<uint32_t>(4 + body.size())) + "WAVE" + body;
}
std::string Wav(const std::vector<int16_t>& samples, uint16_t channels, uint32_t rate) {
  return Riff(Fmt(channels, rate) + Chunk("data", Pcm(samples)));
}

Case DecodeCase(const std::string& label, const std::string& wav, int64_t channels = -1,
                int64_t samples = -1) {
  return Case("DecodeWav", label)
      .Input(Tensor::FromStrings({}, {wav}))
      .Attr("desired_channels", channels)
      .Attr("desired_samples", samples);
}

PX_CONFORMANCE_CASES("DecodeWav")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype != DataType::kInvalid) return cases;
  // Random stereo samples, the extremes included.
  std::uniform_int_distribution<int> u(-32768, 32767);
  std::vector<int16_t> samples = {0, 1, -1, 32767, -32768, 16384};
  while (samples.size() < 2 * 300) samples.push_back(static_cast<int16_t>(u(ctx.rng)));
  const std::string stereo = Wav(samples, 2, 22050);
  cases.push_back(DecodeCase("stereo, as in the file", stereo));
  // Fewer channels drop the extra ones, more repeat the last, more samples
  // pad with zeros, fewer truncate.
  cases.push_back(DecodeCase("desired 1 channel, 500 samples (pad)", stereo, 1, 500));
  cases.push_back(DecodeCase("desired 3 channels, 17 samples (truncate)", stereo, 3, 17));
  cases.push_back(DecodeCase("desired 0 samples", stereo, 2, 0));
  // An 18-byte fmt chunk, metadata chunks before "fmt " and unknown chunks
  // after it.
  const std::string data = Chunk("data", Pcm({100, -200, 300}));
  cases.push_back(DecodeCase("18-byte fmt chunk", Riff(Fmt(1, 8000, 16, 1, true) + data)));
  cases.push_back(DecodeCase("metadata and unknown chunks",
                             Riff(Chunk("JUNK", std::string(6, 'j')) + Chunk("bext", "") +
                                  Fmt(1, 8000) + Chunk("LIST", "abcd") + data +
                                  Chunk("foo ", "xy"))));
  cases.push_back(DecodeCase("zero frames", Riff(Fmt(1, 8000) + Chunk("data", ""))));

  // Malformed files: only the kernel, reading the bytes, can refuse them.
  const std::string fmt = Fmt(1, 16000);
  const std::string good = Riff(fmt + Chunk("data", Pcm({1, 2, 3, 4})));
  std::string bad_riff = good;
  bad_riff[0] = 'X';
  const std::string long_data = Riff(fmt + "data" + U32(1000) + Pcm({1, 2}));
  const auto bad = absl::StatusCode::kInvalidArgument;
  cases.push_back(DecodeCase("error: empty contents", "").ExpectError(bad));
  cases.push_back(DecodeCase("error: wrong RIFF tag", bad_riff).ExpectError(bad));
  cases.push_back(
      DecodeCase("error: truncated inside data", good.substr(0, good.size() - 1)).ExpectError(bad));
  cases.push_back(
      DecodeCase("error: 8 bits per sample", Riff(Fmt(1, 16000, 8) + Chunk("data", Pcm({1}))))
          .ExpectError(bad));
  cases.push_back(DecodeCase("error: no data chunk", Riff(fmt)).ExpectError(bad));
  cases.push_back(DecodeCase("error: data chunk longer than the file", long_data).ExpectError(bad));
  return cases;
}

// ---------------------------------------------------------------------------
// AudioSpectrogram
// ---------------------------------------------------------------------------

// [samples, channels] float audio; channel c is a sine of freqs[c] Hz at
// 16 kHz plus uniform noise of amplitude `noise`.
Tensor SineAudio(int64_t samples, const std::vector<double>& freqs, double noise,
                 std::mt19937& rng) {
  const int64_t channels = static_cast<int64_t>(freqs.size());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(samples * channels);
  for (int64_t s = 0; s < samples; ++s) {
    for (int64_t c = 0; c < channels; ++c) {
      v[s * channels + c] = 0.6 * std::sin(2 * kPi * freqs[c] * s / 16000.0) + noise * u(rng);
    }
  }
  return MakeTensor(DataType::kFloat, {samples, channels}, v);
}

Case SpectrogramCase(const std::string& label, Tensor audio, int64_t window, int64_t stride,
                     bool squared) {
  return Case("AudioSpectrogram", label)
      .Input(std::move(audio))
      .Attr("window_size", window)
      .Attr("stride", stride)
      .Attr("magnitude_squared", squared);
}

PX_CONFORMANCE_CASES("AudioSpectrogram")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype != DataType::kInvalid) return cases;
  std::mt19937& rng = ctx.rng;
  // The kws settings (window 640, stride 320, squared magnitudes).
  cases.push_back(SpectrogramCase("kws: window 640 stride 320 squared",
                                  SineAudio(3 * 640 + 11, {1234.5}, 0.05, rng), 640, 320, true));
  cases.push_back(SpectrogramCase("two channels, window 256 stride 128",
                                  SineAudio(3 * 256 + 11, {440, 3000}, 0.05, rng), 256, 128,
                                  false));
  cases.push_back(SpectrogramCase("three channels, window 100 (not a power of 2) stride 37",
                                  SineAudio(311, {440, 1234.5, 3000}, 0.05, rng), 100, 37, true));
  cases.push_back(SpectrogramCase("stride above the window: 5 and 7",
                                  RandomTensor(DataType::kFloat, {40, 1}, rng, -1, 1), 5, 7,
                                  false));
  cases.push_back(SpectrogramCase("smallest window (fft length 2)",
                                  RandomTensor(DataType::kFloat, {9, 2}, rng, -1, 1), 2, 1, true));
  cases.push_back(SpectrogramCase("exactly one window",
                                  RandomTensor(DataType::kFloat, {100, 1}, rng, -1, 1), 100, 10,
                                  false));
  cases.push_back(SpectrogramCase("too short for a window: no frames",
                                  RandomTensor(DataType::kFloat, {99, 1}, rng, -1, 1), 100, 10,
                                  false));
  cases.push_back(SpectrogramCase("zero-size: no channels",
                                  RandomTensor(DataType::kFloat, {50, 0}, rng, -1, 1), 16, 4,
                                  false));
  return cases;
}

// ---------------------------------------------------------------------------
// Mfcc
// ---------------------------------------------------------------------------

Tensor Int32Scalar(int32_t v) { return IntTensor(DataType::kInt32, {}, {v}); }

Case MfccCase(const std::string& label, Tensor spectrogram, int32_t sample_rate, float lower,
              float upper, int64_t bank, int64_t dct) {
  return Case("Mfcc", label)
      .Input(std::move(spectrogram))
      .Input(Int32Scalar(sample_rate))
      .Attr("lower_frequency_limit", lower)
      .Attr("upper_frequency_limit", upper)
      .Attr("filterbank_channel_count", bank)
      .Attr("dct_coefficient_count", dct);
}

PX_CONFORMANCE_CASES("Mfcc")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype != DataType::kInvalid) return cases;
  auto spec = [&](int64_t channels, int64_t frames, int64_t bins) {
    return RandomTensor(DataType::kFloat, {channels, frames, bins}, ctx.rng, 0, 4);
  };
  cases.push_back(MfccCase("the defaults, 513 bins", spec(1, 3, 513), 16000, 20, 4000, 40, 13));
  cases.push_back(MfccCase("kws: 10 coefficients, 2 channels", spec(2, 2, 513), 16000, 20, 4000,
                           40, 10));
  cases.push_back(MfccCase("every coefficient", spec(1, 4, 257), 16000, 20, 4000, 40, 40));
  cases.push_back(MfccCase("upper limit at Nyquist", spec(3, 4, 129), 8000, 0, 4000, 20, 13));
  cases.push_back(MfccCase("44.1 kHz, narrow bands", spec(1, 2, 1025), 44100, 300, 8000, 26, 12));
  cases.push_back(MfccCase("too many bands: some empty", spec(3, 4, 65), 16000, 20, 4000, 40, 13));
  cases.push_back(MfccCase("upper limit past Nyquist gives zeros", spec(1, 4, 129), 8000, 20,
                           5000, 40, 13));
  cases.push_back(MfccCase("2 bins, 1 band", spec(2, 3, 2), 16000, 20, 4000, 1, 1));
  cases.push_back(MfccCase("zero-size: no frames", spec(2, 0, 257), 16000, 20, 4000, 40, 13));
  cases.push_back(MfccCase("all-zero spectrum: the floored log",
                           MakeTensor(DataType::kFloat, {1, 3, 257}, std::vector<double>(771, 0)),
                           16000, 20, 4000, 40, 13));

  // The sample rate is a value the kernel reads; the bin count and the
  // frequency limits are checked by the kernel too.
  const auto bad = absl::StatusCode::kInvalidArgument;
  cases.push_back(
      MfccCase("error: sample_rate 0", spec(1, 4, 129), 0, 20, 4000, 40, 13).ExpectError(bad));
  cases.push_back(MfccCase("error: negative sample_rate", spec(1, 4, 129), -8000, 20, 4000, 40, 13)
                      .ExpectError(bad));
  cases.push_back(
      MfccCase("error: one frequency bin", spec(1, 4, 1), 16000, 20, 4000, 40, 13).ExpectError(bad));
  cases.push_back(MfccCase("error: upper limit not above the lower", spec(1, 4, 129), 16000, 4000,
                           4000, 40, 13)
                      .ExpectError(bad));
  cases.push_back(MfccCase("error: negative lower limit", spec(1, 4, 129), 16000, -1, 4000, 40, 13)
                      .ExpectError(bad));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance
