#include "devices/variant.h"

#include <utility>

namespace plexus {
namespace {

// What a variant tensor's buffer points at.
struct Holder {
  std::shared_ptr<const VariantValue> value;
};

}  // namespace

Tensor MakeVariantTensor(std::shared_ptr<const VariantValue> value) {
  auto* holder = new Holder{std::move(value)};
  auto buffer = std::make_shared<Buffer>(holder, 0, nullptr, [](void* p) { delete static_cast<Holder*>(p); });
  return Tensor(DataType::kVariant, Shape{}, std::move(buffer));
}

const VariantValue* GetVariant(const Tensor& t) {
  if (t.dtype() != DataType::kVariant || t.buffer() == nullptr || t.raw_data() == nullptr) return nullptr;
  return static_cast<const Holder*>(t.raw_data())->value.get();
}

VariantValue* UniqueVariant(Tensor& t) {
  if (GetVariant(t) == nullptr || t.buffer().use_count() != 1) return nullptr;
  auto* holder = static_cast<Holder*>(t.raw_data());
  if (holder->value.use_count() != 1) return nullptr;
  return const_cast<VariantValue*>(holder->value.get());
}

}  // namespace plexus
