// PyTorch's tensor repr (torch/_tensor_str.py, default print options: precision 4,
// threshold 1000, edgeitems 3, linewidth 80), rebuilt over a host copy of the elements.
#include "ferrite/print.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

namespace ferrite {
namespace {

constexpr int kPrecision = 4;
constexpr std::int64_t kThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;
constexpr std::int64_t kLineWidth = 80;

/// The host copy of the elements, read as printable numbers on demand (only the printed
/// ones are ever converted): integers and Bool exactly (an I64 may not fit a double),
/// floating values as double, complex values as two doubles.
class HostElements {
 public:
  explicit HostElements(const Tensor& t) : dtype_(t.dtype()), bytes_(t.to_bytes()) {}  // copies from a GPU

  bool integral() const { return is_integral(dtype_) || dtype_ == DType::Bool; }
  std::int64_t integer(std::int64_t i) const {
    switch (dtype_) {
      case DType::I32: return load<std::int32_t>(i);
      case DType::I64: return load<std::int64_t>(i);
      default: return bytes_[static_cast<std::size_t>(i)] != 0;  // Bool
    }
  }
  double real(std::int64_t i) const {
    switch (dtype_) {
      case DType::F32: return load<float>(i);
      case DType::F64: return load<double>(i);
      case DType::F16: return static_cast<float>(load<Half>(i));
      case DType::BF16: return static_cast<float>(load<BFloat16>(i));
      case DType::C64: return load<std::complex<float>>(i).real();
      case DType::C128: return load<std::complex<double>>(i).real();
      default: return static_cast<double>(integer(i));
    }
  }
  double imag(std::int64_t i) const {
    if (dtype_ == DType::C64) return load<std::complex<float>>(i).imag();
    if (dtype_ == DType::C128) return load<std::complex<double>>(i).imag();
    return 0;
  }

 private:
  template <class T>
  T load(std::int64_t i) const {
    T v;
    std::memcpy(&v, bytes_.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    return v;
  }

  DType dtype_;
  std::vector<std::uint8_t> bytes_;
};

/// Python's "{:.Nf}" / "{:.Ne}": printf, except that a NaN is always "nan" (printf may
/// write "-nan").
std::string format_number(double v, char conversion, int precision) {
  if (std::isnan(v)) return "nan";
  char buffer[400];  // %.4f of the largest double has 309 digits before the point
  const char format[] = {'%', '.', '*', conversion, '\0'};
  std::snprintf(buffer, sizeof buffer, format, precision, v);
  return buffer;
}

/// torch's _Formatter: picks integer, fixed or scientific notation and the common width
/// from the elements that will be printed.
class Formatter {
 public:
  /// Floating values.
  explicit Formatter(const std::vector<double>& values) : floating_(true) {
    std::vector<double> finite;
    for (double v : values)
      if (std::isfinite(v) && v != 0) finite.push_back(v);
    if (finite.empty()) return;
    double lo = std::abs(finite[0]), hi = lo;
    for (double v : finite) {
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    const bool wide = hi / lo > 1000.0 || hi > 1.0e8;
    sci_mode_ = int_mode_ ? wide : (wide || lo < 1.0e-4);
    for (double v : finite) {
      std::size_t len;
      if (sci_mode_)
        len = format_number(v, 'e', kPrecision).size();
      else if (int_mode_)
        len = format_number(v, 'f', 0).size() + 1;
      else
        len = format_number(v, 'f', kPrecision).size();
      width_ = std::max(width_, len);
    }
  }
  /// Integer or Bool values.
  Formatter(const std::vector<std::int64_t>& values, bool boolean) : boolean_(boolean) {
    for (std::int64_t v : values) width_ = std::max(width_, plain(v).size());
  }

  std::size_t width() const { return width_; }
  std::string format(double v) const {
    std::string text;
    if (sci_mode_) {
      text = format_number(v, 'e', kPrecision);
    } else if (int_mode_) {
      text = format_number(v, 'f', 0);
      if (std::isfinite(v)) text += ".";
    } else {
      text = format_number(v, 'f', kPrecision);
    }
    return pad(text);
  }
  std::string format(std::int64_t v) const { return pad(plain(v)); }

 private:
  std::string plain(std::int64_t v) const { return boolean_ ? (v ? "True" : "False") : std::to_string(v); }
  std::string pad(const std::string& text) const {
    return text.size() >= width_ ? text : std::string(width_ - text.size(), ' ') + text;
  }

  bool floating_ = false, boolean_ = false, int_mode_ = true, sci_mode_ = false;
  std::size_t width_ = 1;
};

class Printer {
 public:
  Printer(const Tensor& t, const HostElements& e) : shape_(t.shape()), e_(e), summarize_(t.numel() > kThreshold) {
    std::vector<std::int64_t> shown;
    collect(0, 0, shown);
    if (e.integral()) {
      std::vector<std::int64_t> v;
      for (auto i : shown) v.push_back(e.integer(i));
      f1_.emplace_back(v, t.dtype() == DType::Bool);
    } else {
      std::vector<double> re, im;
      for (auto i : shown) re.push_back(e.real(i));
      f1_.emplace_back(re);
      if (is_complex(t.dtype())) {
        for (auto i : shown) im.push_back(e.imag(i));
        f2_.emplace_back(im);
      }
    }
  }

  /// _tensor_str_with_formatter for the sub-tensor of dims [d, rank) at flat offset `base`.
  std::string str(std::size_t d, std::int64_t base, std::int64_t indent) const {
    if (shape_.empty()) return element(0);
    if (d + 1 == shape_.size()) return vector_str(base, indent);
    const std::int64_t n = shape_[d], stride = stride_after(d);
    std::vector<std::string> slices;
    for (std::int64_t i : items(n)) slices.push_back(i < 0 ? "..." : str(d + 1, base + i * stride, indent + 1));
    const std::size_t rest = shape_.size() - d;  // the sub-tensor's rank
    std::string sep = ",";
    sep.append(rest - 1, '\n');
    sep.append(static_cast<std::size_t>(indent + 1), ' ');
    return bracket(join(slices, sep));
  }

