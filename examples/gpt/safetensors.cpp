// safetensors: the JSON header is written by hand and read by a minimal parser that accepts
// what the format uses (objects, strings, arrays of integers).
#include "examples/gpt/safetensors.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ferrite::gpt {

namespace {

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypes[] = {{DType::F32, "F32"}, {DType::F64, "F64"}, {DType::F16, "F16"},
                                 {DType::BF16, "BF16"}, {DType::I64, "I64"}, {DType::I32, "I32"}};

const char* st_dtype_name(DType dtype) {
  for (const DTypeName& entry : kDTypes)
    if (entry.dtype == dtype) return entry.name;
  FERRITE_THROW(Unsupported, "safetensors: dtype ", static_cast<int>(dtype), " is not written");
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(ch));
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// ---- the reader's JSON subset ----
struct Json {
  enum class Kind { String, Number, Array, Object } kind = Kind::String;
  std::string text;                                 // String; Number's literal
  std::vector<Json> items;                          // Array
  std::vector<std::pair<std::string, Json>> members;  // Object
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  Json parse_document() {
    Json value = parse_value();
    skip_space();
    check(pos_ == text_.size(), "trailing characters after the header object");
    return value;
  }

 private:
  void check(bool ok, const char* what) const {
    FERRITE_CHECK(ok, InvalidArgument, "safetensors: ", path_, ": malformed header (", what, " at byte ", pos_, ")");
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }
  char peek() {
    skip_space();
    check(pos_ < text_.size(), "unexpected end");
    return text_[pos_];
  }
  void expect(char ch) {
    check(peek() == ch, "unexpected character");
    ++pos_;
  }
  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      check(pos_ < text_.size(), "unterminated string");
      const char ch = text_[pos_++];
      if (ch == '"') return out;
      if (ch != '\\') {
        out += ch;
        continue;
      }
      check(pos_ < text_.size(), "unterminated escape");
      const char esc = text_[pos_++];
      switch (esc) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          check(pos_ + 4 <= text_.size(), "short \\u escape");
          const unsigned code = static_cast<unsigned>(std::stoul(text_.substr(pos_, 4), nullptr, 16));
          pos_ += 4;
          // Only what our writer emits (control characters) and ASCII; wider code points as UTF-8.
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default: out += esc;
      }
    }
  }
  Json parse_value() {
    const char ch = peek();
    Json value;
    if (ch == '"') {
      value.kind = Json::Kind::String;
      value.text = parse_string();
    } else if (ch == '[') {
      value.kind = Json::Kind::Array;
      ++pos_;
      if (peek() == ']') {
        ++pos_;
        return value;
      }
      while (true) {
        value.items.push_back(parse_value());
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect(']');
        return value;
      }
    } else if (ch == '{') {
      value.kind = Json::Kind::Object;
      ++pos_;
      if (peek() == '}') {
        ++pos_;
        return value;
      }
      while (true) {
        std::string key = parse_string();
        expect(':');
        value.members.emplace_back(std::move(key), parse_value());
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect('}');
        return value;
      }
    } else {
      value.kind = Json::Kind::Number;
      const std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
                                     text_[pos_] == '+' || text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E'))
        ++pos_;
      check(pos_ > start, "expected a value");
      value.text = text_.substr(start, pos_ - start);
    }
    return value;
  }

  const std::string& text_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::uint64_t to_uint(const Json& value, const std::string& path) {
  FERRITE_CHECK(value.kind == Json::Kind::Number && !value.text.empty() &&
                    value.text.find_first_not_of("0123456789") == std::string::npos,
                InvalidArgument, "safetensors: ", path, ": expected a non-negative integer, got '", value.text, "'");
  return std::stoull(value.text);
}

}  // namespace

void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  std::ostringstream header;
  header << "{\"__metadata__\":{";
  bool first = true;
  for (const auto& [key, value] : metadata) {
    header << (first ? "" : ",") << json_string(key) << ":" << json_string(value);
    first = false;
  }
  header << "}";
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    header << "," << json_string(name) << ":{\"dtype\":\"" << st_dtype_name(tensor.dtype()) << "\",\"shape\":[";
    for (std::size_t d = 0; d < tensor.shape().size(); ++d) header << (d ? "," : "") << tensor.shape()[d];
    header << "],\"data_offsets\":[" << offset << "," << offset + tensor.nbytes() << "]}";
    offset += tensor.nbytes();
  }
  header << "}";
  std::string text = header.str();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    FERRITE_CHECK(out.good(), InvalidArgument, "checkpoint: cannot write ", tmp);
    const std::uint64_t length = text.size();
    unsigned char length_bytes[8];
    for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<unsigned char>(length >> (8 * i));
    out.write(reinterpret_cast<const char*>(length_bytes), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, tensor] : tensors) {
      const std::vector<std::uint8_t> bytes = tensor.to_bytes();  // little-endian host order
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    out.flush();
    FERRITE_CHECK(out.good(), InvalidArgument, "checkpoint: writing ", tmp, " failed (disk full?)");
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  FERRITE_CHECK(!error, InvalidArgument, "checkpoint: cannot rename ", tmp, " to ", path, ": ", error.message());
}

