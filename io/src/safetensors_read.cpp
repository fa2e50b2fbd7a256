// The strict safetensors reader (see safetensors.hpp for what it rejects).
#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "text.hpp"
#include "vla/io/dtype_convert.hpp"
#include "vla/io/safetensors.hpp"

static_assert(std::endian::native == std::endian::little, "the byte decoding assumes a little-endian host");

namespace vla::io {

namespace {

using json = nlohmann::json;

struct Entry {
  Tensor tensor;
  std::uint64_t begin = 0, end = 0;
};

class Parser {
 public:
  Parser(std::span<const std::uint8_t> bytes, std::string_view source) : bytes_(bytes), source_(source) {}

  File run() {
    if (bytes_.size() < 8) fail("file is truncated: " + std::to_string(bytes_.size()) + " bytes, but the header length alone takes 8");
    std::uint64_t n = 0;
    std::memcpy(&n, bytes_.data(), 8);
    if (n > kMaxHeaderBytes) fail("header length " + std::to_string(n) + " is absurd (limit " + std::to_string(kMaxHeaderBytes) + " bytes)");
    if (n > bytes_.size() - 8) {
      fail("header length " + std::to_string(n) + " exceeds the " + std::to_string(bytes_.size() - 8) + " bytes that follow it (file truncated?)");
    }
    const json header = parse_header(bytes_.subspan(8, n));
    buffer_ = bytes_.subspan(8 + n);

    File file;
    std::vector<Entry> entries;
    for (const auto& [key, value] : header.items()) {
      if (key == "__metadata__") {
        file.metadata = parse_metadata(value);
      } else {
        entries.push_back(parse_entry(key, value));
      }
    }
    check_layout(entries);
    for (auto& e : entries) {
      decode(e);
      file.tensors.push_back(std::move(e.tensor));
    }
    return file;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw FormatError(std::string(source_) + ": " + what); }
  [[noreturn]] void fail_tensor(const std::string& name, const std::string& what) const {
    fail("tensor '" + printable(name) + "': " + what);
  }

  // Parses the header, catching duplicate keys (nlohmann keeps the last one silently).
  json parse_header(std::span<const std::uint8_t> text) const {
    struct Frame {
      std::set<std::string> keys;
      std::string owner, last_key;
    };
    std::vector<Frame> stack;
    std::string duplicate;
    auto cb = [&](int, json::parse_event_t ev, json& parsed) {
      if (ev == json::parse_event_t::object_start) {
        stack.push_back({{}, stack.empty() ? std::string() : stack.back().last_key, {}});
      } else if (ev == json::parse_event_t::object_end) {
        if (!stack.empty()) stack.pop_back();
      } else if (ev == json::parse_event_t::key && !stack.empty()) {
        Frame& f = stack.back();
        f.last_key = parsed.get<std::string>();
        if (!f.keys.insert(f.last_key).second && duplicate.empty()) {
          const std::string k = "'" + printable(f.last_key) + "'";
          duplicate = stack.size() == 1   ? "duplicate tensor name " + k
                      : f.owner == "__metadata__" ? "duplicate metadata key " + k
                                        : "duplicate field " + k + " in the entry of '" + printable(f.owner) + "'";
        }
      }
      return true;
    };
    // JSON text has no raw NUL (inside strings it is escaped): the parser would stop at one and ignore what follows.
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == 0) fail("header holds a NUL byte at offset " + std::to_string(8 + i) + " (not JSON text)");
    json j;
    try {
      j = json::parse(text.begin(), text.end(), cb);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
      fail("header is not valid JSON / UTF-8: " + printable(e.what()));
    }
    if (!duplicate.empty()) fail(duplicate);
    if (!j.is_object()) fail(std::string("header must be a JSON object, got ") + j.type_name());
    return j;
  }

  Metadata parse_metadata(const json& v) const {
    if (!v.is_object()) fail(std::string("'__metadata__' must be an object of strings, got ") + v.type_name());
    Metadata m;
    for (const auto& [k, x] : v.items()) {
      if (!x.is_string()) fail("metadata '" + printable(k) + "' must be a string, got " + x.type_name());
      m[k] = x.get<std::string>();
    }
    return m;
  }

  std::uint64_t unsigned_field(const std::string& name, const char* field, const json& x) const {
    if (x.is_number_unsigned()) return x.get<std::uint64_t>();
    if (x.is_number_integer()) fail_tensor(name, std::string(field) + " holds a negative value " + x.dump());
    if (x.is_number_float()) fail_tensor(name, std::string(field) + " holds a non-integer value " + x.dump());
    fail_tensor(name, std::string(field) + " must hold non-negative integers, got " + x.type_name());
  }