 private:
  std::int64_t stride_after(std::size_t d) const {
    std::int64_t s = 1;
    for (std::size_t k = d + 1; k < shape_.size(); ++k) s *= shape_[k];
    return s;
  }
  /// The indices printed along a dim of size n; -1 marks the "..." of a summary.
  std::vector<std::int64_t> items(std::int64_t n) const {
    std::vector<std::int64_t> out;
    if (summarize_ && n > 2 * kEdgeItems) {
      for (std::int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
      out.push_back(-1);
      for (std::int64_t i = n - kEdgeItems; i < n; ++i) out.push_back(i);
    } else {
      for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    }
    return out;
  }
  /// torch's get_summarized_data, as flat indices: the elements the formatter sizes.
  void collect(std::size_t d, std::int64_t base, std::vector<std::int64_t>& out) const {
    if (d == shape_.size()) {
      out.push_back(base);
      return;
    }
    for (std::int64_t i : items(shape_[d]))
      if (i >= 0) collect(d + 1, base + i * stride_after(d), out);
  }
  std::string element(std::int64_t flat) const {
    if (e_.integral()) return f1_[0].format(e_.integer(flat));
    std::string text = f1_[0].format(e_.real(flat));
    if (f2_.empty()) return text;
    // torch's _scalar_str: the imaginary part without its padding, a sign always shown.
    std::string imag = f2_[0].format(e_.imag(flat)) + "j";
    imag.erase(0, imag.find_first_not_of(' '));
    return text + (imag[0] == '-' || imag[0] == '+' ? "" : "+") + imag;
  }
  std::string vector_str(std::int64_t base, std::int64_t indent) const {
    std::int64_t element_length = static_cast<std::int64_t>(f1_[0].width()) + 2;
    if (!f2_.empty()) element_length += static_cast<std::int64_t>(f2_[0].width()) + 1;
    const std::int64_t per_line = std::max<std::int64_t>(1, (kLineWidth - indent) / element_length);
    std::vector<std::string> data;
    for (std::int64_t i : items(shape_.back())) data.push_back(i < 0 ? " ..." : element(base + i));
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < data.size(); i += static_cast<std::size_t>(per_line)) {
      const auto end = std::min(data.size(), i + static_cast<std::size_t>(per_line));
      lines.push_back(join({data.begin() + static_cast<std::ptrdiff_t>(i), data.begin() + static_cast<std::ptrdiff_t>(end)}, ", "));
    }
    return bracket(join(lines, ",\n" + std::string(static_cast<std::size_t>(indent + 1), ' ')));
  }
  // Appends in place: GCC 12's -Wrestrict misfires on "[" + text + "]" and "," + text.
  static std::string bracket(const std::string& inner) {
    std::string out;
    out.reserve(inner.size() + 2);
    out += '[';
    out += inner;
    out += ']';
    return out;
  }
  static std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
    return out;
  }

  const Shape& shape_;
  const HostElements& e_;
  bool summarize_;
  std::vector<Formatter> f1_, f2_;  // real (or only) part; imaginary part of complex values
};

/// torch's _add_suffixes: ", suffix" on the same line while it fits in 80 columns.
std::string add_suffixes(const std::string& text, const std::vector<std::string>& suffixes, std::size_t indent) {
  std::string out = text;
  const auto newline = text.rfind('\n');
  // Python's len - rfind + 1, where rfind is -1 without a newline.
  std::int64_t last = static_cast<std::int64_t>(text.size()) -
                      (newline == std::string::npos ? -1 : static_cast<std::int64_t>(newline)) + 1;
  for (const std::string& suffix : suffixes) {
    const auto len = static_cast<std::int64_t>(suffix.size());
    if (last + len + 2 > kLineWidth) {
      out += ",\n" + std::string(indent, ' ') + suffix;
      last = static_cast<std::int64_t>(indent) + len;
    } else {
      out += ", " + suffix;
      last += len + 2;
    }
  }
  return out + ")";
}

}  // namespace

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  std::vector<std::string> suffixes;
  if (!t.device().is_cpu() || t.device().index != 0) suffixes.push_back("device='" + t.device().str() + "'");
  std::string body;
  if (t.numel() == 0) {
    // As torch (and NumPy): the shape is shown unless it is [0].
    if (t.dim() != 1) {
      std::string size = "size=(";
      for (std::int64_t d = 0; d < t.dim(); ++d) size += (d ? ", " : "") + std::to_string(t.shape()[static_cast<std::size_t>(d)]);
      suffixes.push_back(size + (t.dim() == 1 ? ",)" : ")"));
    }
    body = "[]";
  } else {
    const HostElements elements(t);
    body = Printer(t, elements).str(0, 0, static_cast<std::int64_t>(prefix.size()));
  }
  if (t.dtype() != DType::F32) suffixes.push_back("dtype=" + std::string(dtype_name(t.dtype())));
  return add_suffixes(prefix + body, suffixes, prefix.size());
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }
std::ostream& operator<<(std::ostream& os, DType dtype) {
  return os << (is_valid_dtype(dtype) ? std::string(dtype_name(dtype)) : "DType(" + std::to_string(static_cast<int>(dtype)) + ")");
}
std::ostream& operator<<(std::ostream& os, Device device) { return os << device.str(); }
std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape_str(shape); }

}  // namespace ferrite
