#include "kernels/conv/conv_spec.hpp"

#include "scaleproof/params.hpp"

namespace sp::conv {

void validate(const ConvSpec& s, int h, int w, const std::string& who) {
  auto fail = [&](const std::string& m) { throw InputError(who + ": " + m); };
  if (s.c_in <= 0 || s.c_out <= 0) fail("channels must be > 0");
  if (s.kh <= 0 || s.kw <= 0) fail("kernel size must be > 0");
  if (h <= 0 || w <= 0) fail("input height and width must be > 0");
  if (s.stride <= 0) fail("stride must be > 0 (got " + std::to_string(s.stride) + ")");
  if (s.pad_h < 0 || s.pad_w < 0)
    fail("padding must be >= 0 (got " + std::to_string(s.pad_h < 0 ? s.pad_h : s.pad_w) + ")");
  if (s.groups <= 0) fail("groups must be > 0");
  if (s.c_in % s.groups != 0 || s.c_out % s.groups != 0)
    fail("groups=" + std::to_string(s.groups) + " does not divide C_in=" + std::to_string(s.c_in) +
         " and C_out=" + std::to_string(s.c_out));
  if (s.kh > h + 2 * s.pad_h || s.kw > w + 2 * s.pad_w)
    fail("kernel " + std::to_string(s.kh) + "x" + std::to_string(s.kw) + " is larger than the padded input " +
         std::to_string(h + 2 * s.pad_h) + "x" + std::to_string(w + 2 * s.pad_w));
}

std::string describe(const ConvSpec& s) {
  std::string d =
      std::to_string(s.kh) + "x" + std::to_string(s.kw) + " " + std::to_string(s.c_in) + "->" + std::to_string(s.c_out);
  if (s.stride != 1) d += " s" + std::to_string(s.stride);
  if (s.pad_h || s.pad_w)
    d += " p" + std::to_string(s.pad_h) + (s.pad_w != s.pad_h ? "," + std::to_string(s.pad_w) : "");
  if (s.groups != 1) d += " g" + std::to_string(s.groups);
  if (s.bias) d += " +b";
  if (s.act != Act::none) d += std::string(" ") + to_string(s.act);
  return d;
}

}  // namespace sp::conv