SafeTensors load_safetensors(const std::string& path, Device device) {
  std::ifstream in(path, std::ios::binary);
  FERRITE_CHECK(in.good(), InvalidArgument, "checkpoint: cannot open ", path);
  in.seekg(0, std::ios::end);
  const std::uint64_t file_size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  FERRITE_CHECK(file_size >= 8, InvalidArgument, "checkpoint: ", path, " is not a safetensors file (", file_size,
                " bytes)");
  unsigned char length_bytes[8];
  in.read(reinterpret_cast<char*>(length_bytes), 8);
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= static_cast<std::uint64_t>(length_bytes[i]) << (8 * i);
  FERRITE_CHECK(length <= file_size - 8, InvalidArgument, "checkpoint: ", path,
                " is not a safetensors file (header length ", length, " past the end)");
  std::string text(length, '\0');
  in.read(text.data(), static_cast<std::streamsize>(length));
  const Json root = Parser(text, path).parse_document();
  FERRITE_CHECK(root.kind == Json::Kind::Object, InvalidArgument, "checkpoint: ", path, ": the header is not an object");
  const std::uint64_t data_start = 8 + length;

  SafeTensors out;
  for (const auto& [name, entry] : root.members) {
    FERRITE_CHECK(entry.kind == Json::Kind::Object, InvalidArgument, "safetensors: ", path, ": '", name,
                  "' is not an object");
    if (name == "__metadata__") {
      for (const auto& [key, value] : entry.members) {
        FERRITE_CHECK(value.kind == Json::Kind::String, InvalidArgument, "safetensors: ", path, ": metadata '", key,
                      "' is not a string");
        out.metadata[key] = value.text;
      }
      continue;
    }
    const Json* dtype = nullptr;
    const Json* shape = nullptr;
    const Json* offsets = nullptr;
    for (const auto& [key, value] : entry.members) {
      if (key == "dtype") dtype = &value;
      if (key == "shape") shape = &value;
      if (key == "data_offsets") offsets = &value;
    }
    FERRITE_CHECK(dtype && shape && offsets && dtype->kind == Json::Kind::String && shape->kind == Json::Kind::Array &&
                      offsets->kind == Json::Kind::Array && offsets->items.size() == 2,
                  InvalidArgument, "safetensors: ", path, ": tensor '", name, "' lacks dtype, shape or data_offsets");
    std::optional<DType> type;
    for (const DTypeName& known : kDTypes)
      if (dtype->text == known.name) type = known.dtype;
    FERRITE_CHECK(type.has_value(), Unsupported, "safetensors: ", path, ": tensor '", name, "' has dtype ", dtype->text,
                  ", which this reader does not load");
    Shape dims;
    for (const Json& dim : shape->items) dims.push_back(static_cast<std::int64_t>(to_uint(dim, path)));
    const std::uint64_t begin = to_uint(offsets->items[0], path), end = to_uint(offsets->items[1], path);
    const std::uint64_t expected = static_cast<std::uint64_t>(shape_numel(dims)) * dtype_size(*type);
    FERRITE_CHECK(begin <= end && end - begin == expected && data_start + end <= file_size, InvalidArgument,
                  "safetensors: ", path, ": tensor '", name, "' has byte range [", begin, ", ", end, ") for ",
                  expected, " bytes of ", shape_str(dims), " ", dtype->text, " in a file of ", file_size, " bytes");
    std::vector<char> bytes(expected);
    in.seekg(static_cast<std::streamoff>(data_start + begin));
    in.read(bytes.data(), static_cast<std::streamsize>(expected));
    FERRITE_CHECK(in.good() || expected == 0, InvalidArgument, "safetensors: ", path, ": reading '", name, "' failed");
    out.tensors[name] = Tensor::from_bytes(bytes.data(), bytes.size(), *type, dims, device);
  }
  return out;
}

}  // namespace ferrite::gpt
