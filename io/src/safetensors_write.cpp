#include <bit>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "vla/io/atomic_file.hpp"
#include "vla/io/dtype_convert.hpp"
#include "vla/io/safetensors.hpp"

static_assert(std::endian::native == std::endian::little, "the byte encoding assumes a little-endian host");

namespace vla::io {

namespace {

std::uint64_t checked_numel(const Tensor& t) {
  std::uint64_t n = 1;
  for (auto s : t.shape) {
    if (s != 0 && n > UINT64_MAX / s) throw std::invalid_argument("tensor '" + t.name + "': shape overflows");
    n *= s;
  }
  return n;
}

void append_value(std::vector<std::uint8_t>& out, DType d, double x) {
  std::uint8_t b[8];
  switch (d) {
    case DType::F64: std::memcpy(b, &x, 8); break;
    case DType::F32: {
      const float f = static_cast<float>(x);  // RNE
      std::memcpy(b, &f, 4);
      break;
    }
    case DType::BF16: {
      const std::uint16_t h = bf16_bits_from_double(x);
      std::memcpy(b, &h, 2);
      break;
    }
    case DType::F16: throw std::invalid_argument("writing F16 is not supported");
  }
  out.insert(out.end(), b, b + item_size(d));
}

}  // namespace

std::vector<std::uint8_t> encode_safetensors(const std::vector<Tensor>& tensors, const Metadata& metadata) {
  nlohmann::json header = nlohmann::json::object();
  std::set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.name == "__metadata__") throw std::invalid_argument("'__metadata__' is reserved and cannot name a tensor");
    if (!names.insert(t.name).second) throw std::invalid_argument("duplicate tensor name '" + t.name + "'");
    if (t.dtype == DType::F16) throw std::invalid_argument("tensor '" + t.name + "': writing F16 is not supported");
    if (checked_numel(t) != t.values.size()) {
      throw std::invalid_argument("tensor '" + t.name + "': shape holds " + std::to_string(checked_numel(t)) + " elements but " +
                                  std::to_string(t.values.size()) + " values were given");
    }
    const std::uint64_t bytes = t.values.size() * item_size(t.dtype);
    header[t.name] = {{"dtype", to_string(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  // Invalid UTF-8 in a name or metadata makes dump() throw; report it as bad input.
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::type_error& e) {
    throw std::invalid_argument(std::string("cannot encode the header: ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // pad so that the data starts 8-byte aligned

  std::vector<std::uint8_t> out;
  out.reserve(8 + text.size() + offset);
  out.resize(8 + text.size());
  const std::uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  for (const auto& t : tensors)
    for (double x : t.values) append_value(out, t.dtype, x);
  return out;
}

void write_safetensors(const std::filesystem::path& path, const std::vector<Tensor>& tensors, const Metadata& metadata, bool overwrite) {
  write_file_atomically(path, encode_safetensors(tensors, metadata), overwrite);
}

}  // namespace vla::io