  Entry parse_entry(const std::string& name, const json& v) const {
    if (!v.is_object()) fail_tensor(name, std::string("entry must be an object, got ") + v.type_name());
    for (const auto& [k, x] : v.items()) {
      if (k != "dtype" && k != "shape" && k != "data_offsets") fail_tensor(name, "unknown field '" + printable(k) + "'");
    }
    for (const char* f : {"dtype", "shape", "data_offsets"}) {
      if (!v.contains(f)) fail_tensor(name, std::string("missing field '") + f + "'");
    }
    Entry e;
    e.tensor.name = name;
    const json& dt = v["dtype"];
    if (!dt.is_string()) fail_tensor(name, std::string("dtype must be a string, got ") + dt.type_name());
    try {
      e.tensor.dtype = parse_dtype(dt.get<std::string>());
    } catch (const FormatError& err) {
      fail_tensor(name, printable(err.what()));
    }
    const json& sh = v["shape"];
    if (!sh.is_array()) fail_tensor(name, std::string("shape must be an array, got ") + sh.type_name());
    for (const auto& x : sh) e.tensor.shape.push_back(unsigned_field(name, "shape", x));
    const json& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2) fail_tensor(name, "data_offsets must be an array [begin, end]");
    e.begin = unsigned_field(name, "data_offsets", off[0]);
    e.end = unsigned_field(name, "data_offsets", off[1]);
    if (e.begin > e.end) fail_tensor(name, "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] end before they begin");
    if (e.end > buffer_.size()) {
      fail_tensor(name, "data_offsets end " + std::to_string(e.end) + " lies beyond the " + std::to_string(buffer_.size()) + "-byte buffer (file truncated?)");
    }
    // Byte count with an overflow check (a hostile shape must not wrap around to the span).
    const bool empty = std::find(e.tensor.shape.begin(), e.tensor.shape.end(), 0) != e.tensor.shape.end();
    std::uint64_t bytes = empty ? 0 : item_size(e.tensor.dtype);
    for (auto s : e.tensor.shape) {
      if (!empty && bytes > UINT64_MAX / s) fail_tensor(name, "shape " + shape_string(e.tensor.shape) + " is absurd (its byte count overflows 64 bits)");
      bytes *= empty ? 1 : s;
    }
    if (bytes != e.end - e.begin) {
      fail_tensor(name, "shape " + shape_string(e.tensor.shape) + " of " + to_string(e.tensor.dtype) + " needs " + std::to_string(bytes) +
                            " bytes but data_offsets span " + std::to_string(e.end - e.begin));
    }
    return e;
  }

  // The tensors must tile the buffer exactly: no overlap, no hole, nothing after.
  void check_layout(std::vector<Entry>& entries) const {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    std::uint64_t expected = 0;
    const std::string* prev = nullptr;
    for (const auto& e : entries) {
      if (e.begin < expected) fail_tensor(e.tensor.name, "data overlaps tensor '" + printable(*prev) + "'");
      if (e.begin > expected) {
        fail_tensor(e.tensor.name, "leaves a hole: bytes [" + std::to_string(expected) + ", " + std::to_string(e.begin) + ") of the buffer belong to no tensor");
      }
      expected = e.end;
      prev = &e.tensor.name;
    }
    if (expected != buffer_.size()) {
      fail(std::to_string(buffer_.size() - expected) + " trailing bytes after the last tensor's data");
    }
  }

  void decode(Entry& e) const {
    const std::uint8_t* p = buffer_.data() + e.begin;
    const std::size_t n = (e.end - e.begin) / item_size(e.tensor.dtype);
    auto& out = e.tensor.values;
    out.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      switch (e.tensor.dtype) {
        case DType::F64: std::memcpy(&out[i], p + 8 * i, 8); break;
        case DType::F32: {
          float f;
          std::memcpy(&f, p + 4 * i, 4);
          out[i] = f;
          break;
        }
        case DType::BF16:
        case DType::F16: {
          std::uint16_t b;
          std::memcpy(&b, p + 2 * i, 2);
          out[i] = e.tensor.dtype == DType::BF16 ? bf16_bits_to_double(b) : f16_bits_to_double(b);
          break;
        }
      }
    }
  }

  std::span<const std::uint8_t> bytes_;
  std::span<const std::uint8_t> buffer_;
  std::string_view source_;
};

}  // namespace

File parse_safetensors(std::span<const std::uint8_t> bytes, std::string_view source) { return Parser(bytes, source).run(); }

File read_safetensors(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw FormatError(path.string() + ": is a folder, not a safetensors file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path.string() + ": cannot open for reading (" + std::strerror(errno) + ")");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw FormatError(path.string() + ": read error");
  return parse_safetensors(bytes, path.string());
}

}  // namespace vla::io
